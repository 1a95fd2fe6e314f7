//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyResize delivers the terminal's SIGWINCH, for Options.Resized. The
// channel holds one signal: more arriving before it is read change
// nothing, since the question is drawn at the size of the moment.
func notifyResize() <-chan struct{} {
	sigs := make(chan os.Signal, 1)
	out := make(chan struct{}, 1)
	signal.Notify(sigs, syscall.SIGWINCH)
	go func() {
		for range sigs {
			select {
			case out <- struct{}{}:
			default:
			}
		}
	}()
	return out
}
