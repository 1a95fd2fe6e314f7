package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteListRead: records come back in the order written, whole; files
// being written and files of another version are not records.
func TestWriteListRead(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), Dir)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		r := &Record{V: Version, Source: "claude-code", SessionID: "claude-code-s", TS: t0.Add(time.Duration(2-i) * time.Second),
			Cwd: "/p", Mode: "default", Events: []Entry{{Type: "tool.completed", Payload: []byte(`{"toolCallId":"t"}`)}}}
		if err := Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".tmp-123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	paths, err := List(dir)
	if err != nil || len(paths) != 3 {
		t.Fatalf("List: %v, %v", paths, err)
	}
	var last time.Time
	for i, p := range paths {
		r, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && !r.TS.After(last) {
			t.Errorf("%s is not after the record before it", filepath.Base(p))
		}
		last = r.TS
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v", p, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("the journal has mode %v", fi.Mode().Perm())
	}
	if err := os.WriteFile(paths[0], []byte(`{"v":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(paths[0]); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("another version: %v", err)
	}
	if ps, err := List(filepath.Join(dir, "missing")); err != nil || len(ps) != 0 {
		t.Errorf("a missing journal: %v, %v", ps, err)
	}
}
