package cli

import "golang.org/x/sys/unix"

// flushInput discards what the terminal fd received and nobody read yet
// (tcflush TCIFLUSH): keys typed before a question was drawn.
func flushInput(fd int) error { return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
