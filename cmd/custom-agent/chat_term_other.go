//go:build !linux

package main

import "errors"

// turnMode leaves the terminal as it is where termios is not known here:
// keys typed during a turn are echoed.
func turnMode(int) (func(), error) { return func() {}, nil }

func flushTerminal(int) error {
	return errors.New("flushing terminal input is not supported on this system")
}
