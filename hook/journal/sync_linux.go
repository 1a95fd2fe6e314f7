package journal

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// datasync syncs f's data and the metadata needed to read it back (its
// size), not its times: fdatasync.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// placeNew gives the file at tmp the name path unless path exists, and
// reports whether it did. renameat2 with RENAME_NOREPLACE does it in one
// step, so the file never has two names: a hook or a fold that opens it
// meanwhile would refuse a file with two (a hard link). A file system
// without it falls back to link and remove.
func placeNew(tmp, path string) (bool, error) {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EEXIST):
		return false, nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return linkNew(tmp, path)
	}
	return false, err
}
