package journal

import (
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
