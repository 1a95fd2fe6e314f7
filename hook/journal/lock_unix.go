//go:build unix

package journal

import (
	"os"
	"syscall"
)

// lockFile takes f's lock, exclusive or shared, waiting for it; closing f
// releases it.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
