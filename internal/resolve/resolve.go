// Package resolve turns the canonical paths the permission engine will judge
// into their symlink-resolved forms. It is the impure edge of the engine: it
// reads the file system, so that permission stays pure and replayable. The
// check command uses it now and the executor will use it the same way, so
// the paths judged are the paths used.
package resolve

import (
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the links followed while resolving one path.
const maxLinks = 40

// Path returns p with every symbolic link resolved. p must be absolute; it
// may hold ".." components, which are resolved physically (after the link
// before them, as the kernel does). The longest prefix of p that exists is resolved with
// filepath.EvalSymlinks; the rest, which does not exist yet, is appended
// lexically. A path that cannot be resolved at all is returned as it is.
func Path(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	prefix, rest := p, ""
	for i := 0; i < 4096; i++ {
		r, err := filepath.EvalSymlinks(prefix)
		if err == nil {
			return filepath.Join(r, rest)
		}
		// The prefix does not exist, or a link in it dangles or loops. A
		// dangling link is followed to its target lexically.
		if t, lerr := os.Readlink(prefix); lerr == nil && i < maxLinks {
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(prefix), t)
			}
			prefix = filepath.Clean(t)
			continue
		}
		// Strip the last component without cleaning: a ".." must stay
		// after the link it climbs out of.
		dir, base := filepath.Split(prefix)
		if dir == "" || prefix == "/" {
			return p
		}
		rest = filepath.Join(base, rest)
		prefix = dir
		if len(prefix) > 1 {
			prefix = prefix[:len(prefix)-1]
		}
	}
	return p
}

// Map resolves every path and returns canonical → resolved for those whose
// resolved form differs.
func Map(paths []string) map[string]string {
	m := make(map[string]string)
	for _, p := range paths {
		if r := Path(p); r != p {
			m[p] = r
		}
	}
	return m
}

// MaxMatches bounds the matches Globs lists for one pattern; a pattern
// that matches more gets a last entry "" (cut short), which the engine
// judges as unknown.
const MaxMatches = 256

// Globs expands each absolute glob pattern the engine asks about
// (permission.GlobsToExpand) against the file system, as the shell will
// when the command runs, and returns pattern → matches with their symbolic
// links resolved. Patterns that match nothing are left out: the shell then
// passes the pattern on as it is, and the engine judges it as written.
// Bash's "[!...]" is read as "[^...]". Go's "*" also matches names that
// start with a dot, so the matches are a superset of bash's.
func Globs(patterns []string) map[string][]string {
	var m map[string][]string
	for _, p := range patterns {
		if !filepath.IsAbs(p) {
			continue
		}
		matches, err := filepath.Glob(strings.ReplaceAll(p, "[!", "[^"))
		if err != nil || len(matches) == 0 {
			continue
		}
		cut := len(matches) > MaxMatches
		if cut {
			matches = matches[:MaxMatches]
		}
		out := make([]string, 0, len(matches)+1)
		for _, f := range matches {
			out = append(out, Path(f))
		}
		if cut {
			out = append(out, "")
		}
		if m == nil {
			m = make(map[string][]string)
		}
		m[p] = out
	}
	return m
}
