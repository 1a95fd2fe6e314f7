package proc

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// target is what a run_tests or get_diagnostics call points at.
type target struct {
	path string // absolute, as given (file or directory)
	dir  string // path, or its directory when path is a file
}

// resolveTarget resolves the path argument against the session's cwd
// (default the cwd itself) and checks that it exists.
func resolveTarget(cwd, path string) (target, error) {
	switch {
	case path == "":
		path = cwd
	case !filepath.IsAbs(path):
		path = filepath.Join(cwd, path)
	}
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return target{}, fmt.Errorf("path %s does not exist; give a directory of the project (or leave path out for the working directory)", path)
	case err != nil:
		return target{}, fmt.Errorf("path %s: %w", path, err)
	case fi.IsDir():
		return target{path: path, dir: path}, nil
	}
	return target{path: path, dir: filepath.Dir(path)}, nil
}

// rel returns the target as a relative path for a tool run in root:
// "." for root itself, or "./sub/dir" (the ./ keeps go from reading it
// as an import path).
func (t target) rel(root string) string {
	r, err := filepath.Rel(root, t.path)
	if err != nil || r == "." {
		return "."
	}
	return "./" + filepath.ToSlash(r)
}

// walkUp calls found for dir and each of its parents, nearest first, until
// it returns true; it returns the directory where that happened.
func walkUp(dir string, found func(dir string) bool) (string, bool) {
	for {
		if found(dir) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// walkUpTo is walkUp that stops at root, the session's working directory:
// it calls found for dir and its parents up to and including root, and for
// dir alone when dir is not inside root. Files above the working directory
// belong to someone else (a parent checkout, the home directory), so
// nothing there chooses what runs.
func walkUpTo(dir, root string, found func(dir string) bool) (string, bool) {
	root = filepath.Clean(root)
	for dir = filepath.Clean(dir); ; {
		if found(dir) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if dir == root || parent == dir || !within(parent, root) {
			return "", false
		}
		dir = parent
	}
}

// within reports whether dir is root or lies under it (lexically).
func within(dir, root string) bool {
	r, err := filepath.Rel(root, dir)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// fileHasLine reports whether a text file has a line starting with prefix
// (after spaces): enough to find a TOML table or an INI section without a
// parser.
func fileHasLine(path, prefix string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(nil, maxLine)
	for s.Scan() {
		if strings.HasPrefix(strings.TrimSpace(s.Text()), prefix) {
			return true
		}
	}
	return false
}

// anyFile reports whether dir holds a file matching one of the globs.
func anyFile(dir string, globs ...string) bool {
	for _, g := range globs {
		if m, _ := filepath.Glob(filepath.Join(dir, g)); len(m) > 0 {
			return true
		}
	}
	return false
}
