// Package resolve turns the canonical paths the permission engine will judge
// into their symlink-resolved forms. It is the impure edge of the engine: it
// reads the file system, so that permission stays pure and replayable. The
// check command uses it now and the executor will use it the same way, so
// the paths judged are the paths used.
package resolve

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// maxLinks bounds the links followed while resolving one path.
const maxLinks = 40

// Path returns p with every symbolic link resolved. p must be absolute; it
// may hold ".." components, which are resolved physically (after the link
// before them, as the kernel does). The longest prefix of p that exists is resolved with
// filepath.EvalSymlinks; the rest, which does not exist yet, is appended
// lexically. A path that cannot be resolved at all is returned as it is.
func Path(p string) string {
	var r Resolver
	return r.Path(p)
}

// Resolver resolves the paths of one request, looking each directory up
// once: a command naming ten files in the working directory walks the
// working directory's components once, not ten times. It remembers what it
// found, so it must not outlive the request (the file system changes
// between calls). The zero Resolver is ready to use; it is not safe for
// concurrent use.
type Resolver struct {
	evals map[string]evalResult
}

type evalResult struct {
	path string
	err  error
}

// Path is the package's Path, with lookups shared across the calls to r.
func (r *Resolver) Path(p string) string { return walk(p, r.eval) }

// walk is Path with eval as the resolution of an existing prefix:
// a Resolver's remembered one, or filepath.EvalSymlinks (the tests' oracle).
func walk(p string, eval func(string) (string, error)) string {
	if !filepath.IsAbs(p) {
		return p
	}
	prefix, rest := p, ""
	for i := 0; i < 4096; i++ {
		res, err := eval(prefix)
		if err == nil {
			return filepath.Join(res, rest)
		}
		// The prefix does not exist, or a link in it dangles or loops. A
		// dangling link is followed to its target as the kernel follows
		// it: a relative target from the directory the link really lies
		// in (d/l, d a link to ., names the l beside d, so l's ../x is
		// beside the project, not inside it), and nothing cleaned
		// lexically, since a ".." after a link climbs out of where the
		// link leads.
		if t, lerr := os.Readlink(prefix); lerr == nil && i < maxLinks {
			if !filepath.IsAbs(t) {
				d := filepath.Dir(prefix)
				if res, err := eval(d); err == nil {
					d = res
				}
				if d == "/" {
					t = "/" + t
				} else {
					t = d + "/" + t
				}
			}
			prefix = t
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

// eval is filepath.EvalSymlinks of the absolute path p, remembered. A
// path is resolved as its directory's resolution (remembered too) joined
// with its last component, which is then followed with EvalSymlinks only
// when it is a link itself; "." and ".." are taken from the directory's
// resolution. It is the walk EvalSymlinks makes, with each directory
// looked up once per Resolver (TestResolverAsEvalSymlinks).
func (r *Resolver) eval(p string) (string, error) {
	if e, ok := r.evals[p]; ok {
		return e.path, e.err
	}
	var res string
	var err error
	// Split without cleaning: "l/.." is the parent of where l leads.
	i := strings.LastIndexByte(p, '/')
	dir, base := "/", p[i+1:]
	if i > 0 {
		dir = p[:i]
	}
	switch {
	case p == "/" || i < 0 || base == "":
		res, err = filepath.EvalSymlinks(p)
	case base == ".":
		res, err = r.eval(dir)
	case base == "..":
		// dir's resolution has no link left in it, so its parent is
		// where ".." leads (EvalSymlinks climbs the same way).
		if res, err = r.eval(dir); err == nil {
			res = filepath.Dir(res)
		}
	default:
		if res, err = r.eval(dir); err == nil {
			res = filepath.Join(res, base)
			var fi os.FileInfo
			if fi, err = os.Lstat(res); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				res, err = filepath.EvalSymlinks(res)
			}
		}
	}
	if err != nil {
		res = ""
	}
	if r.evals == nil {
		r.evals = make(map[string]evalResult)
	}
	r.evals[p] = evalResult{res, err}
	return res, err
}

// Map resolves every path and returns canonical → resolved for those whose
// resolved form differs.
func Map(paths []string) map[string]string {
	var r Resolver
	return r.Map(paths)
}

// Map is the package's Map, with lookups shared across the calls to r.
func (r *Resolver) Map(paths []string) map[string]string {
	m := make(map[string]string)
	for _, p := range paths {
		if res := r.Path(p); res != p {
			m[p] = res
		}
	}
	return m
}

// Fill gives req what the engine needs to know beyond its arguments, each
// found once: the analysis of its shell command (permission.Analyze, so
// the command is parsed once for all the questions below and for Check),
// the resolution of every path it names (Resolved), the matches of its
// globs (Expanded), what the trees it reads recursively hold (Trees) and
// what the git repositories whose tracked files it prints track (Repos),
// and what the configurations of the repositories it runs git in set
// (GitConfigs). A path that is a hard link to a credential file is handed
// in as that file (see hardLinks).
// The executor and the check command call it before Check, so that the
// paths judged are the paths used.
func Fill(req *permission.Request) {
	var r Resolver
	req.Analysis = permission.Analyze(*req)
	paths := permission.PathsToResolve(*req)
	req.Resolved = r.Map(paths)
	req.Expanded = r.Globs(permission.GlobsToExpand(*req))
	hardLinks(req, paths)
	req.Trees = TreesFor(*req)
	req.Repos = ReposFor(*req)
	req.GitConfigs = GitConfigsFor(*req)
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
	var r Resolver
	return r.Globs(patterns)
}

// Globs is the package's Globs, with lookups shared across the calls to r.
func (r *Resolver) Globs(patterns []string) map[string][]string {
	var m map[string][]string
	for _, p := range patterns {
		if !filepath.IsAbs(p) {
			continue
		}
		matches, cut, err := boundedGlob(strings.ReplaceAll(p, "[!", "[^"), MaxMatches, MaxGlobDirs)
		if err != nil || len(matches) == 0 && !cut {
			continue
		}
		out := make([]string, 0, len(matches)+1)
		for _, f := range matches {
			out = append(out, r.Path(f))
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

// MaxGlobDirs bounds the directories one pattern's expansion reads:
// `ls /*/*/*/*/*/*/*` would read the whole disk (33 s and 700 MB, the
// hook review found). Past it the expansion stops, and the engine judges
// the pattern as matching more than was checked.
const MaxGlobDirs = 4096

// boundedGlob is filepath.Glob that stops after max matches or after
// reading maxDirs directories, and says whether it stopped (cut). It
// reads one directory at a time, depth first, and keeps only the
// matches: no level of the pattern is held whole.
func boundedGlob(pattern string, max, maxDirs int) (matches []string, cut bool, err error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, false, err
	}
	parts := strings.Split(filepath.Clean(pattern), string(filepath.Separator))
	dirs := 0
	var walk func(dir string, rest []string) bool // false: stop
	walk = func(dir string, rest []string) bool {
		if len(rest) == 0 {
			if len(matches) == max {
				cut = true
				return false
			}
			matches = append(matches, dir)
			return true
		}
		part := rest[0]
		if !strings.ContainsAny(part, `*?[\`) {
			next := filepath.Join(dir, part)
			if len(rest) > 1 {
				if fi, err := os.Stat(next); err != nil || !fi.IsDir() {
					return true
				}
			} else if _, err := os.Lstat(next); err != nil {
				return true
			}
			return walk(next, rest[1:])
		}
		if dirs++; dirs > maxDirs {
			cut = true
			return false
		}
		f, err := os.Open(dir)
		if err != nil {
			return true
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		slices.Sort(names)
		for _, n := range names {
			if ok, _ := filepath.Match(part, n); !ok {
				continue
			}
			next := filepath.Join(dir, n)
			if len(rest) > 1 {
				if fi, err := os.Stat(next); err != nil || !fi.IsDir() {
					continue
				}
			}
			if !walk(next, rest[1:]) {
				return false
			}
		}
		return true
	}
	root := string(filepath.Separator)
	if parts[0] != "" { // not absolute: from here
		root = "."
	} else {
		parts = parts[1:]
	}
	walk(root, parts)
	return matches, cut, nil
}

// MaxTreeEntries bounds the entries Trees looks at under one directory; a
// tree with more is reported incomplete, which the engine treats as not
// scanned.
const MaxTreeEntries = 20000

// Trees scans each directory the engine asks about (permission.TreesToScan)
// and reports what a recursive read of it would meet: the first file
// isSecret judges a credential (apart inside .git directories, which grep
// -r reads and rg does not), the first symbolic link, and whether every
// entry was looked at. Links are not followed. isSecret gets absolute,
// clean paths.
func Trees(dirs []string, isSecret func(abs string) bool) map[string]permission.Tree {
	var m map[string]permission.Tree
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		t := permission.Tree{Complete: true}
		n := 0
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				t.Complete = false
				return fs.SkipAll
			}
			if n++; n > MaxTreeEntries {
				t.Complete = false
				return fs.SkipAll
			}
			inGit := strings.Contains(p+"/", "/.git/")
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				if t.Link == "" {
					t.Link = p
				}
			case !e.IsDir() && isSecret(p):
				if inGit && t.GitSecret == "" {
					t.GitSecret = p
				} else if !inGit && t.Secret == "" {
					t.Secret = p
				}
			}
			if t.Unignore == "" && e.Type().IsRegular() && isIgnoreFile(p) && negatesPattern(p) {
				t.Unignore = p
			}
			if t.Secret != "" && t.Link != "" && t.GitSecret != "" {
				return fs.SkipAll // nothing more to learn
			}
			return nil
		})
		if err != nil {
			t.Complete = false
		}
		if t.Unignore == "" {
			t.Unignore = negatingIgnoreAbove(d)
		}
		if m == nil {
			m = make(map[string]permission.Tree)
		}
		m[d] = t
	}
	return m
}

// TreesFor scans the directories req reads recursively
// (permission.TreesToScan), judging files with the engine's own credential
// table, for req.Trees.
func TreesFor(req permission.Request) map[string]permission.Tree {
	dirs := permission.TreesToScan(req)
	if len(dirs) == 0 {
		return nil
	}
	env := pathrisk.Env{Cwd: req.Cwd, Home: req.Home, UserHomes: req.UserHomes, ConfigHome: req.ConfigHome, DataDir: req.DataDir}
	return Trees(dirs, func(abs string) bool {
		return pathrisk.IsCredential(abs, env) || hardLinkedCredential(abs, env) != ""
	})
}

// ignoreNames are the ignore files rg reads in every directory it walks and
// in every directory above the one it starts from.
var ignoreNames = [...]string{".ignore", ".rgignore", ".gitignore"}

// isIgnoreFile reports an ignore file rg reads: one of ignoreNames, or a
// repository's .git/info/exclude.
func isIgnoreFile(p string) bool {
	base := filepath.Base(p)
	for _, n := range ignoreNames {
		if base == n {
			return true
		}
	}
	return strings.HasSuffix(p, "/.git/info/exclude")
}

// maxIgnoreRead bounds the bytes of one ignore file read for a negation.
const maxIgnoreRead = 64 << 10

// negatesPattern reports whether the ignore file p holds a line that
// negates a pattern ("!.git", "!.env"): such a line can make rg search a
// hidden or ignored directory, .git among them. A file that cannot be read
// whole within the bound is taken to negate.
func negatesPattern(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false // rg cannot read it either
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIgnoreRead+1))
	if err != nil || len(b) > maxIgnoreRead {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t\ufeff"), "!") {
			return true
		}
	}
	return false
}

// negatingIgnoreAbove returns the first ignore file in a directory above
// d (rg reads those of every parent) that negates a pattern, or "".
func negatingIgnoreAbove(d string) string {
	for dir := filepath.Dir(d); ; dir = filepath.Dir(dir) {
		for _, n := range ignoreNames {
			if p := filepath.Join(dir, n); negatesPattern(p) {
				return p
			}
		}
		if p := filepath.Join(dir, ".git", "info", "exclude"); negatesPattern(p) {
			return p
		}
		if dir == "/" || dir == "." {
			return ""
		}
	}
}
