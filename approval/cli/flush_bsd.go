//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package cli

import "golang.org/x/sys/unix"

// flushInput discards what the terminal fd received and nobody read yet:
// TIOCFLUSH with FREAD (1 in <sys/fcntl.h>), which is tcflush TCIFLUSH.
func flushInput(fd int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, 1) }
