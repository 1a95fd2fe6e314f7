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
	t.Run("a search of the home finds none", func(t *testing.T) {
		r := w.sh(t, ReadOnly, "grep -rs CANARY ~ | grep -v '^Binary'; true")
		if strings.Contains(r.out, canary) {
			t.Fatalf("the canary reached the output:\n%s", r.out)
		}
	})
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
