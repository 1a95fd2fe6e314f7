package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitLab is the review tests' bench for git: a world, repositories in
// it, a workspace call run in the real sandbox, and the host's own git
// run after it, as the person would. A payload proves itself by making
// the file pwned.
type gitLab struct {
	w     *world
	pwned string
	env   []string
	pl    *Planner
}

func newGitLab(t *testing.T) *gitLab {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git must be installed under CI=true")
		}
		t.Skip("git is not installed")
	}
	w := newWorld(t)
	pwned := filepath.Join(w.root, "PWNED")
	return &gitLab{w: w, pwned: pwned, pl: NewPlanner(Env{Home: w.home}),
		env: []string{"PATH=/usr/bin:/bin", "HOME=" + w.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b", "PWNED=" + pwned}}
}

// run runs script with sh in dir under the workspace profile, and returns
// its output and what Done said.
func (l *gitLab) run(t *testing.T, dir, script string) (string, error) {
	t.Helper()
	p, err := l.pl.Plan(Workspace, false, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: dir, Stdout: &out, Stderr: &out, Env: l.env}
	c, err := Confine(p, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Logf("the command: %v\n%s", err, out.String())
	}
	return out.String(), c.Done()
}

// try runs the host's git in dir; it may fail: what matters is what it ran.
func (l *gitLab) try(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, l.env
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// git runs the host's git in dir and fails the test if it fails.
func (l *gitLab) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := l.try(dir, args...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

// repo makes a repository in the world with one commit of README, on main.
func (l *gitLab) repo(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(l.w.root, name)
	must(t, os.MkdirAll(dir, 0o755))
	l.git(t, dir, "init", "-q", "-b", "main", ".")
	must(t, os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644))
	l.git(t, dir, "add", "README")
	l.git(t, dir, "commit", "-q", "-m", "init")
	return dir
}

// notPwned fails the test if a payload ran on the host.
func (l *gitLab) notPwned(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(l.pwned); err == nil {
		os.Remove(l.pwned)
		t.Fatal("the payload ran on the host")
	}
}
