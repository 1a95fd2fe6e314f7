//go:build linux

// Package ptytest opens pseudo-terminals for tests of what a person at a
// terminal sees: /dev/ptmx through golang.org/x/sys/unix, no cgo and no
// other dependency.
package ptytest

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// PTY is a pseudo-terminal: the test holds Master (it types into it and
// reads what the terminal would show) and gives Slave to the code under
// test as its terminal. Both are non-blocking files on Go's poller, so
// closing one ends a Read blocked on it; use SlaveFD for ioctls, never
// Slave.Fd(), which would make the file blocking.
type PTY struct {
	Master, Slave *os.File
	SlaveFD       int
	slaveName     string

	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

// Open opens a pseudo-terminal of 80×24 and starts recording what is
// written to it; both ends are closed when the test ends.
func Open(t testing.TB) *PTY {
	t.Helper()
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(mfd)
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(mfd)
		t.Fatalf("ptsname: %v", err)
	}
	name := fmt.Sprintf("/dev/pts/%d", n)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(mfd)
		t.Fatalf("open %s: %v", name, err)
	}
	p := &PTY{Master: os.NewFile(uintptr(mfd), "/dev/ptmx"), Slave: os.NewFile(uintptr(sfd), name),
		SlaveFD: sfd, slaveName: name, done: make(chan struct{})}
	if err := p.Resize(80, 24); err != nil {
		t.Fatal(err)
	}
	go p.record()
	t.Cleanup(func() {
		p.Slave.Close()
		p.Master.Close()
		<-p.done
	})
	return p
}

// OpenSlave opens the terminal again, blocking, for a child process's
// stdin (the caller closes it once the child started).
func (p *PTY) OpenSlave() (*os.File, error) {
	return os.OpenFile(p.slaveName, os.O_RDWR|unix.O_NOCTTY, 0)
}

func (p *PTY) record() {
	defer close(p.done)
	buf := make([]byte, 4096)
	for {
		n, err := p.Master.Read(buf)
		p.mu.Lock()
		p.out.Write(buf[:n])
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Resize sets the terminal's size.
func (p *PTY) Resize(cols, rows int) error {
	return unix.IoctlSetWinsize(p.SlaveFD, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
}

// Type writes keys as typed at the keyboard.
func (p *PTY) Type(t testing.TB, keys string) {
	t.Helper()
	if _, err := p.Master.WriteString(keys); err != nil {
		t.Fatalf("type %q: %v", keys, err)
	}
}

// Output is everything the terminal received so far.
func (p *PTY) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// WaitFor waits until the output holds s, failing the test after timeout.
func (p *PTY) WaitFor(t testing.TB, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.Output(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q; it shows:\n%q", s, p.Output())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Termios is the terminal's settings now (tcgetattr): whether the code
// under test left it raw, or as it found it.
func (p *PTY) Termios(t testing.TB) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(p.SlaveFD, unix.TCGETS)
	if err != nil {
		t.Fatalf("tcgetattr: %v", err)
	}
	return *tio
}

// Cooked says whether settings are a line terminal's: the keys a line
// at a time (ICANON), echoed (ECHO), Ctrl-C a signal (ISIG) and newlines
// output as CR LF (OPOST, ONLCR). Raw mode clears them all. It returns
// the ones missing, "" when none is.
func Cooked(tio unix.Termios) string {
	var missing []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"ICANON", tio.Lflag&unix.ICANON != 0}, {"ECHO", tio.Lflag&unix.ECHO != 0}, {"ISIG", tio.Lflag&unix.ISIG != 0},
		{"OPOST", tio.Oflag&unix.OPOST != 0}, {"ONLCR", tio.Oflag&unix.ONLCR != 0},
	} {
		if !f.set {
			missing = append(missing, f.name)
		}
	}
	return strings.Join(missing, " ")
}
