//go:build !unix

package main

import (
	"context"
	"os"
)

// newLinkSignals: there is no SIGUSR1 here; restart serve for a fresh link.
func newLinkSignals(ctx context.Context) <-chan os.Signal {
	out := make(chan os.Signal)
	go func() { <-ctx.Done(); close(out) }()
	return out
}

func freshLinkHint(int) string { return "for a fresh one, start serve again" }
