package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSeventhReview holds the seventh attacker review's ways past the
// refs check: each leaves a commit (or an object) that a later ordinary
// git command checks out, writing .githooks/post-checkout, or makes the
// check itself write outside the repository.
func TestSeventhReview(t *testing.T) {
	l := newGitLab(t)
	w, git, notPwned := l.w, l.try, l.notPwned
	// evil prints a commit on HEAD whose tree adds .githooks/post-checkout.
	const evil = `evil() { b=$(printf '#!/bin/sh\ntouch "%s"\n' "$PWNED" | git hash-object -w --stdin)
h=$(printf '100755 blob %s\tpost-checkout\n' $b | git mktree)
t=$( (git ls-tree HEAD; printf '040000 tree %s\t.githooks\n' $h) | git mktree)
git commit-tree $t -p HEAD -m evil; }
`
	run := func(t *testing.T, dir, script string) error {
		t.Helper()
		_, err := l.run(t, dir, evil+script)
		return err
	}
	repo := func(t *testing.T, name string) string {
		t.Helper()
		dir := filepath.Join(w.root, name)
		must(t, os.MkdirAll(filepath.Join(dir, ".github"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, ".github", "dependabot.yml"), []byte("version: 2\n"), 0o644))
		for _, args := range [][]string{{"init", "-q", "-b", "main", "."}, {"config", "core.hooksPath", ".githooks"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
			if out, err := git(dir, args...); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		return dir
	}
	caught := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v; want the change undone, saying so", err)
		}
	}
	t.Run("R1 the rollback does not write through a linked refs directory", func(t *testing.T) {
		dir := repo(t, "r1")
		victim := filepath.Join(w.root, "victim")
		must(t, os.MkdirAll(victim, 0o755))
		must(t, os.WriteFile(filepath.Join(victim, ".bashrc"), []byte("original\n"), 0o644))
		if err := run(t, dir, `mkdir -p .git/refs/x && printf 'echo OWNED\n' > .git/refs/x/.bashrc`); err != nil {
			t.Fatalf("call 1: Done = %v", err)
		}
		caught(t, run(t, dir, `c=$(evil); rm -rf .git/refs/x; ln -s `+victim+` .git/refs/x; git update-ref refs/heads/evil $c`))
		if b, _ := os.ReadFile(filepath.Join(victim, ".bashrc")); string(b) != "original\n" {
			t.Fatalf("the victim's .bashrc = %q", b)
		}
		if fi, err := os.Lstat(filepath.Join(dir, ".git", "refs", "x")); err != nil || !fi.IsDir() {
			t.Errorf("refs/x is not a real directory again: %v", err)
		}
	})
	t.Run("R2 a ref in upper-case hex", func(t *testing.T) {
		dir := repo(t, "r2")
		caught(t, run(t, dir, `evil | tr a-f A-F > .git/refs/heads/evil`))
		git(dir, "checkout", "-q", "evil")
		notPwned(t)
	})
	t.Run("R3 a ref that is a link to a file in the tree", func(t *testing.T) {
		dir := repo(t, "r3")
		caught(t, run(t, dir, `evil > notes.txt; ln -s ../../../notes.txt .git/refs/heads/feature`))
		if _, err := os.Lstat(filepath.Join(dir, ".git", "refs", "heads", "feature")); err == nil {
			t.Error("the linked ref is still there")
		}
		git(dir, "checkout", "-q", "feature")
		notPwned(t)
	})
	t.Run("R4 a reflog past the bounds does not keep a new ref", func(t *testing.T) {
		dir := repo(t, "r4")
		caught(t, run(t, dir, `git update-ref refs/heads/evil $(evil); head -c 70000000 /dev/zero > .git/logs/refs/heads/zz`))
		if _, err := git(dir, "rev-parse", "--verify", "-q", "evil"); err == nil {
			t.Error("refs/heads/evil is still there")
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "logs", "refs", "heads", "zz")); err == nil {
			t.Error("the oversized reflog is still there (every later call would fail)")
		}
	})
	t.Run("R5 a ref to an object not made yet", func(t *testing.T) {
		dir := repo(t, "r5")
		caught(t, run(t, dir, `b=$(printf 'x\n' | git hash-object --stdin); t=$(printf '100644 blob %s\tx\n' $b | git mktree --missing); c=$(git commit-tree $t -m x 2>/dev/null || echo 1234567890123456789012345678901234567890); echo 1234567890abcdef1234567890abcdef12345678 > .git/refs/heads/later`))
		if _, err := os.Lstat(filepath.Join(dir, ".git", "refs", "heads", "later")); err == nil {
			t.Error("the ref to a missing object is still there")
		}
	})
	t.Run("R6 a chain of eleven tags", func(t *testing.T) {
		dir := repo(t, "r6")
		caught(t, run(t, dir, `o=$(evil); ty=commit; for i in 1 2 3 4 5 6 7 8 9 10 11; do o=$(printf 'object %s\ntype %s\ntag t%s\ntagger a <a@b> 0 +0000\n\nx\n' $o $ty $i | git mktag); ty=tag; done; git update-ref refs/tags/v1 $o`))
		git(dir, "checkout", "-q", "v1")
		notPwned(t)
	})
	t.Run("R7 BISECT_START", func(t *testing.T) {
		dir := repo(t, "r7")
		caught(t, run(t, dir, `evil > .git/BISECT_START; echo "git bisect start" > .git/BISECT_LOG`))
		git(dir, "bisect", "reset")
		notPwned(t)
	})
	t.Run("R8 MERGE_AUTOSTASH", func(t *testing.T) {
		dir := repo(t, "r8")
		caught(t, run(t, dir, `evil > .git/MERGE_AUTOSTASH`))
		if _, err := os.Lstat(filepath.Join(dir, ".git", "MERGE_AUTOSTASH")); err == nil {
			t.Error("MERGE_AUTOSTASH is still there")
		}
	})
	t.Run("R9 a replace ref", func(t *testing.T) {
		dir := repo(t, "r9")
		caught(t, run(t, dir, `b=$(echo 'on: push' | git hash-object -w --stdin); w=$(printf '100644 blob %s\tevil.yml\n' $b | git mktree); t=$( (git ls-tree HEAD:.github; printf '040000 tree %s\tworkflows\n' $w) | git mktree); git replace $(git rev-parse HEAD:.github) $t`))
		if out, _ := git(dir, "replace", "-l"); out != "" {
			t.Errorf("replace refs left: %s", out)
		}
	})
	t.Run("R10 the loose object of an existing tree replaced", func(t *testing.T) {
		dir := repo(t, "r10")
		if out, err := git(dir, "rev-parse", "HEAD:.github"); err != nil {
			t.Fatal(out)
		}
		caught(t, run(t, dir, `b=$(echo 'on: push' | git hash-object -w --stdin); w=$(printf '100644 blob %s\tevil.yml\n' $b | git mktree); t=$( (git ls-tree HEAD:.github; printf '040000 tree %s\tworkflows\n' $w) | git mktree)
o=$(git rev-parse HEAD:.github); src=.git/objects/$(echo $t | cut -c1-2)/$(echo $t | cut -c3-); dst=.git/objects/$(echo $o | cut -c1-2)/$(echo $o | cut -c3-); rm -f $dst; cp $src $dst`))
		git(dir, "reset", "-q", "--hard")
		if _, err := os.Stat(filepath.Join(dir, ".github", "workflows", "evil.yml")); err == nil {
			t.Fatal("git reset --hard wrote the planted workflow")
		}
	})
}
