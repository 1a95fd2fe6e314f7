//go:build !unix

package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// lock takes the journal's lock, a file created exclusively, waiting up to
// ten seconds for another folding process.
func lock(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	for range 200 {
		f, err := os.OpenFile(lockPath(dir), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return func() { os.Remove(lockPath(dir)) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("hook journal: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("hook journal: %s is held by another process (remove it if none runs)", lockPath(dir))
}
