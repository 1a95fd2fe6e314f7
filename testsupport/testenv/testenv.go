// Package testenv lets tests that need a real program (npm, go, …) skip on
// a developer's machine that lacks it, and fail in CI (CI=true), where the
// test command installs everything the tests need; and it holds the few
// helpers tests of several packages share.
package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// InCI reports whether the tests run in CI.
func InCI() bool { return os.Getenv("CI") == "true" }

// NeedProgram skips the test, naming what is missing, unless the program is
// on PATH; in CI a missing program fails the test instead.
func NeedProgram(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	if InCI() {
		t.Fatalf("%s is not installed, and CI must run every test: install it in scripts/test", name)
	}
	t.Skipf("%s is not installed: skipping the test that runs it", name)
}

// Buffer is a bytes.Buffer that a test may read (String) while another
// goroutine writes to it: a UI's or a command's output under test.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// WriteString writes s.
func (l *Buffer) WriteString(s string) { l.Write([]byte(s)) }

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
