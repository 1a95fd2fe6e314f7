package sandbox

import (
	"crypto/sha1"
	"os"
	"os/exec"
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
	s, err := readGitState(dir, filepath.Dir(dir))
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

// TestVerifyPack: a pack whose index names an id at an offset where the
// pack holds another object is told apart from a sound one.
func TestVerifyPack(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git must be installed under CI=true")
		}
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"}
	must(t, os.WriteFile(filepath.Join(dir, "a"), []byte("one\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "b"), []byte("two\n"), 0o644))
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "-A"}, {"commit", "-q", "-m", "x"}, {"repack", "-a", "-d", "-q"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("packs: %v", idx)
	}
	root, err := os.OpenRoot(filepath.Join(dir, ".git"))
	must(t, err)
	defer root.Close()
	base, _ := filepath.Rel(filepath.Join(dir, ".git"), strings.TrimSuffix(idx[0], ".idx"))
	if why := verifyPack(root, base); why != "" {
		t.Fatalf("a sound pack: %s", why)
	}
	b, err := os.ReadFile(idx[0])
	must(t, err)
	n := int(b[8+255*4])<<24 | int(b[8+255*4+1])<<16 | int(b[8+255*4+2])<<8 | int(b[8+255*4+3])
	offsets := 8 + 256*4 + n*20 + n*4
	first, second := offsets, offsets+4
	for i := range 4 {
		b[first+i], b[second+i] = b[second+i], b[first+i]
	}
	// The index's own checksum made again, as an attacker would.
	sum := sha1.Sum(b[:len(b)-20])
	copy(b[len(b)-20:], sum[:])
	must(t, os.Chmod(idx[0], 0o644))
	must(t, os.WriteFile(idx[0], b, 0o644))
	if why := verifyPack(root, base); !strings.Contains(why, "where the pack holds another object") {
		t.Fatalf("a pack whose index swaps two objects: %q", why)
	}
}
