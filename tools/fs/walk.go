package fs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// errStop ends a walk early without an error.
var errStop = errors.New("stop walking")

// errSkipDir, returned by visit for a directory, leaves what the directory
// holds out of the walk; the walk goes on with its next sibling.
var errSkipDir = errors.New("skip this directory")

// walker walks a directory tree depth first, the entries of each directory
// in byte order of their names (the order `rg --sort path` prints), and
// leaves out .git and whatever .gitignore files exclude, as git does:
//
//   - every .gitignore met in the walk applies beneath its directory, with
//     the rules of gitignore(5): later patterns beat earlier ones, deeper
//     files beat shallower ones, `!` re-includes, a trailing `/` matches
//     directories only, a `/` elsewhere anchors the pattern;
//   - when the walk starts inside a git work tree (a parent has .git), the
//     .gitignore files between the top of the work tree and the start
//     directory, and .git/info/exclude, apply too;
//   - an excluded directory is not entered, so nothing beneath it can be
//     re-included, which is git's rule too.
//
// Symbolic links are reported but never followed, so a walk stays inside
// the tree the engine judged.
type walker struct {
	root      string   // the start directory, physical (symlinks resolved)
	baseParts []string // root relative to the top of the work tree
	ancestors []gitignore.Pattern
	// unreadable lists directories (relative to root, slash-separated)
	// that could not be read; the walk goes on without them.
	unreadable []string
}

// entry is one file or directory the walk found.
type entry struct {
	rel  string      // relative to the start directory, slash-separated
	abs  string      // absolute
	mode fs.FileMode // type bits only
}

func (e entry) isDir() bool { return e.mode.IsDir() }

// newWalker prepares a walk of the directory root (physical and absolute).
func newWalker(root string) *walker {
	w := &walker{root: root}
	top := workTreeTop(root)
	if top == "" {
		return w
	}
	rel, err := filepath.Rel(top, root)
	if err != nil || rel == "." {
		w.ancestors = readIgnoreFile(filepath.Join(top, ".git", "info", "exclude"), nil)
		return w
	}
	w.baseParts = strings.Split(filepath.ToSlash(rel), "/")
	w.ancestors = readIgnoreFile(filepath.Join(top, ".git", "info", "exclude"), nil)
	dir := top
	for i := range w.baseParts {
		w.ancestors = append(w.ancestors, readIgnoreFile(filepath.Join(dir, ".gitignore"), w.baseParts[:i])...)
		dir = filepath.Join(dir, w.baseParts[i])
	}
	return w
}

// workTreeTop returns the nearest directory at or above dir holding .git,
// or "".
func workTreeTop(dir string) string {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// readIgnoreFile parses a .gitignore-format file whose patterns apply
// beneath domain. A missing or unreadable file has no patterns, and so has
// one that is not a regular file: like git (2.32 and later), a symbolic
// link named .gitignore is not followed, so the walk never reads a file
// outside the tree the engine judged (a link to ~/.ssh/id_rsa).
func readIgnoreFile(name string, domain []string) []gitignore.Pattern {
	if fi, err := os.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// walk calls visit for every entry that is not ignored, a directory before
// what it holds. visit returning errStop ends the walk with no error,
// errSkipDir for a directory leaves out what it holds; any other error
// ends it with that error.
func (w *walker) walk(ctx context.Context, visit func(entry) error) error {
	err := w.dir(ctx, w.root, "", w.baseParts, w.ancestors, visit)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

func (w *walker) dir(ctx context.Context, abs, rel string, parts []string, pats []gitignore.Pattern, visit func(entry) error) error {
	if err := cancelled(ctx); err != nil {
		return err
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		if rel == "" {
			return err
		}
		w.unreadable = append(w.unreadable, rel+"/")
		return nil
	}
	if own := readIgnoreFile(filepath.Join(abs, ".gitignore"), parts); len(own) > 0 {
		pats = append(pats[:len(pats):len(pats)], own...)
	}
	m := gitignore.NewMatcher(pats)
	for _, de := range ents {
		name := de.Name()
		if name == ".git" {
			continue
		}
		childParts := append(parts[:len(parts):len(parts)], name)
		if m.Match(childParts, de.IsDir()) {
			continue
		}
		e := entry{rel: path.Join(rel, name), abs: filepath.Join(abs, name), mode: de.Type()}
		if err := visit(e); errors.Is(err, errSkipDir) && de.IsDir() {
			continue
		} else if err != nil {
			return err
		}
		if de.IsDir() {
			if err := w.dir(ctx, e.abs, e.rel, childParts, pats, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkGlob refuses a glob that cannot match anything beneath the start
// directory or is malformed.
func checkGlob(glob string) error {
	if glob == "" {
		return nil
	}
	if strings.HasPrefix(glob, "/") || strings.HasPrefix(glob, "~") || glob == ".." ||
		strings.HasPrefix(glob, "../") || strings.Contains(glob, "/../") || strings.HasSuffix(glob, "/..") {
		return fmt.Errorf("glob %q must be relative to path, without ..: choose the directory with path and the names with glob (e.g. path \"src\", glob \"**/*.go\")", glob)
	}
	if !doublestar.ValidatePattern(glob) {
		return fmt.Errorf("glob %q is malformed (an unclosed [ or {, or a trailing \\); globs use *, **, ?, [abc] and {a,b}", glob)
	}
	return nil
}

// matchGlob reports whether the entry at rel (relative to the start
// directory) matches glob. A glob without a slash matches the base name
// at any depth, as in .gitignore and `rg -g`; one with a slash matches
// the whole relative path. The empty glob matches everything.
func matchGlob(glob, rel string) bool {
	if glob == "" {
		return true
	}
	if !strings.Contains(glob, "/") {
		rel = path.Base(rel)
	}
	ok, _ := doublestar.Match(glob, rel)
	return ok
}

// displayPath returns how to print rel, an entry beneath the path argument
// raw: joined to raw as the model wrote it, so that the result can be
// passed to another tool unchanged. Nothing is cleaned (see resolve).
func displayPath(raw, rel string) string {
	switch raw {
	case "", ".", "./":
		return rel
	}
	return strings.TrimSuffix(raw, "/") + "/" + rel
}

// startDir resolves the path argument of list_files or search_text to a
// physical directory or file.
func startDir(env pathrisk.Env, raw string) (string, fs.FileInfo, error) {
	shown := raw
	if raw == "" {
		raw, shown = ".", "the working directory"
	}
	p, err := resolve(env, raw)
	if err != nil {
		return "", nil, err
	}
	phys, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", nil, pathError(shown, err)
	}
	st, err := os.Stat(phys)
	if err != nil {
		return "", nil, pathError(shown, err)
	}
	return phys, st, nil
}
