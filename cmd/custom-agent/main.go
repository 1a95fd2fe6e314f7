// Command custom-agent is an agent runtime whose every tool call passes one
// permission gate and is recorded in an append-only, tamper-evident event log.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/custom-agent/custom-agent/support/termtext"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCmd().ExecuteContext(ctx)
	if err == nil {
		return
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintln(os.Stderr, termtext.Escape(ex.msg))
		}
		os.Exit(ex.code)
	}
	// An error may quote what a server, a file or a model said: escaped,
	// so that nothing in it acts on the terminal.
	fmt.Fprintln(os.Stderr, "custom-agent:", termtext.Escape(err.Error()))
	os.Exit(2)
}

// exitError carries a specific exit status out of a command. Commands return
// it when the status itself is the answer (audit verify: 1 means "tampered").
type exitError struct {
	code int
	msg  string
	err  error // what the status stands for, for errors.Is; optional
}

func (e *exitError) Error() string { return e.msg }

func (e *exitError) Unwrap() error { return e.err }
