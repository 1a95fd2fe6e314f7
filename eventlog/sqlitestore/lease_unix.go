//go:build unix

package sqlitestore

import (
	"errors"
	"os"
	"syscall"
)

const syscallNoFollow = syscall.O_NOFOLLOW

// tryLock takes an exclusive flock on f without waiting; busy reports that
// another open file description holds it.
func tryLock(f *os.File) (busy bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

// ownedByUs reports whether the file belongs to this process's user.
func ownedByUs(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return !ok || int(sys.Uid) == os.Geteuid()
}
