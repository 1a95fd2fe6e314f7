package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowserProfilesHidden (web review, finding 2): a sandboxed tool read
// serve's token from a snap Chromium's history. Every browser profile a
// home may hold (snap and flatpak ones, other browsers, beta and dev
// channels) is hidden like the ones of .config/chromium and .mozilla.
func TestBrowserProfilesHidden(t *testing.T) {
	w := newWorld(t)
	files := []string{
		"snap/firefox/common/.mozilla/firefox/x.default/places.sqlite",
		"snap/chromium/common/chromium/Default/History",
		"snap/brave/current/.config/BraveSoftware/Brave-Browser/Default/History",
		".var/app/org.chromium.Chromium/config/chromium/Default/History",
		".var/app/org.mozilla.firefox/.mozilla/firefox/x.default/places.sqlite",
		".var/app/com.google.Chrome/config/google-chrome/Default/History",
		".config/vivaldi/Default/History",
		".config/opera/History",
		".config/epiphany/ephy-history.db",
		".local/share/epiphany/ephy-history.db",
		".librewolf/x.default/places.sqlite",
		".zen/x.default/places.sqlite",
		".floorp/x.default/places.sqlite",
		".waterfox/x.default/places.sqlite",
		".config/chromium-beta/Default/History",
		".config/chromium-dev/Default/History",
		".config/google-chrome-beta/Default/History",
		".config/google-chrome-unstable/Default/History",
		".config/microsoft-edge-beta/Default/History",
		".thunderbird/x.default/logins.json",
		// In the case the disk spells it.
		".config/Vivaldi/Default/History",
		// Third serve review: browsers the table missed, by directory.
		".local/share/qutebrowser/history.sqlite",
		".local/share/qutebrowser/webengine/Cookies",
		".config/falkon/profiles/default/browsedata.db",
		".config/yandex-browser/Default/History",
		".config/thorium/Default/History",
		".cache/google-chrome/Default/Cache/Cache_Data/f_000001",
		"Library/Safari/History.db",
		"Library/Application Support/Arc/User Data/Default/History",
		"Library/Application Support/BraveSoftware/Brave-Browser/Default/History",
		"Library/Application Support/Microsoft Edge/Default/History",
		// And any other browser, found by its databases' names: its
		// whole profile directory is hidden, the sessions and icons
		// beside the database too.
		".config/net.imput.helium/Default/History",
		".config/net.imput.helium/Default/Sessions/Session_13350000000000000",
		".config/net.imput.helium/Default/Favicons",
		".config/some-browser/Local State",
		".config/some-browser/Default/Top Sites",
		"snap/newbrowser/common/newbrowser/Default/History",
		".newfox/x.default/places.sqlite",
		".newfox/x.default/sessionstore-backups/recovery.jsonlz4",
		"Library/Application Support/NewBrowser/Default/History",
		"Library/Application Support/NewBrowser/Default/Shortcuts",
		// A database straight in a shared root: the file is hidden.
		".local/share/History",
	}
	for _, f := range files {
		p := filepath.Join(w.home, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(canary), 0o600))
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			r := w.sh(t, ReadOnly, "cat ~/"+shellQuote(f))
			check(t, escape{want: denied}, r)
		})
	}
	// What is not a browser's stays readable: a file named History
	// outside application data, and the neighbours of a database found
	// straight in a shared root.
	for f, content := range map[string]string{
		"notes/History":                  "plain notes\n",
		".local/share/recently-used.txt": "plain notes\n",
		".config/someapp/settings.json":  "plain notes\n",
	} {
		p := filepath.Join(w.home, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o600))
		t.Run("readable: "+f, func(t *testing.T) {
			r := w.sh(t, ReadOnly, "cat ~/"+shellQuote(f))
			if r.code != 0 || !strings.Contains(r.out, "plain notes") {
				t.Fatalf("exit %d, want it read:\n%s", r.code, r.out)
			}
		})
	}
	t.Run("a search of the home finds none", func(t *testing.T) {
		r := w.sh(t, ReadOnly, "grep -rs CANARY ~ | grep -v '^Binary'; true")
		if strings.Contains(r.out, canary) {
			t.Fatalf("the canary reached the output:\n%s", r.out)
		}
	})
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
