package sandbox

import (
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// The walk browserProfiles makes through a home's application data.
const (
	// browserWalkDepth is the deepest a browser database is looked for,
	// in components beneath an application root (appRoots: the home,
	// ~/.config, ~/.local/share, ~/snap/NAME/common, ~/.var/app/ID,
	// ~/Library/Application Support …):
	// .local/share/VENDOR/APP/User Data/Default/Cookies is 5 deep.
	browserWalkDepth = 6
	// browserWalkBudget bounds the directory entries read per home. The
	// walk is breadth first, so what is left unread when it runs out is
	// the deepest part of the largest trees; it is hidden whole
	// (failSafe), never left readable.
	browserWalkBudget = 30_000
	// maxFailSafeHidden bounds the directories failSafe hides (each is a
	// mount): more are merged into their parents.
	maxFailSafeHidden = 256
)

// appRoots are the directories beneath a home (lower case, "*" any one
// name) where applications each keep a directory of their own: the
// depth a database is looked for at counts again from each one.
var appRoots = [][]string{
	{".config"}, {".local", "share"}, {".local", "state"},
	{"snap", "*", "*"}, {".var", "app", "*"}, {".var", "app", "*", "config"}, {".var", "app", "*", "data"},
	{"library", "application support"}, {"library", "containers", "*", "data", "library", "application support"},
}

// sharedDirs are the directories beneath a home, besides appRoots, that
// applications share: a database found straight in one is hidden alone,
// not with its directory.
var sharedDirs = [][]string{{".local"}, {"snap"}, {"snap", "*"}, {".var"}, {".var", "app"}, {"library"}, {"library", "containers"}}

func matchRel(rel []string, pats [][]string) bool {
	for _, pat := range pats {
		if len(pat) != len(rel) {
			continue
		}
		ok := true
		for i, c := range pat {
			if c != "*" && c != rel[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// browserFacts is what browserProfiles found in a home.
type browserFacts struct {
	// hidden are the profiles and databases found, and, when the walk ran
	// out of its budget, the directories it did not read.
	hidden []string
	// links maps the target of each symbolic link the walk followed
	// (~/.config to ~/dotfiles/config) to the link: walkProject judges a
	// working directory there by the path through the link.
	links map[string]string
	// inodes are those of the files of hidden, for hard links.
	inodes map[fileID]bool
	// exhausted is set when the budget ran out.
	exhausted bool
}

// browserProfiles returns browserProfiles(home, …), walked again once
// browserTTL has passed since the last walk, or for another set of
// directories left out. pl.mu is held.
func (pl *Planner) browserProfiles(home string, hidden, skip []string) browserFacts {
	if pl.browsers == nil || time.Since(pl.browsersAt) >= browserTTL {
		pl.browsers, pl.browsersAt = map[string]browserFacts{}, time.Now()
	}
	key := home + "\x00" + strings.Join(skip, "\x00")
	bf, ok := pl.browsers[key]
	if !ok {
		cfg := ""
		if home == pl.env.Home {
			cfg = pl.env.ConfigHome
		}
		bf = browserProfiles(home, cfg, hidden, skip)
		bf.inodes = map[fileID]bool{}
		for _, p := range bf.hidden {
			collectInodes(p, bf.inodes)
		}
		if bf.exhausted {
			slog.Warn("sandbox: too many files in a home's application data to look through them all for browser profiles; the rest is hidden from sandboxed processes",
				"home", home, "entries", browserWalkBudget, "hidden", len(bf.hidden))
		}
		pl.browsers[key] = bf
	}
	return bf
}

// walkDir is a directory browserProfiles reads: where it is on disk, the
// path by which the home reaches it (through the links followed), and how
// many levels beneath it are still read.
type walkDir struct {
	phys, logical string
	rel           []string // logical beneath the home, lower case
	left          int
	// skipped is a directory of skip on the way to one of appRoots: it
	// is read, outside the budget, only for the links to follow there.
	skipped bool
}

// onWayToRoot reports whether rel is a proper prefix of one of appRoots.
func onWayToRoot(rel []string) bool {
	for _, pat := range appRoots {
		if len(pat) <= len(rel) {
			continue
		}
		ok := true
		for i, c := range rel {
			if pat[i] != "*" && pat[i] != c {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// browserProfiles finds the profiles of browsers no table names, by the
// names of the databases every browser writes (pathrisk.IsBrowserStoreName:
// History, Cookies, places.sqlite, history.sqlite, Login Data …) and of
// the directories of a profile that hold pages' data (Session Storage,
// Local Storage, IndexedDB, Sessions: pathrisk.IsBrowserStoreDir), in the
// places applications keep data beneath home (pathrisk.IsAppData): its
// dot directories but the caches of build tools, ~/snap and ~/Library,
// and configHome, $XDG_CONFIG_HOME. It returns the directory that holds
// each database (the profile: its sessions, icons and cache hold the URLs
// visited too), or the file itself when that directory is the home or
// one of the directories applications share (~/.config, ~/.local/share).
//
// The walk is breadth first, browserWalkDepth levels beneath each of
// appRoots, and reads at most browserWalkBudget entries. Directories in
// hidden are not entered, nor those in skip: the trees the sandboxed
// process may write (the working directory), which walkProject reads
// whole, so that a process cannot spend the budget by writing files.
// Links are not followed, but for the home's own entries and appRoots
// (a dotfiles setup's ~/.config), each target once. When the budget runs
// out, the directories not read are hidden (failSafe).
func browserProfiles(home, configHome string, hidden, skip []string) browserFacts {
	bf := browserFacts{links: map[string]string{}}
	inAny := func(p string, dirs []string) bool {
		for _, h := range dirs {
			if pathrisk.Within(p, h) {
				return true
			}
		}
		return false
	}
	visited := map[string]int{home: browserWalkDepth}
	level := []walkDir{{phys: home, logical: home, left: browserWalkDepth}}
	if configHome != "" && filepath.IsAbs(configHome) && filepath.Clean(configHome) != filepath.Join(home, ".config") {
		if r := followable(configHome, home); r != "" && !inAny(r, skip) {
			level = append(level, walkDir{phys: r, logical: filepath.Join(home, ".config"), rel: []string{".config"}, left: browserWalkDepth})
			bf.links[r] = filepath.Join(home, ".config")
			visited[r] = browserWalkDepth
		}
	}
	budget := browserWalkBudget
	for len(level) > 0 && !bf.exhausted {
		var next []walkDir
		for i, d := range level {
			ents, more := readSome(d.phys, budget, d.phys == home || d.skipped)
			if !d.skipped {
				budget -= len(ents)
			}
			shared := len(d.rel) == 0 || matchRel(d.rel, appRoots) || matchRel(d.rel, sharedDirs)
			for _, e := range ents {
				name := e.Name()
				if d.phys == home && !pathrisk.IsAppData(name) {
					continue // the analyser judges browser names there only
				}
				typ := e.Type()
				if d.skipped && (typ.IsRegular() || typ.IsDir() && !onWayToRoot(append(d.rel[:len(d.rel):len(d.rel)], strings.ToLower(name)))) {
					continue // walkProject reads it
				}
				if typ.IsRegular() {
					if !pathrisk.IsBrowserStoreName(name) {
						continue
					}
					switch {
					case shared:
						bf.hidden = append(bf.hidden, filepath.Join(d.phys, name))
					case holdsAny(d.phys, skip):
						// The profile holds the working directory:
						// its other entries are hidden, not the way
						// there.
						bf.hidden = append(bf.hidden, filepath.Join(d.phys, name))
						bf.hidden = append(bf.hidden, failSafe(home, []walkDir{d}, skip)...)
					default:
						bf.hidden = append(bf.hidden, d.phys)
					}
					continue
				}
				if !typ.IsDir() && typ&os.ModeSymlink == 0 {
					continue
				}
				p := filepath.Join(d.phys, name)
				rel := append(d.rel[:len(d.rel):len(d.rel)], strings.ToLower(name))
				root := matchRel(rel, appRoots)
				if typ&os.ModeSymlink != 0 {
					if d.phys != home && !root {
						continue // links are not followed deeper
					}
					r := followable(p, home)
					if r == "" {
						continue
					}
					bf.links[r] = filepath.Join(d.logical, name)
					p, typ = r, os.ModeDir
				}
				switch {
				case typ.IsDir() && d.phys != home && pathrisk.IsBrowserStoreDir(name):
					if !inAny(p, skip) {
						bf.hidden = append(bf.hidden, p)
					}
				case typ.IsDir():
					left := d.left - 1
					if root {
						left = browserWalkDepth
					}
					if inAny(p, skip) && !inAny(p, hidden) && onWayToRoot(rel) {
						// A link there (~/.local/share) is still
						// followed.
						if _, ok := visited[p]; !ok {
							visited[p] = 0
							next = append(next, walkDir{phys: p, logical: filepath.Join(d.logical, name), rel: rel, skipped: true})
						}
						continue
					}
					if left <= 0 || inAny(p, hidden) || inAny(p, skip) {
						continue
					}
					if v, ok := visited[p]; ok && v >= left {
						continue // a link's target read already
					}
					visited[p] = left
					next = append(next, walkDir{phys: p, logical: filepath.Join(d.logical, name), rel: rel, left: left})
				}
			}
			if more || budget <= 0 && !d.skipped {
				// Out of budget: what is not read is hidden, d too
				// when it has entries not read.
				var rest []walkDir
				if more {
					rest = append(rest, d)
				}
				rest = append(append(rest, level[i+1:]...), next...)
				if len(rest) > 0 {
					bf.exhausted = true
					bf.hidden = append(bf.hidden, failSafe(home, rest, skip)...)
				}
				next = nil
				break
			}
		}
		level = next
	}
	slices.Sort(bf.hidden)
	bf.hidden = slices.Compact(bf.hidden)
	return bf
}

// followable returns where the link p leads when browserProfiles follows
// it: a directory that is not the root, a system directory or one that
// holds the home (which the walk reads already), or "".
func followable(p, home string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil || r == "/" || pathrisk.Within(home, r) {
		return ""
	}
	if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
		return ""
	}
	for _, s := range systemDirs {
		if pathrisk.Within(r, s) {
			return ""
		}
	}
	return r
}

// failSafe returns what hides the directories dirs, which the walk had no
// budget left to read: each of them, or, past maxFailSafeHidden, their
// parents (never a directory applications share, the home, or one that
// holds a directory of skip: the working directory stays visible, the
// rest of such a directory is hidden entry by entry).
func failSafe(home string, dirs []walkDir, skip []string) []string {
	holdsSkip := func(p string) bool { return holdsAny(p, skip) }
	var out []walkDir
	var add func(d walkDir, depth int)
	add = func(d walkDir, depth int) {
		for _, s := range skip {
			if pathrisk.Within(d.phys, s) {
				return // left out on purpose: walkProject reads it
			}
		}
		if !holdsSkip(d.phys) {
			out = append(out, d)
			return
		}
		// A directory on the way to the working directory: its other
		// entries are hidden.
		f, err := os.Open(d.phys)
		if err != nil || depth > 64 {
			return
		}
		ents, _ := f.ReadDir(browserWalkBudget)
		f.Close()
		for _, e := range ents {
			p := filepath.Join(d.phys, e.Name())
			switch {
			case e.IsDir():
				add(walkDir{phys: p, logical: filepath.Join(d.logical, e.Name()), rel: append(d.rel[:len(d.rel):len(d.rel)], strings.ToLower(e.Name()))}, depth+1)
			case pathrisk.IsBrowserStoreName(e.Name()):
				out = append(out, walkDir{phys: p, logical: filepath.Join(d.logical, e.Name())})
			}
		}
	}
	for _, d := range dirs {
		add(d, 0)
	}
	// Merge the deepest into their parents until few enough are left.
	for len(out) > maxFailSafeHidden {
		deepest := 0
		for _, d := range out {
			deepest = max(deepest, len(d.rel))
		}
		merged := false
		seen := map[string]bool{}
		var next []walkDir
		for _, d := range out {
			if len(d.rel) == deepest && deepest > 1 && d.phys != home {
				prel := d.rel[:len(d.rel)-1]
				parent := walkDir{phys: filepath.Dir(d.phys), logical: filepath.Dir(d.logical), rel: prel}
				if !matchRel(prel, appRoots) && !matchRel(prel, sharedDirs) && !holdsSkip(parent.phys) {
					d, merged = parent, true
				}
			}
			if !seen[d.phys] {
				seen[d.phys] = true
				next = append(next, d)
			}
		}
		out = next
		if !merged {
			break
		}
	}
	paths := make([]string, 0, len(out))
	for _, d := range out {
		paths = append(paths, d.phys)
	}
	// Those within another are hidden with it.
	slices.Sort(paths)
	kept := paths[:0]
	for _, p := range paths {
		if n := len(kept); n == 0 || !pathrisk.Within(p, kept[n-1]) {
			kept = append(kept, p)
		}
	}
	return kept
}

// readSome returns up to n entries of dir (all of them when all is set),
// and whether it has more.
func readSome(dir string, n int, all bool) ([]os.DirEntry, bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if all {
		ents, _ := f.ReadDir(-1)
		return ents, false
	}
	if n <= 0 {
		return nil, true
	}
	ents, _ := f.ReadDir(n)
	if len(ents) < n {
		return ents, false
	}
	extra, _ := f.ReadDir(1)
	return ents, len(extra) > 0
}

// withBrowsers returns homes with the browser profiles of each home
// (browserProfiles, skip left out) added to what is hidden, their files to
// the inodes of secrets, and the links the walk followed.
func (pl *Planner) withBrowsers(homes homeFacts, skip []string) homeFacts {
	slices.Sort(skip)
	skip = slices.Compact(skip)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	out := homes
	out.hidden = slices.Clone(homes.hidden)
	out.inodes = maps.Clone(homes.inodes)
	if out.inodes == nil {
		out.inodes = map[fileID]bool{}
	}
	out.links = map[string]string{}
	for _, home := range homes.homes {
		bf := pl.browserProfiles(home, homes.hidden, skip)
		out.hidden = append(out.hidden, bf.hidden...)
		maps.Copy(out.inodes, bf.inodes)
		maps.Copy(out.links, bf.links)
	}
	return out
}

// holdsAny reports whether dir is or holds one of dirs.
func holdsAny(dir string, dirs []string) bool {
	for _, d := range dirs {
		if pathrisk.Within(d, dir) {
			return true
		}
	}
	return false
}
