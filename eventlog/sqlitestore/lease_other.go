//go:build !unix

package sqlitestore

import (
	"errors"
	"os"
)

const syscallNoFollow = 0

// tryLock: no flock here, so no session can be leased; recovery then
// closes nothing, rather than a live process's questions.
func tryLock(*os.File) (bool, error) {
	return false, errors.New("session leases need flock, which this system lacks")
}

func ownedByUs(os.FileInfo) bool { return true }
