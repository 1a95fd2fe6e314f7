package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/sandbox/enforce"
)

// TestSixthReview holds the sixth attacker review's findings about git:
// each leaves, from a workspace call, something that runs code on the host
// at the next git command. The host's git command is run for real after
// the call, and the payload (a file made outside the project) must not
// appear.
func TestSixthReview(t *testing.T) {
	l := newGitLab(t)
	run, git, repo, notPwned := l.run, l.git, l.repo, l.notPwned
	hostGit := func(dir string, args ...string) { _, _ = l.try(dir, args...) }
	hook := `printf '#!/bin/sh\ntouch "%s"\n' "$PWNED"`

	t.Run("F1 a garbage HEAD in .git makes the working directory a bare repository", func(t *testing.T) {
		dir := repo(t, "f1")
		_, err := run(t, dir, `printf 'garbage\n' > .git/HEAD; printf 'ref: refs/heads/main\n' > HEAD; : > objects; : > refs; chmod 755 objects refs
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = %s\n\tfsmonitor = "touch %s; false"\n' "$PWD" "$PWNED" > config`)
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v", err)
		}
		hostGit(dir, "status")
		notPwned(t)
		if b, _ := os.ReadFile(filepath.Join(dir, ".git", "HEAD")); string(b) != "ref: refs/heads/main\n" {
			t.Errorf(".git/HEAD = %q; want it put back", b)
		}
	})
	t.Run("F1 a subdirectory made a repository with plain files for objects and refs", func(t *testing.T) {
		dir := repo(t, "f1b")
		_, err := run(t, dir, `mkdir src && cd src && printf 'ref: refs/heads/main\n' > HEAD && : > objects && : > refs && chmod 755 objects refs
printf '[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "touch %s; false"\n' "$PWNED" > config`)
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v", err)
		}
		hostGit(filepath.Join(dir, "src"), "status")
		notPwned(t)
	})
	t.Run("F2 a commit delivers a hook through core.hooksPath at checkout", func(t *testing.T) {
		dir := repo(t, "f2")
		must(t, os.MkdirAll(filepath.Join(dir, ".githooks"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, ".githooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755))
		git(t, dir, "config", "core.hooksPath", ".githooks")
		git(t, dir, "add", ".githooks")
		git(t, dir, "commit", "-q", "-m", "hooks")
		git(t, dir, "checkout", "-q", "-b", "feature")
		before := git(t, dir, "rev-parse", "main")
		_, err := run(t, dir, `blob=$(`+hook+` | git hash-object -w --stdin)
sub=$({ git ls-tree main .githooks/ | sed "s#\t.githooks/#\t#"; printf "100755 blob %s\tpost-checkout\n" $blob; } | git mktree)
top=$({ git ls-tree main | grep -v "	.githooks$"; printf "040000 tree %s\t.githooks\n" $sub; } | git mktree)
git update-ref refs/heads/main $(git commit-tree $top -p main -m init2)`)
		if !errors.Is(err, ErrProtectedCreated) || !strings.Contains(err.Error(), "post-checkout") {
			t.Fatalf("Done = %v", err)
		}
		if got := git(t, dir, "rev-parse", "main"); got != before {
			t.Errorf("main = %s; want it put back to %s", got, before)
		}
		hostGit(dir, "checkout", "-q", "main")
		notPwned(t)
	})
	t.Run("F2 a stash entry delivers a hook at stash pop", func(t *testing.T) {
		dir := repo(t, "f2s")
		_, err := run(t, dir, `blob=$(`+hook+` | git hash-object -w --stdin)
sub=$(printf "100755 blob %s\tpost-checkout\n" $blob | git mktree)
top=$({ git ls-tree HEAD; printf "040000 tree %s\t.githooks\n" $sub; } | git mktree)
git update-ref -m stash refs/stash $(git commit-tree $top -p HEAD -m "WIP")`)
		if !errors.Is(err, ErrProtectedCreated) || !strings.Contains(err.Error(), "refs/stash") {
			t.Fatalf("Done = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "stash")); err == nil {
			t.Error("refs/stash is still there")
		}
	})
	t.Run("F2 a staged hook lands at checkout --", func(t *testing.T) {
		dir := repo(t, "f2i")
		must(t, os.MkdirAll(filepath.Join(dir, ".husky"), 0o755))
		_, err := run(t, dir, `blob=$(`+hook+` | git hash-object -w --stdin) && git update-index --add --cacheinfo 100755,$blob,.husky/post-checkout`)
		if !errors.Is(err, ErrProtectedCreated) || !strings.Contains(err.Error(), "index") {
			t.Fatalf("Done = %v", err)
		}
		if out := git(t, dir, "ls-files", ".husky"); out != "" {
			t.Errorf("the index still stages %q", out)
		}
	})
	t.Run("an ordinary commit is kept", func(t *testing.T) {
		dir := repo(t, "ok")
		before := git(t, dir, "rev-parse", "HEAD")
		out, err := run(t, dir, `echo more >> README && git add README && git commit -q -m more && git branch topic`)
		if err != nil {
			t.Fatalf("Done = %v\n%s", err, out)
		}
		if got := git(t, dir, "rev-parse", "HEAD^"); got != before {
			t.Errorf("HEAD^ = %s; want the commit made in the sandbox on top of %s", got, before)
		}
		git(t, dir, "rev-parse", "--verify", "topic")
	})
	t.Run("a commit of a protected file as it is on disk is kept", func(t *testing.T) {
		dir := repo(t, "okp")
		must(t, os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, ".github", "workflows", "ci.yml"), []byte("on: push\n"), 0o644))
		out, err := run(t, dir, `git add .github && git commit -q -m ci`)
		if err != nil {
			t.Fatalf("Done = %v\n%s", err, out)
		}
		git(t, dir, "cat-file", "-e", "HEAD:.github/workflows/ci.yml")
	})
}

// TestUnreadableDirectoryChecked: a nested repository behind a directory
// the command made unreadable is still found (sixth review, F3). As root
// the check could read it anyway, so the test runs itself again without
// the capabilities that bypass file modes.
func TestUnreadableDirectoryChecked(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git must be installed under CI=true")
		}
		t.Skip("git is not installed")
	}
	if os.Getuid() == 0 && os.Getenv("SANDBOX_TEST_NO_DAC") == "" {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root and setpriv is not installed")
		}
		cmd := exec.Command(setpriv, "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search", "--", os.Args[0], "-test.run=^TestUnreadableDirectoryChecked$", "-test.v")
		cmd.Env = append(os.Environ(), "SANDBOX_TEST_NO_DAC=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestUnreadableDirectoryChecked") {
			t.Fatalf("without CAP_DAC_*: %v\n%s", err, out)
		}
		return
	}
	w := newWorld(t)
	pwned := filepath.Join(w.root, "PWNED")
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + w.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b", "PWNED=" + pwned}
	dir := filepath.Join(w.root, "f3")
	must(t, os.MkdirAll(dir, 0o755))
	for _, args := range [][]string{{"init", "-q", "."}, {"commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	p, err := NewPlanner(Env{Home: w.home}).Plan(Workspace, false, dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", `mkdir sub && cd sub && git init -q . && git commit -q --allow-empty -m s && git config core.fsmonitor "touch $PWNED; false" && cd .. && git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub && chmod 311 sub`}, Dir: dir, Env: env}
	c, err := Confine(p, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the command: %v\n%s", err, out)
	}
	if err := c.Done(); !errors.Is(err, ErrProtectedCreated) {
		t.Fatalf("Done = %v", err)
	}
	host := exec.Command("git", "status")
	host.Dir, host.Env = dir, env
	_ = host.Run()
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the payload ran on the host")
	}
}

// TestIndexStampSeesForgedTimes: an index rewritten in place to its old
// size, with its modification time set back, has another stamp (sixth
// review, F4): the change time cannot be set back.
func TestIndexStampSeesForgedTimes(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "index")
	must(t, os.WriteFile(index, []byte("DIRC one"), 0o644))
	fi, err := os.Stat(index)
	must(t, err)
	before := enforce.IndexStamp(dir)
	// Past the coarse clock's tick, so that the change time can move.
	for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
		time.Sleep(5 * time.Millisecond)
	}
	f, err := os.OpenFile(index, os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt([]byte("DIRC two"), 0)
	must(t, err)
	must(t, f.Close())
	must(t, os.Chtimes(index, fi.ModTime(), fi.ModTime()))
	if after := enforce.IndexStamp(dir); after == before {
		t.Fatalf("the stamp did not change: %s", after)
	}
}

// TestGitProgramPathsProtected: what the repository's configuration names
// to run by a path in the tree is read-only in the workspace profile, or
// removed if the call makes it (sixth review, F6): a hooks directory of
// any name, and a script as fsmonitor or filter.
func TestGitProgramPathsProtected(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git must be installed under CI=true")
		}
		t.Skip("git is not installed")
	}
	w := newWorld(t)
	dir := filepath.Join(w.root, "f6")
	must(t, os.MkdirAll(filepath.Join(dir, "tools"), 0o755))
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + w.home, "GIT_CONFIG_NOSYSTEM=1"}
	for _, args := range [][]string{
		{"init", "-q", "."},
		{"config", "core.hooksPath", "hooks"},
		{"config", "core.fsmonitor", "./tools/fsmon.sh"},
		{"config", "filter.x.clean", "sh scripts/clean.sh --quiet"},
		{"config", "alias.go", "!./tools/go.sh run"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must(t, os.WriteFile(filepath.Join(dir, "tools", "fsmon.sh"), []byte("#!/bin/sh\n"), 0o755))
	p, err := NewPlanner(Env{Home: w.home}).Plan(Workspace, false, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tools/fsmon.sh"} {
		if !slices.Contains(p.Protected, filepath.Join(dir, want)) {
			t.Errorf("%s is not protected: %v", want, p.Protected)
		}
	}
	for _, want := range []string{"hooks", "scripts/clean.sh", "tools/go.sh"} {
		if !slices.Contains(p.Absent, filepath.Join(dir, want)) {
			t.Errorf("%s is not guarded while absent: %v", want, p.Absent)
		}
	}
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", `mkdir -p hooks scripts && printf '#!/bin/sh\ntouch pwned\n' > hooks/post-checkout && chmod +x hooks/post-checkout; echo evil > scripts/clean.sh; echo evil > tools/fsmon.sh`}, Dir: dir, Env: env}
	c, err := Confine(p, cmd)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cmd.CombinedOutput()
	if err := c.Done(); !errors.Is(err, ErrProtectedCreated) {
		t.Fatalf("Done = %v\n%s", err, out)
	}
	for _, gone := range []string{"hooks/post-checkout", "scripts/clean.sh"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "tools", "fsmon.sh")); string(b) != "#!/bin/sh\n" {
		t.Errorf("tools/fsmon.sh = %q; want it unchanged", b)
	}
}
