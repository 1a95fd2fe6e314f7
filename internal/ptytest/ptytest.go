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
// test as its terminal.
type PTY struct {
	Master, Slave *os.File

	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

// Open opens a pseudo-terminal of 80×24 and starts recording what is
// written to it; both ends are closed when the test ends.
func Open(t testing.TB) *PTY {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		m.Close()
		t.Fatalf("open slave: %v", err)
	}
	p := &PTY{Master: m, Slave: s, done: make(chan struct{})}
	if err := p.Resize(80, 24); err != nil {
		t.Fatal(err)
	}
	go p.record()
	t.Cleanup(func() {
		s.Close()
		m.Close()
		<-p.done
	})
	return p
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
	return unix.IoctlSetWinsize(int(p.Slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
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
