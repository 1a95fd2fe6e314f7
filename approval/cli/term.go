package cli

import (
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/term"
)

// rawMode returns an Options.MakeRaw for the terminal fd. While the terminal
// is raw, a terminating signal first restores it and is then raised again
// with this handler removed, so the process ends as it would have, but
// leaves a usable terminal behind. (Other handlers registered with
// signal.Notify see such a signal twice.)
func rawMode(fd int) func() (func(), error) {
	return func() (func(), error) {
		old, err := term.MakeRaw(fd)
		if err != nil {
			return nil, err
		}
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
		done := make(chan struct{})
		var once sync.Once
		restore := func() {
			once.Do(func() {
				signal.Stop(sigs)
				close(done)
				_ = term.Restore(fd, old)
			})
		}
		go func() {
			select {
			case s := <-sigs:
				restore()
				if p, err := os.FindProcess(os.Getpid()); err == nil {
					_ = p.Signal(s)
				}
			case <-done:
			}
		}()
		return restore, nil
	}
}
