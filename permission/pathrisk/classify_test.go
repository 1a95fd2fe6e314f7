package pathrisk_test

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
)

var env = pathrisk.Env{
	Cwd:       "/home/u/proj",
	Home:      "/home/u",
	UserHomes: map[string]string{"bob": "/home/bob", "u": "/home/u"},
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, want string
		ok              bool
	}{
		{"relative", "src/main.go", "/home/u/proj/src/main.go", true},
		{"dot", ".", "/home/u/proj", true},
		{"dotdot", "../other/x", "/home/u/other/x", true},
		{"dotdot above root", "/../../etc/passwd", "/etc/passwd", true},
		{"double slash", "//etc//passwd", "/etc/passwd", true},
		{"trailing slash", "/tmp/x/", "/tmp/x", true},
		{"tilde", "~", "/home/u", true},
		{"tilde slash", "~/.ssh/id_rsa", "/home/u/.ssh/id_rsa", true},
		{"tilde user", "~bob/.aws/credentials", "/home/bob/.aws/credentials", true},
		{"tilde unknown user", "~mallory/.ssh", "", false},
		{"HOME", "$HOME/.netrc", "/home/u/.netrc", true},
		{"braced HOME", "${HOME}/.netrc", "/home/u/.netrc", true},
		{"HOME alone", "$HOME", "/home/u", true},
		{"other variable", "$HOMEDIR/x", "", false},
		{"empty", "", "", false},
		{"clean absolute", "/usr/bin/env", "/usr/bin/env", true},
		{"dot segment", "/a/./b/../c", "/a/c", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := pathrisk.Canonical(tc.raw, env)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Canonical(%q) = %q, %v; want %q, %v", tc.raw, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestCanonicalUnknownHome(t *testing.T) {
	t.Parallel()
	if _, ok := pathrisk.Canonical("~/.ssh", pathrisk.Env{Cwd: "/p"}); ok {
		t.Error("~ with no home must be unknown")
	}
	if _, ok := pathrisk.Canonical("x", pathrisk.Env{}); ok {
		t.Error("relative path with no cwd must be unknown")
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p, dir string
		want   bool
	}{
		{"/home/u/proj", "/home/u/proj", true},
		{"/home/u/proj/a", "/home/u/proj", true},
		{"/home/u/proj_backup/.env", "/home/u/proj", false},
		{"/home/u/projx", "/home/u/proj", false},
		{"/home/u", "/home/u/proj", false},
		{"/x", "/", true},
		{"", "/", false},
	}
	for _, tc := range tests {
		if got := pathrisk.Within(tc.p, tc.dir); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.p, tc.dir, got, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		facts    pathrisk.PathFacts
		want     risk.Level
		whyHas   string // a word the explanation must contain; "" = no explanation
		noReason bool
	}{
		{name: "read in cwd", facts: pathrisk.PathFacts{Raw: "README.md"}, want: risk.Read, noReason: true},
		{name: "write in cwd", facts: pathrisk.PathFacts{Raw: "src/a.go", Write: true}, want: risk.Write, noReason: true},
		{name: "cwd itself", facts: pathrisk.PathFacts{Raw: "."}, want: risk.Read, noReason: true},
		{name: "read outside cwd", facts: pathrisk.PathFacts{Raw: "/tmp/x"}, want: risk.Write, whyHas: "outside"},
		{name: "write outside cwd", facts: pathrisk.PathFacts{Raw: "/tmp/x", Write: true}, want: risk.Execute, whyHas: "outside"},
		{name: "sibling with shared prefix", facts: pathrisk.PathFacts{Raw: "/home/u/proj_backup/notes.txt"}, want: risk.Write, whyHas: "outside"},
		{name: "sibling .env", facts: pathrisk.PathFacts{Raw: "/home/u/proj_backup/.env"}, want: risk.Credential, whyHas: "environment"},
		{name: "escape by dotdot", facts: pathrisk.PathFacts{Raw: "../../../etc/shadow"}, want: risk.Credential, whyHas: "/etc"},
		{name: "etc passwd", facts: pathrisk.PathFacts{Raw: "/etc/passwd"}, want: risk.Credential, whyHas: "/etc"},
		{name: "etc upper case", facts: pathrisk.PathFacts{Raw: "/ETC/passwd"}, want: risk.Credential},
		{name: "ssh dir", facts: pathrisk.PathFacts{Raw: "~/.ssh"}, want: risk.Credential, whyHas: "SSH"},
		{name: "ssh key", facts: pathrisk.PathFacts{Raw: "~/.ssh/id_ed25519"}, want: risk.Credential},
		{name: "ssh upper case", facts: pathrisk.PathFacts{Raw: "~/.SSH/config"}, want: risk.Credential},
		{name: "ssh via HOME", facts: pathrisk.PathFacts{Raw: "${HOME}/.ssh/id_rsa"}, want: risk.Credential},
		{name: "other user's ssh", facts: pathrisk.PathFacts{Raw: "~bob/.ssh/id_rsa"}, want: risk.Credential},
		{name: "root ssh", facts: pathrisk.PathFacts{Raw: "/root/.ssh/authorized_keys"}, want: risk.Credential},
		{name: "mac ssh", facts: pathrisk.PathFacts{Raw: "/Users/x/.ssh/known_hosts"}, want: risk.Credential},
		{name: "unknown user", facts: pathrisk.PathFacts{Raw: "~mallory/notes"}, want: risk.Credential, whyHas: "home is unknown"},
		{name: "aws", facts: pathrisk.PathFacts{Raw: "~/.aws/credentials"}, want: risk.Credential},
		{name: "gcloud", facts: pathrisk.PathFacts{Raw: "~/.config/gcloud/application_default_credentials.json"}, want: risk.Credential},
		{name: "azure", facts: pathrisk.PathFacts{Raw: "~/.azure/accessTokens.json"}, want: risk.Credential},
		{name: "kube", facts: pathrisk.PathFacts{Raw: "~/.kube/config"}, want: risk.Credential},
		{name: "docker config", facts: pathrisk.PathFacts{Raw: "~/.docker/config.json"}, want: risk.Credential},
		{name: "docker other file", facts: pathrisk.PathFacts{Raw: "~/.docker/daemon.json"}, want: risk.Write},
		{name: "netrc", facts: pathrisk.PathFacts{Raw: "~/.netrc"}, want: risk.Credential},
		{name: "home npmrc", facts: pathrisk.PathFacts{Raw: "~/.npmrc"}, want: risk.Credential},
		{name: "pypirc", facts: pathrisk.PathFacts{Raw: "~/.pypirc"}, want: risk.Credential},
		{name: "git credentials", facts: pathrisk.PathFacts{Raw: "~/.git-credentials"}, want: risk.Credential},
		{name: "gnupg", facts: pathrisk.PathFacts{Raw: "~/.gnupg/private-keys-v1.d/x.key"}, want: risk.Credential},
		{name: "dotenv", facts: pathrisk.PathFacts{Raw: ".env"}, want: risk.Credential},
		{name: "dotenv local", facts: pathrisk.PathFacts{Raw: "config/.env.local"}, want: risk.Credential},
		{name: "dotenv example", facts: pathrisk.PathFacts{Raw: ".env.example"}, want: risk.Read, noReason: true},
		{name: "dotenv upper", facts: pathrisk.PathFacts{Raw: ".ENV"}, want: risk.Credential},
		{name: "envrc read", facts: pathrisk.PathFacts{Raw: "envfile.txt"}, want: risk.Read},
		{name: "rclone config", facts: pathrisk.PathFacts{Raw: "~/.config/rclone/rclone.conf"}, want: risk.Credential, whyHas: "rclone"},
		{name: "maven settings", facts: pathrisk.PathFacts{Raw: "~/.m2/settings.xml"}, want: risk.Credential, whyHas: "Maven"},
		{name: "maven master password", facts: pathrisk.PathFacts{Raw: "~/.m2/settings-security.xml"}, want: risk.Credential},
		{name: "maven repository jar", facts: pathrisk.PathFacts{Raw: "~/.m2/repository/x.jar"}, want: risk.Write},
		{name: "gradle properties", facts: pathrisk.PathFacts{Raw: "~/.gradle/gradle.properties"}, want: risk.Credential},
		{name: "project gradle properties", facts: pathrisk.PathFacts{Raw: "gradle.properties"}, want: risk.Read, noReason: true},
		{name: "cargo credentials", facts: pathrisk.PathFacts{Raw: "~/.cargo/credentials.toml"}, want: risk.Credential},
		{name: "gh hosts", facts: pathrisk.PathFacts{Raw: "~/.config/gh/hosts.yml"}, want: risk.Credential},
		{name: "hub", facts: pathrisk.PathFacts{Raw: "~/.config/hub"}, want: risk.Credential},
		{name: "terraform credentials", facts: pathrisk.PathFacts{Raw: "~/.terraform.d/credentials.tfrc.json"}, want: risk.Credential},
		{name: "vault token", facts: pathrisk.PathFacts{Raw: "~/.vault-token"}, want: risk.Credential},
		{name: "pgpass", facts: pathrisk.PathFacts{Raw: "~/.pgpass"}, want: risk.Credential},
		{name: "my.cnf", facts: pathrisk.PathFacts{Raw: "~/.my.cnf"}, want: risk.Credential},
		{name: "s3cfg", facts: pathrisk.PathFacts{Raw: "~/.s3cfg"}, want: risk.Credential},
		{name: "boto", facts: pathrisk.PathFacts{Raw: "~/.boto"}, want: risk.Credential},
		{name: "1password cli", facts: pathrisk.PathFacts{Raw: "~/.config/op/config"}, want: risk.Credential},
		{name: "password store", facts: pathrisk.PathFacts{Raw: "~/.password-store/x.gpg"}, want: risk.Credential},
		{name: "firefox", facts: pathrisk.PathFacts{Raw: "~/.mozilla/firefox/abc.default/cookies.sqlite"}, want: risk.Credential},
		{name: "chrome linux", facts: pathrisk.PathFacts{Raw: "~/.config/google-chrome/Default/Cookies"}, want: risk.Credential},
		{name: "snap firefox", facts: pathrisk.PathFacts{Raw: "~/snap/firefox/common/.mozilla/firefox/x.default/places.sqlite"}, want: risk.Credential, whyHas: "snap Firefox"},
		{name: "snap chromium", facts: pathrisk.PathFacts{Raw: "~/snap/chromium/common/chromium/Default/History"}, want: risk.Credential},
		{name: "snap brave", facts: pathrisk.PathFacts{Raw: "~/snap/brave/current/.config/BraveSoftware/Brave-Browser/Default/Cookies"}, want: risk.Credential},
		{name: "flatpak app data", facts: pathrisk.PathFacts{Raw: "~/.var/app/org.chromium.Chromium/config/chromium/Default/History"}, want: risk.Credential, whyHas: "flatpak"},
		{name: "flatpak firefox", facts: pathrisk.PathFacts{Raw: "~/.var/app/org.mozilla.firefox/.mozilla/firefox/x.default/places.sqlite"}, want: risk.Credential},
		{name: "vivaldi", facts: pathrisk.PathFacts{Raw: "~/.config/vivaldi/Default/History"}, want: risk.Credential},
		{name: "opera", facts: pathrisk.PathFacts{Raw: "~/.config/opera/History"}, want: risk.Credential},
		{name: "epiphany", facts: pathrisk.PathFacts{Raw: "~/.local/share/epiphany/ephy-history.db"}, want: risk.Credential},
		{name: "librewolf", facts: pathrisk.PathFacts{Raw: "~/.librewolf/x.default/places.sqlite"}, want: risk.Credential},
		{name: "zen", facts: pathrisk.PathFacts{Raw: "~/.zen/x.default/places.sqlite"}, want: risk.Credential},
		{name: "floorp", facts: pathrisk.PathFacts{Raw: "~/.floorp/x.default/places.sqlite"}, want: risk.Credential},
		{name: "waterfox", facts: pathrisk.PathFacts{Raw: "~/.waterfox/x.default/places.sqlite"}, want: risk.Credential},
		{name: "chromium beta", facts: pathrisk.PathFacts{Raw: "~/.config/chromium-beta/Default/History"}, want: risk.Credential},
		{name: "chromium dev", facts: pathrisk.PathFacts{Raw: "~/.config/chromium-dev/Default/History"}, want: risk.Credential},
		{name: "chrome beta", facts: pathrisk.PathFacts{Raw: "~/.config/google-chrome-beta/Default/History"}, want: risk.Credential},
		{name: "chrome unstable", facts: pathrisk.PathFacts{Raw: "~/.config/google-chrome-unstable/Default/History"}, want: risk.Credential},
		{name: "other snap", facts: pathrisk.PathFacts{Raw: "~/snap/hello-world/27/x"}, want: risk.Write},
		{name: "chrome mac", facts: pathrisk.PathFacts{Raw: "~/Library/Application Support/Google/Chrome/Default/Login Data"}, want: risk.Credential},
		{name: "cookies anywhere", facts: pathrisk.PathFacts{Raw: "/tmp/profile/Cookies"}, want: risk.Credential},
		{name: "keychain", facts: pathrisk.PathFacts{Raw: "~/Library/Keychains/login.keychain-db"}, want: risk.Credential},
		{name: "keyring", facts: pathrisk.PathFacts{Raw: "~/.local/share/keyrings/login.keyring"}, want: risk.Credential},
		{name: "proc environ", facts: pathrisk.PathFacts{Raw: "/proc/self/environ"}, want: risk.Credential},
		{name: "proc pid environ", facts: pathrisk.PathFacts{Raw: "/proc/1234/environ"}, want: risk.Credential},
		{name: "proc cpuinfo", facts: pathrisk.PathFacts{Raw: "/proc/cpuinfo"}, want: risk.Write, whyHas: "outside"},
		{name: "private key in repo", facts: pathrisk.PathFacts{Raw: "deploy/id_rsa"}, want: risk.Credential},
		{name: "pem in repo", facts: pathrisk.PathFacts{Raw: "certs/server.pem"}, want: risk.Credential},
		{name: "symlink to ssh", facts: pathrisk.PathFacts{Raw: "link", Resolved: "/home/u/.ssh/id_rsa"}, want: risk.Credential, whyHas: "symbolic link"},
		{name: "symlink out of cwd", facts: pathrisk.PathFacts{Raw: "link", Resolved: "/tmp/other"}, want: risk.Write, whyHas: "outside"},
		{name: "symlink inside cwd", facts: pathrisk.PathFacts{Raw: "link", Resolved: "/home/u/proj/real"}, want: risk.Read, noReason: true},
		{name: "git hook write", facts: pathrisk.PathFacts{Raw: ".git/hooks/pre-commit", Write: true}, want: risk.Execute, whyHas: "hook"},
		{name: "git hook read", facts: pathrisk.PathFacts{Raw: ".git/hooks/pre-commit"}, want: risk.Read},
		{name: "git hook upper", facts: pathrisk.PathFacts{Raw: ".GIT/Hooks/post-checkout", Write: true}, want: risk.Execute},
		{name: "git config write", facts: pathrisk.PathFacts{Raw: ".git/config", Write: true}, want: risk.Credential},
		{name: "git config read", facts: pathrisk.PathFacts{Raw: ".git/config"}, want: risk.Credential, whyHas: "extraheader"},
		// Any write in a git directory: a broken HEAD sends git to a
		// directory the model filled, an index entry names any file.
		{name: "git object write", facts: pathrisk.PathFacts{Raw: ".git/objects/ab/cd", Write: true}, want: risk.Execute, whyHas: "which repository"},
		{name: "git HEAD write", facts: pathrisk.PathFacts{Raw: ".git/HEAD", Write: true}, want: risk.Execute, whyHas: "its HEAD, index"},
		{name: "git index write", facts: pathrisk.PathFacts{Raw: "sub/.git/index", Write: true}, want: risk.Execute},
		{name: "git object read", facts: pathrisk.PathFacts{Raw: ".git/objects/ab/cd"}, want: risk.Read},
		{name: "bashrc write", facts: pathrisk.PathFacts{Raw: "~/.bashrc", Write: true}, want: risk.Execute},
		{name: "zshrc write", facts: pathrisk.PathFacts{Raw: "$HOME/.zshrc", Write: true}, want: risk.Execute},
		{name: "profile write", facts: pathrisk.PathFacts{Raw: "~/.profile", Write: true}, want: risk.Execute},
		{name: "fish write", facts: pathrisk.PathFacts{Raw: "~/.config/fish/config.fish", Write: true}, want: risk.Execute},
		{name: "autostart write", facts: pathrisk.PathFacts{Raw: "~/.config/autostart/x.desktop", Write: true}, want: risk.Execute},
		{name: "systemd user write", facts: pathrisk.PathFacts{Raw: "~/.config/systemd/user/x.service", Write: true}, want: risk.Execute},
		{name: "cron write", facts: pathrisk.PathFacts{Raw: "/var/spool/cron/crontabs/u", Write: true}, want: risk.Execute},
		{name: "launch agent write", facts: pathrisk.PathFacts{Raw: "~/Library/LaunchAgents/x.plist", Write: true}, want: risk.Execute},
		{name: "vscode write", facts: pathrisk.PathFacts{Raw: ".vscode/tasks.json", Write: true}, want: risk.Execute, whyHas: ".vscode"},
		{name: "vscode read", facts: pathrisk.PathFacts{Raw: ".vscode/settings.json"}, want: risk.Read},
		{name: "VSCode mixed case", facts: pathrisk.PathFacts{Raw: ".VSCode/settings.json", Write: true}, want: risk.Execute},
		{name: "idea write", facts: pathrisk.PathFacts{Raw: ".idea/workspace.xml", Write: true}, want: risk.Execute},
		{name: "claude write", facts: pathrisk.PathFacts{Raw: ".claude/settings.json", Write: true}, want: risk.Execute},
		{name: "cursor write", facts: pathrisk.PathFacts{Raw: ".cursor/mcp.json", Write: true}, want: risk.Execute},
		{name: "gemini write", facts: pathrisk.PathFacts{Raw: ".gemini/settings.json", Write: true}, want: risk.Execute},
		{name: "codex write", facts: pathrisk.PathFacts{Raw: ".codex/config.toml", Write: true}, want: risk.Execute},
		{name: "mcp json write", facts: pathrisk.PathFacts{Raw: ".mcp.json", Write: true}, want: risk.Execute},
		{name: "envrc write", facts: pathrisk.PathFacts{Raw: ".envrc", Write: true}, want: risk.Credential},
		{name: "project npmrc write", facts: pathrisk.PathFacts{Raw: ".npmrc", Write: true}, want: risk.Credential},
		{name: "project npmrc read", facts: pathrisk.PathFacts{Raw: ".npmrc"}, want: risk.Credential, whyHas: "registry tokens"},
		{name: "Makefile write", facts: pathrisk.PathFacts{Raw: "Makefile", Write: true}, want: risk.Write},
		{name: "own project policy write", facts: pathrisk.PathFacts{Raw: ".custom-agent/policy.json", Write: true}, want: risk.Credential, whyHas: "own"},
		{name: "own project policy read", facts: pathrisk.PathFacts{Raw: ".custom-agent/policy.json"}, want: risk.Read},
		{name: "own user policy write", facts: pathrisk.PathFacts{Raw: "~/.config/custom-agent/policy.json", Write: true}, want: risk.Credential},
		{name: "own data write", facts: pathrisk.PathFacts{Raw: "~/.local/share/custom-agent/events.db", Write: true}, want: risk.Credential},
		// The web UI's script token answers any question (third serve
		// review): the agent must not read its own data dir.
		{name: "own data read: serve's script token", facts: pathrisk.PathFacts{Raw: "~/.local/share/custom-agent/serve-7717.token"}, want: risk.Credential},
		{name: "own data read: the log", facts: pathrisk.PathFacts{Raw: "~/.local/share/custom-agent/events.db-wal"}, want: risk.Credential},
		// Browser profiles by their databases' names, whatever the
		// browser (third serve review: qutebrowser, Falkon, Yandex,
		// Thorium and macOS browsers were missing), and the directories
		// of the browsers named.
		{name: "qutebrowser history", facts: pathrisk.PathFacts{Raw: "~/.local/share/qutebrowser/history.sqlite"}, want: risk.Credential},
		{name: "qutebrowser cookies", facts: pathrisk.PathFacts{Raw: "~/.local/share/qutebrowser/webengine/Cookies"}, want: risk.Credential},
		{name: "falkon history", facts: pathrisk.PathFacts{Raw: "~/.config/falkon/profiles/default/browsedata.db"}, want: risk.Credential},
		{name: "yandex history", facts: pathrisk.PathFacts{Raw: "~/.config/yandex-browser/Default/History"}, want: risk.Credential},
		{name: "thorium history", facts: pathrisk.PathFacts{Raw: "~/.config/thorium/Default/History"}, want: risk.Credential},
		{name: "safari history", facts: pathrisk.PathFacts{Raw: "~/Library/Safari/History.db"}, want: risk.Credential},
		{name: "arc history", facts: pathrisk.PathFacts{Raw: "~/Library/Application Support/Arc/User Data/Default/History"}, want: risk.Credential},
		{name: "macos brave history", facts: pathrisk.PathFacts{Raw: "~/Library/Application Support/BraveSoftware/Brave-Browser/Default/History"}, want: risk.Credential},
		{name: "macos edge cookies", facts: pathrisk.PathFacts{Raw: "~/Library/Application Support/Microsoft Edge/Default/Network/Cookies"}, want: risk.Credential},
		{name: "unknown chromium fork history", facts: pathrisk.PathFacts{Raw: "~/.config/net.imput.helium/Default/History"}, want: risk.Credential, whyHas: "browser"},
		{name: "unknown chromium fork local state", facts: pathrisk.PathFacts{Raw: "~/.config/some-browser/Local State"}, want: risk.Credential},
		{name: "unknown macos browser history", facts: pathrisk.PathFacts{Raw: "~/Library/Application Support/NewBrowser/Default/History"}, want: risk.Credential},
		{name: "unknown snap browser history", facts: pathrisk.PathFacts{Raw: "~/snap/newbrowser/common/x/Default/History"}, want: risk.Credential},
		{name: "history journal", facts: pathrisk.PathFacts{Raw: "~/.config/some-browser/Default/History-journal"}, want: risk.Credential},
		{name: "chromium sessions", facts: pathrisk.PathFacts{Raw: "~/.config/some-browser/Default/Sessions/Session_13350000000000000"}, want: risk.Credential},
		{name: "firefox fork session backup", facts: pathrisk.PathFacts{Raw: "~/.newfox/x.default/sessionstore-backups/recovery.jsonlz4"}, want: risk.Credential},
		// Web review 4, finding 4: what pages keep (serve's tab key in
		// sessionStorage, a chat application's token in localStorage),
		// in any browser's or Electron application's profile, however
		// deep.
		{name: "session storage", facts: pathrisk.PathFacts{Raw: "~/.config/newbrowser/Default/Session Storage/000003.log"}, want: risk.Credential, whyHas: "browser"},
		{name: "local storage", facts: pathrisk.PathFacts{Raw: "~/.config/chatapp/Local Storage/leveldb/000005.ldb"}, want: risk.Credential},
		{name: "indexeddb", facts: pathrisk.PathFacts{Raw: "~/.config/newbrowser/Default/IndexedDB/https_x_0.indexeddb.leveldb/000003.log"}, want: risk.Credential},
		{name: "session storage dir", facts: pathrisk.PathFacts{Raw: "~/.config/newbrowser/Default/Session Storage"}, want: risk.Credential},
		{name: "deep profile cookies", facts: pathrisk.PathFacts{Raw: "~/.local/share/vendor/app/User Data/Default/History"}, want: risk.Credential},
		{name: "flatpak unknown browser", facts: pathrisk.PathFacts{Raw: "~/.var/app/org.new.Browser/config/newbrowser/Default/Local Storage/leveldb/LOG"}, want: risk.Credential},
		{name: "project local storage dir", facts: pathrisk.PathFacts{Raw: "src/Local Storage/notes.md"}, want: risk.Read, noReason: true},
		{name: "places anywhere", facts: pathrisk.PathFacts{Raw: "/tmp/copy/places.sqlite"}, want: risk.Credential},
		{name: "places wal anywhere", facts: pathrisk.PathFacts{Raw: "/tmp/copy/places.sqlite-wal"}, want: risk.Credential},
		{name: "form history anywhere", facts: pathrisk.PathFacts{Raw: "/opt/x/formhistory.sqlite"}, want: risk.Credential},
		{name: "cookies journal anywhere", facts: pathrisk.PathFacts{Raw: "/opt/x/Cookies-journal"}, want: risk.Credential},
		{name: "other user's browser history", facts: pathrisk.PathFacts{Raw: "/home/bob/.config/thorium-shell/Default/History"}, want: risk.Credential},
		{name: "browser cache", facts: pathrisk.PathFacts{Raw: "~/.cache/google-chrome/Default/Cache/Cache_Data/f_000001"}, want: risk.Credential},
		// Common words are browser databases only where applications
		// keep data: a project's own History or sessions are not.
		{name: "project file named History", facts: pathrisk.PathFacts{Raw: "docs/History"}, want: risk.Read, noReason: true},
		{name: "project sessions dir", facts: pathrisk.PathFacts{Raw: "app/sessions/store.go"}, want: risk.Read, noReason: true},
		{name: "a crate's sessions module", facts: pathrisk.PathFacts{Raw: "~/.cargo/registry/src/index/tower-sessions-0.1/src/sessions/mod.rs"}, want: risk.Write},
		{name: "home file named History", facts: pathrisk.PathFacts{Raw: "~/notes/History"}, want: risk.Write},
		{name: "recursive read of home", facts: pathrisk.PathFacts{Raw: "~", Recursive: true}, want: risk.Credential, whyHas: "beneath"},
		{name: "recursive read of root", facts: pathrisk.PathFacts{Raw: "/", Recursive: true}, want: risk.Credential},
		{name: "recursive read of /home", facts: pathrisk.PathFacts{Raw: "/home", Recursive: true}, want: risk.Credential},
		{name: "recursive read of other home", facts: pathrisk.PathFacts{Raw: "/Users/x", Recursive: true}, want: risk.Credential},
		{name: "recursive read of project", facts: pathrisk.PathFacts{Raw: ".", Recursive: true}, want: risk.Read},
		{name: "recursive read of /usr", facts: pathrisk.PathFacts{Raw: "/usr/share", Recursive: true}, want: risk.Write},
		{name: "plain read of home", facts: pathrisk.PathFacts{Raw: "~"}, want: risk.Write},
		{name: "symlink write to hook", facts: pathrisk.PathFacts{Raw: "hook", Resolved: "/home/u/proj/.git/hooks/pre-push", Write: true}, want: risk.Execute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, why := pathrisk.Classify(tc.facts, env)
			if got != tc.want {
				t.Errorf("Classify(%+v) = %v (%s), want %v", tc.facts, got, why, tc.want)
			}
			if tc.noReason && why != "" {
				t.Errorf("Classify(%+v) explains %q, want no explanation", tc.facts, why)
			}
			if tc.whyHas != "" && !strings.Contains(why, tc.whyHas) {
				t.Errorf("Classify(%+v) explains %q, want it to mention %q", tc.facts, why, tc.whyHas)
			}
		})
	}
}

func TestClassifyXDGConfigHome(t *testing.T) {
	t.Parallel()
	e := env
	e.ConfigHome = "/home/u/cfg"
	got, _ := pathrisk.Classify(pathrisk.PathFacts{Raw: "/home/u/cfg/custom-agent/policy.json", Write: true}, e)
	if got != risk.Credential {
		t.Errorf("write to $XDG_CONFIG_HOME/custom-agent = %v, want credential", got)
	}
}

func TestIsCredential(t *testing.T) {
	t.Parallel()
	if !pathrisk.IsCredential("/home/u/.ssh/id_rsa", env) {
		t.Error("~/.ssh/id_rsa is a credential")
	}
	if pathrisk.IsCredential("/home/u/proj/README.md", env) {
		t.Error("README.md is not a credential")
	}
}

func TestGlobMayMatchCredential(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"/home/u/.ss*/id_rsa":        true,
		"/home/u/.*":                 true,
		"/home/u/proj/*":             false, // * does not match dot files
		"/home/u/proj/*.go":          false,
		"/home/u/proj/*.pem":         true,
		"/home/u/proj/.e*":           true,
		"/proc/*/environ":            true,
		"/e?c/passwd":                true,
		"/*":                         true,
		"/home/*/.config/rclone/*":   true,
		"/home/u/.config/rc*/x.conf": true,
		"/home/u/.m2/*.xml":          true,
		"/home/u/.M2/settings.*":     true,
		"/tmp/*.log":                 false,
		"/home/u/proj/src/**/*.ts":   false,
	} {
		if got := pathrisk.GlobMayMatchCredential(p, env); got != want {
			t.Errorf("GlobMayMatchCredential(%q) = %v, want %v", p, got, want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"", "~", "~/.ssh", "../../etc", "//a//b/", "$HOME", "${HOME}/x", "~bob/x", ".env.local", "/proc/1/environ", strings.Repeat("a/", 100)} {
		f.Add(s, "", false)
	}
	f.Fuzz(func(t *testing.T, raw, resolved string, write bool) {
		if len(raw) > 64<<10 || len(resolved) > 64<<10 {
			t.Skip()
		}
		if resolved != "" && resolved[0] != '/' {
			resolved = "/" + resolved
		}
		l, why := pathrisk.Classify(pathrisk.PathFacts{Raw: raw, Resolved: resolved, Write: write}, env)
		if l < risk.Read || l > risk.Credential {
			t.Fatalf("level %v out of range", l)
		}
		if write && l < risk.Write {
			t.Fatalf("a write judged %v", l)
		}
		if l > risk.Write && why == "" {
			t.Fatalf("raised to %v without a reason", l)
		}
		c, ok := pathrisk.Canonical(raw, env)
		if ok && (c == "" || c[0] != '/') {
			t.Fatalf("canonical %q not absolute", c)
		}
	})
}

func TestGlobTargetsCredential(t *testing.T) {
	t.Parallel()
	for glob, want := range map[string]bool{
		".env*": true, "**/.env": true, "**/id_*": true, "*.pem": true, "*.{go,env}": true, "*.{go,ts}": false,
		"{.env,x}": true, "*": false, "**": false, "**/*.go": false, "src/*.ts": false,
		"*rc": true, "secrets/*.KEY": true,
	} {
		if _, got := pathrisk.GlobTargetsCredential(glob); got != want {
			t.Errorf("GlobTargetsCredential(%q) = %v, want %v", glob, got, want)
		}
	}
	for glob, want := range map[string]string{
		"*.go": "", "../../.ssh/*": "../../.ssh", "src/**/x": "src", "a/b": "a/b",
	} {
		if got := pathrisk.GlobRoot(glob); got != want {
			t.Errorf("GlobRoot(%q) = %q, want %q", glob, got, want)
		}
	}
}

// TestClassifyDataDir (third serve review, left-over): a data directory
// given by --data-dir or $CUSTOM_AGENT_DATA_DIR holds the event log and
// serve's script token like the default one, so reading or writing in it
// is a credential access, and a symbolic link to it is one too.
func TestClassifyDataDir(t *testing.T) {
	t.Parallel()
	e := env
	e.DataDir = "/srv/ca-data"
	tests := []struct {
		name  string
		facts pathrisk.PathFacts
		want  risk.Level
	}{
		{"serve token read", pathrisk.PathFacts{Raw: "/srv/ca-data/serve-1234.token"}, risk.Credential},
		{"log read", pathrisk.PathFacts{Raw: "/srv/ca-data/events.db"}, risk.Credential},
		{"the directory itself", pathrisk.PathFacts{Raw: "/srv/ca-data"}, risk.Credential},
		{"write", pathrisk.PathFacts{Raw: "/srv/ca-data/events.db", Write: true}, risk.Credential},
		{"other letter case", pathrisk.PathFacts{Raw: "/SRV/CA-Data/serve-1234.token"}, risk.Credential},
		{"through a link", pathrisk.PathFacts{Raw: "proj/t", Resolved: "/srv/ca-data/serve-1234.token"}, risk.Credential},
		{"a sibling with the same prefix", pathrisk.PathFacts{Raw: "/srv/ca-data2/x"}, risk.Write},
		{"the parent", pathrisk.PathFacts{Raw: "/srv/x"}, risk.Write},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, why := pathrisk.Classify(tc.facts, e)
			if got != tc.want {
				t.Fatalf("Classify(%+v) = %v (%s), want %v", tc.facts, got, why, tc.want)
			}
			if got == risk.Credential && !strings.Contains(why, "custom-agent's own data") {
				t.Errorf("Classify(%+v) explains %q, want it to name custom-agent's own data", tc.facts, why)
			}
		})
	}
	if !pathrisk.IsCredential("/srv/ca-data/serve-1.token", e) {
		t.Error("IsCredential: the data directory's token is a credential")
	}
	if s := pathrisk.Sensitive("/srv/ca-data/serve-1.token", e, false); strings.Join(s, "/") != "srv/ca-data" {
		t.Errorf("Sensitive = %q, want the whole data directory", s)
	}
	// Without the fact, the same path is only outside the working
	// directory: what the old engine said.
	if got, _ := pathrisk.Classify(pathrisk.PathFacts{Raw: "/srv/ca-data/serve-1234.token"}, env); got != risk.Write {
		t.Errorf("without DataDir = %v, want write (outside the working directory)", got)
	}
}
