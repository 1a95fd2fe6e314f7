package main

import "golang.org/x/sys/unix"

// turnMode sets the terminal for a running turn: keys are not echoed (they
// would land in the middle of the output) and are read one by one, and
// Ctrl-C still sends SIGINT, which cancels the turn. It returns the
// function that restores the terminal as it was.
func turnMode(fd int) (func(), error) {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	old := *t
	t.Lflag &^= unix.ECHO | unix.ICANON | unix.IEXTEN
	t.Lflag |= unix.ISIG
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, &old) }, nil
}

// flushTerminal discards what the terminal received and nobody read yet.
func flushTerminal(fd int) error { return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
