package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReftableChangeUndone: a reftable repository's tables hold binary
// ids the check cannot follow yet, so a change to them is undone.
func TestReftableChangeUndone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".git")
	for rel, body := range map[string]string{
		"HEAD":                 "ref: refs/heads/.invalid\n",
		"refs/heads":           "this repository uses the reftable format\n",
		"reftable/tables.list": "0x000000000001-0x000000000001-a.ref\n",
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644))
	}
	s, err := readGitState(dir)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "reftable", "tables.list"), []byte("0x000000000001-0x000000000002-b.ref\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "reftable", "0x000000000001-0x000000000002-b.ref"), []byte("REFT"), 0o644))
	notes, errs := s.check(func(string) bool { return true })
	if len(errs) > 0 || len(notes) != 1 || !strings.Contains(notes[0], "reftable") {
		t.Fatalf("notes %q, errs %q", notes, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "reftable", "tables.list")); string(b) != "0x000000000001-0x000000000001-a.ref\n" {
		t.Errorf("tables.list = %q; want it put back", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "reftable", "0x000000000001-0x000000000002-b.ref")); err == nil {
		t.Error("the new table is still there")
	}
}
