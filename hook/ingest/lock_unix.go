//go:build unix

package ingest

import (
	"fmt"
	"os"
	"syscall"
)

// lock takes the journal's lock, waiting for another folding process.
func lock(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	f, err := os.OpenFile(lockPath(dir), os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("hook journal: locking: %w", err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}
