//go:build unix

package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after a
// generous wait: a read that blocks on a FIFO never returns at all.
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return: it blocks", what)
		panic("unreachable")
	}
}

// A write_file question whose path is a FIFO (the reviewer's finding 7)
// is shown at once, saying why there is no diff: the current content is
// read without waiting for a writer, and only from a regular file.
func TestWriteFileDiffOfAFIFODoesNotBlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"path": "pipe", "content": "x\n"})

	// The default reader of the terminal UI.
	u := New(nil, strings.NewReader(""), &strings.Builder{}, nil)
	type diff struct {
		summary string
		lines   []DiffLine
		ok      bool
	}
	got := within(t, "EditDiff of a FIFO", func() diff {
		s, l, ok := EditDiff("write_file", args, dir, u.opts.ReadFile)
		return diff{s, l, ok}
	})
	if !got.ok || !strings.Contains(got.summary, "no diff") || !strings.Contains(got.summary, "named pipe") {
		t.Errorf("summary = %q (ok %v), want it to say there is no diff of a named pipe", got.summary, got.ok)
	}
	if len(got.lines) != 1 || got.lines[0].Text != "+x" {
		t.Errorf("lines = %+v, want the new content", got.lines)
	}

	err := readErr(t, fifo)
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadCurrentFile(fifo) error = %v, want ErrNotRegular", err)
	}
}

// readErr is ReadCurrentFile's error, bounded in time.
func readErr(t *testing.T, name string) error {
	t.Helper()
	return within(t, "ReadCurrentFile("+name+")", func() error {
		_, err := ReadCurrentFile(name)
		return err
	})
}

// Only a regular file of at most maxEditFile bytes is read: a device that
// never ends (/dev/zero), a directory and a big file are not.
func TestReadCurrentFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(small, []byte("a\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, maxEditFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadCurrentFile(small); err != nil || string(b) != "a\nb\n" {
		t.Errorf("ReadCurrentFile(small) = %q, %v", b, err)
	}
	if err := readErr(t, big); !errors.Is(err, ErrTooBig) {
		t.Errorf("ReadCurrentFile(big) error = %v, want ErrTooBig", err)
	}
	if err := readErr(t, dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadCurrentFile(dir) error = %v, want ErrNotRegular", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if err := readErr(t, "/dev/zero"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadCurrentFile(/dev/zero) error = %v, want ErrNotRegular", err)
		}
	}
	if err := readErr(t, filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadCurrentFile(missing) error = %v, want ErrNotExist", err)
	}
	args, _ := json.Marshal(map[string]string{"path": big, "content": "x\n"})
	if s, _, _ := EditDiff("write_file", args, "", ReadCurrentFile); !strings.Contains(s, "too big to compare") {
		t.Errorf("summary of a big file = %q", s)
	}
}
