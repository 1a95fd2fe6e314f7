package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A day file that is a symlink (planted by anything that can write the
// journal directory) makes every hook append its record to the link's
// target, any file the user can write (~/.bashrc: the record's strings are
// in double quotes, so $(…) in a logged command runs at the next login),
// and List skips the link, so ingest never folds those decisions.
func TestDayFileSymlinkRefused(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, Dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(root, "bashrc")
	if err := os.WriteFile(target, []byte("# rc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := os.Symlink(target, filepath.Join(dir, dayName(ts))); err != nil {
		t.Fatal(err)
	}
	werr := Write(dir, rec(ts, "$(touch pwned)"))
	b, _ := os.ReadFile(target)
	if strings.Contains(string(b), "toolCallId") {
		t.Errorf("the record was appended through the symlink to %s: %q", target, b)
	}
	ps, _ := List(dir)
	if werr == nil && len(ps) == 0 {
		t.Errorf("Write succeeded but List sees no journal file: the decision never reaches the log")
	}
}

// TestPlantedEntriesRefused: a day file planted as a hard link to a file
// elsewhere, or as a FIFO, is never written to (nor waited on), a
// journal directory that is a symlink is refused, and List lists every
// planted entry under a journal name (ReadFile then refuses it with
// ErrNotRegular) instead of skipping it.
func TestPlantedEntriesRefused(t *testing.T) {
	ts := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	t.Run("hard link", func(t *testing.T) {
		root := t.TempDir()
		dir := filepath.Join(root, Dir)
		os.MkdirAll(dir, 0o700)
		target := filepath.Join(root, "bashrc")
		os.WriteFile(target, []byte("# rc\n"), 0o600)
		if err := os.Link(target, filepath.Join(dir, dayName(ts))); err != nil {
			t.Skip("no hard links here:", err)
		}
		if err := Write(dir, rec(ts, "x")); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Write through a hard link: %v, want ErrNotRegular", err)
		}
		if b, _ := os.ReadFile(target); string(b) != "# rc\n" {
			t.Errorf("the linked file was written: %q", b)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), Dir)
		os.MkdirAll(dir, 0o700)
		p := filepath.Join(dir, dayName(ts))
		if err := mkfifo(p); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		if err := Write(dir, rec(ts, "x")); err == nil {
			t.Errorf("Write to a FIFO succeeded")
		}
		ps, err := List(dir)
		if err != nil || len(ps) != 1 {
			t.Fatalf("List: %v %v, want the FIFO listed", ps, err)
		}
		if _, err := ReadFile(ps[0]); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile of a FIFO: %v, want ErrNotRegular", err)
		}
	})
	t.Run("symlinks listed", func(t *testing.T) {
		root := t.TempDir()
		dir := filepath.Join(root, Dir)
		os.MkdirAll(dir, 0o700)
		target := filepath.Join(root, "t.jsonl")
		os.WriteFile(target, []byte(`{"v":1}`+"\n"), 0o600)
		for _, n := range []string{dayName(ts), "taken-00000000000000000001-" + dayName(ts), "1-2-3.json"} {
			if err := os.Symlink(target, filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
		ps, err := List(dir)
		if err != nil || len(ps) != 3 {
			t.Fatalf("List: %v %v, want the 3 links", ps, err)
		}
		for _, p := range ps {
			if _, err := ReadFile(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("ReadFile(%s): %v, want ErrNotRegular", p, err)
			}
		}
	})
	t.Run("directory symlink", func(t *testing.T) {
		root := t.TempDir()
		elsewhere := filepath.Join(root, "elsewhere")
		os.MkdirAll(elsewhere, 0o700)
		dir := filepath.Join(root, Dir)
		if err := os.Symlink(elsewhere, dir); err != nil {
			t.Fatal(err)
		}
		if err := Write(dir, rec(ts, "x")); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Write into a symlinked journal directory: %v, want ErrNotRegular", err)
		}
		if es, _ := os.ReadDir(elsewhere); len(es) > 0 {
			t.Errorf("written where the link points: %v", es)
		}
		if _, err := List(dir); !errors.Is(err, ErrNotRegular) {
			t.Errorf("List of a symlinked journal directory: %v, want ErrNotRegular", err)
		}
	})
}
