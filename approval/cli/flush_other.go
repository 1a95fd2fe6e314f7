//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package cli

import "errors"

// flushInput is not available here; the key guard still drops keys that
// arrive in the first moment after a question is drawn.
func flushInput(int) error {
	return errors.New("flushing terminal input is not supported on this system")
}
