//go:build unix

package journal

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// noFollow opens a journal file itself, never what a symlink planted in
// its place points to (the open fails with ELOOP), and never waits on a
// FIFO planted there (O_NONBLOCK: it fails, or opens and fstat refuses it;
// on a regular file it changes nothing).
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// owned reports why fi, a journal file as opened, is not one this
// process may append to or fold: not a regular file, not the user's, or
// with another name (a hard link to a file elsewhere: linked). "" is fine.
func owned(fi fs.FileInfo) (why string, linked bool) {
	if !fi.Mode().IsRegular() {
		return fmt.Sprintf("not a regular file (%s)", fi.Mode().Type()), false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Sprintf("owned by uid %d, not by this user (uid %d)", st.Uid, uid), false
	}
	if st.Nlink > 1 {
		return fmt.Sprintf("it has %d names (a hard link: the same file is also elsewhere)", st.Nlink), true
	}
	return "", false
}
