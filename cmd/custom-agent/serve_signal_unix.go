//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// newLinkSignals delivers each SIGUSR1 until ctx ends: serve prints a
// fresh login link for each.
func newLinkSignals(ctx context.Context) <-chan os.Signal {
	in := make(chan os.Signal, 1)
	signal.Notify(in, syscall.SIGUSR1)
	out := make(chan os.Signal)
	go func() {
		defer close(out)
		defer signal.Stop(in)
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-in:
				select {
				case out <- s:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

func freshLinkHint(pid int) string {
	return fmt.Sprintf("for a fresh one: kill -USR1 %d", pid)
}
