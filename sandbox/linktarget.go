package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// maxLinkWalk bounds the entries the plan reads in protected directories,
// and in the directories protected links lead to, when it looks for
// links, and the links it follows from them. Past it the plan fails
// (ErrUnprotectable): a link in the part not read could lead to a file
// the process may write. A variable for the tests only.
var maxLinkWalk = 10_000

// maxHops bounds the links followed to resolve one path, as the kernel
// and filepath.EvalSymlinks do: a loop ends there.
const maxHops = 255

// linkTargets are what the walk of the working directory protected that
// can lead elsewhere: protected paths that are links (protect protects
// the link's directory), and protected directories, which may hold links.
// A mount on a link's directory keeps the link, not the file it leads
// to: .git/hooks/pre-commit -> ../../scripts/pre-commit.sh leaves
// scripts/pre-commit.sh writable, and the host's git commit runs it.
type linkTargets struct {
	links []string // protected paths that are symbolic links
	dirs  []string // protected directories
}

// protect protects, in p, what the recorded links lead to when it lies
// in a writable directory: the final target (a file, or a directory,
// itself then searched for links), and the directory of every link on
// the way (a chain, or a link among the directories of the path), which
// the process could otherwise retarget. A target missing is absent
// (removed after the call if made). A target that is or holds a writable
// directory cannot be protected, nor a link on the way right in one, nor
// a chain that does not end (a loop), nor more than maxLinkWalk entries:
// the plan fails with ErrUnprotectable. A target outside every writable
// directory needs nothing: the process cannot write there.
func (lt *linkTargets) protect(p *Profile) error {
	entries := 0
	resolved := map[string]bool{} // links done
	var scanned []string          // directories searched for links
	queue := append([]string(nil), lt.links...)
	// scan adds the links beneath dir to the queue, following none.
	scan := func(dir string) error {
		for _, s := range scanned {
			if pathrisk.Within(dir, s) {
				return nil
			}
		}
		scanned = append(scanned, dir)
		return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == dir && errors.Is(err, fs.ErrNotExist) {
					return nil // gone since: nothing to follow
				}
				// One that cannot be listed may still be entered
				// (mode 0111), and a link in it followed.
				return fmt.Errorf("%w: %q cannot be read to look for links in it (%w)", ErrUnprotectable, relTo(p.Cwd, path), err)
			}
			if entries++; entries > maxLinkWalk {
				return fmt.Errorf("%w: more than %d entries in protected directories and the directories protected links lead to (%q); a link among those not read could lead to a file the process may write", ErrUnprotectable, maxLinkWalk, relTo(p.Cwd, dir))
			}
			if d.Type()&fs.ModeSymlink != 0 {
				queue = append(queue, path)
			}
			return nil
		})
	}
	for _, d := range lt.dirs {
		if err := scan(d); err != nil {
			return err
		}
	}
	for len(queue) > 0 {
		link := queue[0]
		queue = queue[1:]
		if resolved[link] {
			continue
		}
		resolved[link] = true
		if entries++; entries > maxLinkWalk {
			return fmt.Errorf("%w: more than %d links to follow from protected paths", ErrUnprotectable, maxLinkWalk)
		}
		target, hops, missing, err := resolveLinks(link)
		if err != nil {
			return fmt.Errorf("%w: %q, a protected link, cannot be followed (%w)", ErrUnprotectable, relTo(p.Cwd, link), err)
		}
		// The links on the way: their directories read-only, as for the
		// protected link itself, or the plan fails.
		for _, h := range hops {
			if h == link || !writableAt(p, h) {
				continue
			}
			parent := filepath.Dir(h)
			if isWritableDir(p, parent) {
				return fmt.Errorf("%w: %q, on the way from the protected link %q, is a link right in a writable directory (a process could retarget it)", ErrUnprotectable, relTo(p.Cwd, h), relTo(p.Cwd, link))
			}
			if !covered(p.Protected, parent) {
				p.Protected = append(p.Protected, parent)
			}
		}
		for _, w := range p.Writable {
			if pathrisk.Within(w, target) {
				return fmt.Errorf("%w: %q, a protected link, leads to %q, which is or holds a writable directory and cannot be made read-only", ErrUnprotectable, relTo(p.Cwd, link), target)
			}
		}
		if !writableAt(p, target) {
			continue // read-only to the process already
		}
		if missing {
			// Nothing to mount: what the process makes there is
			// removed after the call.
			p.Absent = append(p.Absent, target)
			continue
		}
		if !covered(p.Protected, target) {
			p.Protected = append(p.Protected, target)
		}
		if fi, err := os.Lstat(target); err == nil && fi.IsDir() {
			if err := scan(target); err != nil {
				return err
			}
		}
	}
	return nil
}

// writableAt reports whether path lies in one of p's writable directories.
func writableAt(p *Profile, path string) bool {
	for _, w := range p.Writable {
		if pathrisk.Within(path, w) {
			return true
		}
	}
	return false
}

// isWritableDir reports whether dir is one of p's writable directories.
func isWritableDir(p *Profile, dir string) bool {
	for _, w := range p.Writable {
		if dir == w {
			return true
		}
	}
	return false
}

// covered reports whether path is, or lies beneath, a protected path: a
// read-only mount covers it already.
func covered(protected []string, path string) bool {
	for _, q := range protected {
		if pathrisk.Within(path, q) {
			return true
		}
	}
	return false
}

// relTo is path relative to cwd when it lies beneath it, else path.
func relTo(cwd, path string) string {
	if pathrisk.Within(path, cwd) {
		if rel, err := filepath.Rel(cwd, path); err == nil {
			return rel
		}
	}
	return path
}

// resolveLinks resolves the absolute path as filepath.EvalSymlinks does,
// and returns as well every link it went through (path itself first when
// it is one, then each link of a chain and each link among the
// directories of a target). When the target does not exist, it returns
// the path it would have (missing): the existing part resolved, the rest
// as written. A chain of more than maxHops links (a loop) is an error,
// as is a file where a directory is needed.
func resolveLinks(path string) (target string, hops []string, missing bool, err error) {
	dest := "/"
	rest := strings.Split(filepath.Clean(path), "/")
	for n := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, c)
		// What resolves against the resolving process (its working
		// directory, its descriptors) resolves differently for git on
		// the host than here: it cannot be followed.
		if pathrisk.Within(next, "/proc") || pathrisk.Within(next, "/dev/fd") {
			return "", hops, false, fmt.Errorf("it leads through %s, which resolves differently for each process", next)
		}
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			// Beyond a missing component the rest cannot be resolved
			// on disk: a ".." after it goes wherever the directory
			// made there leads, so the missing component itself is the
			// target (what is made there is removed after the call).
			if slices.Contains(rest, "..") {
				return next, hops, true, nil
			}
			return filepath.Join(append([]string{next}, rest...)...), hops, true, nil
		}
		if err != nil {
			return "", hops, false, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if len(rest) > 0 && !fi.IsDir() {
				return "", hops, false, fmt.Errorf("%s is not a directory", next)
			}
			dest = next
			continue
		}
		if n++; n > maxHops {
			return "", hops, false, fmt.Errorf("more than %d links on the way, a loop", maxHops)
		}
		hops = append(hops, next)
		to, err := os.Readlink(next)
		if err != nil {
			return "", hops, false, err
		}
		if filepath.IsAbs(to) {
			dest = "/"
		}
		rest = append(strings.Split(to, "/"), rest...)
	}
	return dest, hops, false, nil
}

// protectedFileIDs are the files with more than one name among the
// protected paths: each such file, and each beneath a protected
// directory (read without following links, at most maxLinkWalk entries
// in all; past that the plan fails, as a name left unprotected could
// change a file that runs later).
func protectedFileIDs(protected []string) (map[fileID]bool, error) {
	ids := map[fileID]bool{}
	entries := 0
	for _, q := range protected {
		err := filepath.WalkDir(q, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // gone, or unreadable: its mount covers it whole
			}
			if entries++; entries > maxLinkWalk {
				return fmt.Errorf("%w: more than %d entries in protected paths to look for files with another name in", ErrUnprotectable, maxLinkWalk)
			}
			if !d.Type().IsRegular() {
				return nil
			}
			var st syscall.Stat_t
			if syscall.Lstat(path, &st) == nil && st.Nlink > 1 {
				ids[fileID{uint64(st.Dev), st.Ino}] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}
