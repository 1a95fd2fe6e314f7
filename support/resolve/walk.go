package resolve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// errProcessPath: a path leads through /proc or /dev, where it names
// different files for different processes (/proc/self/cwd is the gate's
// working directory for the gate and git's for git).
var errProcessPath = errors.New("leads under /proc or /dev, which name different files for different processes")

// maxWalkLinks bounds the links one path may follow, as the kernel's 40.
const maxWalkLinks = 40

// walkPath resolves the absolute path p as the kernel does: component by
// component, each link followed where it stands, a ".." after a link
// taken from where the link led. exists is false when a component is
// missing, resolved then being the resolved part joined with the rest.
// It refuses (an error) a path that is under /proc or /dev, or reaches
// there through a link, and one through more than maxWalkLinks links.
func walkPath(p string) (resolved string, exists bool, err error) {
	if !strings.HasPrefix(p, "/") {
		return "", false, fmt.Errorf("%q is not absolute", p)
	}
	return walkFrom("/", p)
}

// walkFrom is walkPath of rel taken from base, a directory walkPath
// resolved already (so that a file in a git directory costs one lstat, not
// one a component); an absolute rel starts from /.
func walkFrom(base, rel string) (resolved string, exists bool, err error) {
	dest, rest, links := base, rel, 0
	if strings.HasPrefix(rel, "/") {
		dest = "/"
	}
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := dest + "/" + c
		if dest == "/" {
			next = "/" + c
		}
		if processRelative(next) || next == "/dev" || strings.HasPrefix(next, "/dev/") {
			return "", false, errProcessPath
		}
		var st unix.Stat_t
		err := unix.Lstat(next, &st)
		switch {
		case errors.Is(err, unix.ENOENT):
			return filepath.Join(next, rest), false, nil
		case err != nil:
			return "", false, &os.PathError{Op: "lstat", Path: next, Err: err}
		case st.Mode&unix.S_IFMT != unix.S_IFLNK:
			dest = next
			continue
		}
		if links++; links > maxWalkLinks {
			return "", false, fmt.Errorf("%q: too many links", rel)
		}
		t, err := os.Readlink(next)
		if err != nil {
			return "", false, err
		}
		if strings.HasPrefix(t, "/") {
			dest = "/"
		}
		rest = t + "/" + rest
	}
	return dest, true, nil
}

// physical returns where p leads, relative to base unless absolute (joined,
// not cleaned: a link before a ".." is followed first), resolved by walkPath.
// ok is false when walkPath refuses it.
func physical(base, p string) (resolved string, exists, ok bool) {
	r, exists, err := walkPath(relTo(base, p))
	return r, exists, err == nil
}

// dirOf is the directory part of the path p as written, without cleaning:
// what git takes a relative include from (the including file's path up to
// its last slash).
func dirOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
