package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular is returned by ReadCurrentFile for a path that is not a
// regular file (a named pipe, a device, a directory): there is nothing to
// diff, and reading it could block the question forever (a FIFO with no
// writer) or never end (/dev/zero).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooBig is returned by ReadCurrentFile for a file bigger than the UI
// compares.
var ErrTooBig = errors.New("too big to compare here")

// ReadCurrentFile reads a file's current content for a write_file diff,
// the default of Options.ReadFile: it opens without blocking (a FIFO's
// open would wait for a writer), requires a regular file, and reads at
// most maxEditFile bytes (ErrTooBig past that).
func ReadCurrentFile(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s: %w", name, kindOf(fi.Mode()), ErrNotRegular)
	}
	if fi.Size() > maxEditFile {
		return nil, fmt.Errorf("%s holds %d bytes: %w", name, fi.Size(), ErrTooBig)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxEditFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxEditFile { // it grew since the stat
		return nil, fmt.Errorf("%s holds more than %d bytes: %w", name, maxEditFile, ErrTooBig)
	}
	return b, nil
}

// kindOf names what a path that is not a regular file is.
func kindOf(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}
