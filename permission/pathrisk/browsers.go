package pathrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// This file recognises a browser's profile by the names of the databases
// every browser of a family writes, not by the browser's own directory:
// the list of browsers is never complete (qutebrowser, Falkon, Yandex,
// Thorium, Arc … each came up in a review), but they all keep their
// history in History, places.sqlite or history.sqlite and their cookies
// in Cookies or cookies.sqlite. A browser's history holds every URL
// visited, serve's login link among them.

// isBrowserName reports whether s is the file name of one of the databases a
// browser keeps its history, sessions, cookies and passwords in (lower
// case): Chromium and every browser built on it (Chrome, Edge, Brave,
// Vivaldi, Opera, Yandex, Thorium, Arc), Firefox and its forks, WebKit
// browsers (Safari, Epiphany) and qutebrowser and Falkon. Some are common
// words (History, Shortcuts), so they count only in an application's data
// beneath a home directory (inAppData); the names no other program uses are
// sourceCookieNames, credential anywhere.
func isBrowserName(s string) bool {
	switch s {
	case "history", "history.db", "history.sqlite", "archived history",
		"local state", "top sites", "visited links", "shortcuts",
		"favicons", "network action predictor", "history provider cache",
		"current session", "current tabs", "last session", "last tabs",
		"browsedata.db", "webpageicons.db", "ephy-history.db",
		"session.json", "session_buddy.db":
		return true
	}
	return false
}

// isBrowserDir reports whether s is a directory of a browser profile that
// holds visited URLs or what pages keep in files of changing names
// (Chromium's Sessions/Session_13…, Firefox's
// sessionstore-backups/recovery.jsonlz4, the LevelDB logs of Chromium's and
// every Electron application's Session Storage, Local Storage and IndexedDB,
// where a page keeps its sessionStorage, localStorage and IndexedDB: serve's
// web page its tab key, a chat application its login token): every file
// beneath one is judged like the databases above, in an application's data
// only.
func isBrowserDir(s string) bool {
	switch s {
	case "sessions", "sessionstore-backups",
		"session storage", "local storage", "indexeddb":
		return true
	}
	return false
}

// sqliteSidecars are the files SQLite keeps beside a database, which hold
// its most recent pages: History-journal, places.sqlite-wal.
var sqliteSidecars = [...]string{"-journal", "-wal", "-shm"}

// stripSidecar returns the database name of a SQLite sidecar file's name,
// or name itself.
func stripSidecar(name string) string {
	for _, s := range sqliteSidecars {
		if n, ok := strings.CutSuffix(name, s); ok && n != "" {
			return n
		}
	}
	return name
}

// browserWhat is what a browser database is, in a reason.
const browserWhat = "a browser's history, session, cookie or password database, which holds every URL visited (serve's login link among them), cookies and saved passwords"

// isNotAppData reports whether s is one of the dot directories of a home
// that hold code and caches of build tools and package managers, not an
// application's data: a crate's src/sessions/ or a package's History file
// there is source, not a browser's. The caches of the browsers named in
// homeLocations are judged by that table.
func isNotAppData(s string) bool {
	switch s {
	case ".cache", ".npm", ".cargo", ".rustup", ".gradle", ".m2",
		".nvm", ".pyenv", ".rbenv", ".gem", ".bun", ".deno",
		".vscode", ".vscode-server", ".cursor", ".git":
		return true
	}
	return false
}

// inAppData reports whether the component at off (the first one beneath a
// home directory) is where applications keep their data.
func inAppData(comps []string, off int) bool {
	return off < len(comps) && isAppData(comps[off])
}

// isAppData reports whether c, lower case, the name of an entry of a home,
// is where applications keep their data: a dot directory (~/.config,
// ~/.local, ~/.mozilla, ~/.var, a browser's own ~/.NAME) other than the
// tool caches of isNotAppData, ~/snap or macOS's ~/Library.
func isAppData(c string) bool {
	return len(c) > 1 && c[0] == '.' && c != ".." && !isNotAppData(c) || c == "snap" || c == "library"
}

// IsAppData reports whether an entry of a home named name (any letter
// case) is where applications keep their data, where IsBrowserStoreName's
// names count: what a sandbox walks to find browser profiles no table
// names.
func IsAppData(name string) bool { return isAppData(strings.ToLower(name)) }

// browserStore judges comps, a lower-cased path whose home directory ends
// at component off, as a browser database: credential when it is one of
// browserNames (or its SQLite sidecar), or is or lies beneath one of
// browserDirs, in an application's data. It returns the offset of the
// component that made it one, or -1.
func browserStore(comps []string, off int) (risk.Level, string, int) {
	if !inAppData(comps, off) || len(comps) < off+2 {
		return 0, "", -1
	}
	last := len(comps) - 1
	if isBrowserName(stripSidecar(comps[last])) {
		return risk.Credential, browserWhat, last
	}
	for i := off + 1; i <= last; i++ {
		if isBrowserDir(comps[i]) { // the directory or what is beneath it
			return risk.Credential, browserWhat, i
		}
	}
	return 0, "", -1
}

// IsBrowserStoreDir reports whether a directory named name (any letter
// case) is one of a browser profile whose every file the analyser judges
// credential in an application's data (Sessions, Session Storage, Local
// Storage, IndexedDB …): what a sandbox hides where it finds one there.
func IsBrowserStoreDir(name string) bool { return isBrowserDir(strings.ToLower(name)) }

// IsBrowserStoreName reports whether a file named name (any letter case)
// is a browser's history, session, cookie or password database by its
// name (History, Cookies, places.sqlite, Login Data, key4.db, their SQLite
// sidecars …): what a sandbox looks for in the application data of a home
// to find the profiles of browsers no table names. The analyser judges
// the common words among them credential only in an application's data.
func IsBrowserStoreName(name string) bool {
	n := stripSidecar(strings.ToLower(name))
	return isBrowserName(n) || isCookieName(n)
}
