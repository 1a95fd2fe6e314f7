package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEighthReview holds the eighth attacker review's findings against
// the checks that run on the host after a workspace call.
func TestEighthReview(t *testing.T) {
	l := newGitLab(t)
	w, git, repo := l.w, l.git, l.repo
	run := func(t *testing.T, dir, script string) error {
		t.Helper()
		_, err := l.run(t, dir, script)
		return err
	}

	t.Run("F1 a link in objects/ does not lead the check to delete files elsewhere", func(t *testing.T) {
		dir := repo(t, "e1")
		outside := filepath.Join(w.root, "outside")
		must(t, os.MkdirAll(outside, 0o755))
		// Written just before the call, as a log or an editor would: its
		// change time is in the window the check looks at.
		for _, f := range []string{"host.pack", "host.idx", "notes.txt"} {
			must(t, os.WriteFile(filepath.Join(outside, f), []byte("x"), 0o644))
		}
		err := run(t, dir, `ln -s `+outside+` .git/objects/info/commit-graphs; mv .git/objects/pack .git/objects/pack.orig && ln -s `+outside+` .git/objects/pack`)
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v", err)
		}
		for _, f := range []string{"host.pack", "host.idx", "notes.txt"} {
			if _, err := os.Stat(filepath.Join(outside, f)); err != nil {
				t.Errorf("%s, outside the project, was removed", f)
			}
		}
		for _, l := range []string{"objects/info/commit-graphs", "objects/pack"} {
			if fi, err := os.Lstat(filepath.Join(dir, ".git", l)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				t.Errorf("%s is still a link", l)
			}
		}
	})
	t.Run("F2 a FIFO as a pack's index does not hang the check", func(t *testing.T) {
		dir := repo(t, "e2")
		err := run(t, dir, `mkdir -p .git/objects/pack && mkfifo .git/objects/pack/pack-aaaa.idx && : > .git/objects/pack/pack-aaaa.pack`)
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git", "objects", "pack", "pack-aaaa.idx")); err == nil {
			t.Error("the FIFO is still there")
		}
	})
	t.Run("F3 a linked worktree's index", func(t *testing.T) {
		dir := repo(t, "e3")
		git(t, dir, "worktree", "add", "-q", filepath.Join(w.root, "e3-wt"), "-b", "wtb")
		err := run(t, dir, `b=$(echo "echo pwned" | git hash-object -w --stdin); GIT_INDEX_FILE=.git/worktrees/e3-wt/index git update-index --add --cacheinfo 100644,$b,.envrc`)
		if !errors.Is(err, ErrProtectedCreated) || !strings.Contains(err.Error(), "index") {
			t.Fatalf("Done = %v", err)
		}
		git(t, filepath.Join(w.root, "e3-wt"), "checkout", "--", ".")
		if _, err := os.Stat(filepath.Join(w.root, "e3-wt", ".envrc")); err == nil {
			t.Fatal("git checkout -- . in the worktree wrote the planted .envrc")
		}
	})
	t.Run("F4 hard links to one loose object are not inflated again and again", func(t *testing.T) {
		dir := repo(t, "e4")
		err := run(t, dir, `mkdir -p .git/objects/cd && head -c 100000 /dev/zero | gzip -c > .git/objects/cd/`+strings.Repeat("0", 38)+` && for i in 1 2 3 4 5 6 7; do ln .git/objects/cd/`+strings.Repeat("0", 38)+` .git/objects/cd/`+strings.Repeat("0", 37)+`$i; done`)
		if !errors.Is(err, ErrProtectedCreated) || !strings.Contains(err.Error(), "one name") {
			t.Fatalf("Done = %v", err)
		}
		ents, _ := os.ReadDir(filepath.Join(dir, ".git", "objects", "cd"))
		if len(ents) != 0 {
			t.Errorf("%d of the linked names are still there", len(ents))
		}
	})
}
