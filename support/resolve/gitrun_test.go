package resolve_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/resolve"
)

// TestBuiltinGitRunsNoRepositoryProgram runs the real git on repositories
// crafted so that a read-only form runs a program the repository names,
// the way the shell tool runs commands (bash -c, stdout a pipe, stdin
// empty), and holds that the engine, given what resolve.Fill reads, never
// allows that form by a built-in rule. Each case first proves it is live:
// git really runs the marker program, or the case is a failure, not a
// pass. A clean repository shows the same forms allowed and running
// nothing.
func TestBuiltinGitRunsNoRepositoryProgram(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// repo makes a repository with two commits of a.txt and a tag.
	repo := func() string {
		dir := t.TempDir()
		git(dir, "init", "-q")
		write(t, filepath.Join(dir, "a.txt"), "one TODO\n")
		git(dir, "add", "a.txt")
		git(dir, "commit", "-qm", "one")
		write(t, filepath.Join(dir, "a.txt"), "one TODO\ntwo\n")
		git(dir, "commit", "-qam", "two")
		git(dir, "tag", "-a", "v1", "-m", "v1")
		return dir
	}
	// inner makes a repository sub inside dir, with one commit.
	inner := func(dir string) string {
		sub := filepath.Join(dir, "sub")
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		git(sub, "init", "-q")
		write(t, filepath.Join(sub, "b.txt"), "b\n")
		git(sub, "add", "b.txt")
		git(sub, "commit", "-qm", "b")
		return sub
	}
	marker := filepath.Join(t.TempDir(), "ran")
	mark := filepath.Join(t.TempDir(), "mark.sh")
	write(t, mark, "#!/bin/sh\necho \"$0 $*\" >> "+marker+"\nexit 0\n")
	if err := os.Chmod(mark, 0o755); err != nil {
		t.Fatal(err)
	}
	// dirty gives a.txt a new modification time, so that git status
	// refreshes the index (running filters and the index hook).
	dirty := func(dir string) {
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(filepath.Join(dir, "a.txt"), later, later); err != nil {
			t.Fatal(err)
		}
	}
	shell, _ := permission.Builtin("shell")
	pol, err := permission.Compile(permission.BuiltinRules())
	if err != nil {
		t.Fatal(err)
	}
	decide := func(dir, form string) permission.Decision {
		req := permission.Request{Tool: shell, Args: map[string]any{"command": form}, Cwd: dir, Home: home, Policy: pol}
		resolve.Fill(&req)
		return permission.Engine{}.Check(req)
	}
	// ran runs form in dir as the shell tool does and reports whether the
	// marker ran.
	ran := func(dir, form string) bool {
		os.Remove(marker)
		cmd := exec.Command("bash", "-c", form)
		cmd.Dir, cmd.Env = dir, env
		_, _ = cmd.Output() // a lazy fetch fails after running its program
		_, err := os.Stat(marker)
		return err == nil
	}

	cases := []struct {
		name  string
		setup func(dir string)
		forms []string
	}{
		{"core.fsmonitor", func(dir string) {
			git(dir, "config", "core.fsmonitor", mark)
		}, []string{"git status", "git ls-files", "git grep -n TODO", "git describe --dirty", "git diff --stat"}},
		{"post-index-change hook", func(dir string) {
			write(t, filepath.Join(dir, ".git", "hooks", "post-index-change"), "#!/bin/sh\n"+mark+" hook\n")
			if err := os.Chmod(filepath.Join(dir, ".git", "hooks", "post-index-change"), 0o755); err != nil {
				t.Fatal(err)
			}
			dirty(dir)
		}, []string{"git status"}},
		{"clean filter", func(dir string) {
			git(dir, "config", "filter.f.clean", mark)
			write(t, filepath.Join(dir, ".git", "info", "attributes"), "* filter=f\n")
			dirty(dir)
		}, []string{"git blame a.txt", "git status"}},
		{"textconv driver", func(dir string) {
			git(dir, "config", "diff.d.textconv", mark)
			write(t, filepath.Join(dir, ".git", "info", "attributes"), "* diff=d\n")
		}, []string{"git blame a.txt"}},
		{"signature program", func(dir string) {
			// A commit with a forged signature header.
			c := git(dir, "cat-file", "commit", "HEAD")
			head, body, _ := strings.Cut(c, "\n\n")
			signed := head + "\ngpgsig -----BEGIN PGP SIGNATURE-----\n AAAA\n -----END PGP SIGNATURE-----\n\n" + body + "\n"
			cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
			cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(signed)
			id, err := cmd.Output()
			if err != nil {
				t.Fatalf("hash-object: %v", err)
			}
			git(dir, "update-ref", "HEAD", strings.TrimSpace(string(id)))
			git(dir, "config", "gpg.program", mark)
			git(dir, "config", "log.showSignature", "true")
		}, []string{"git log --oneline -5"}},
		{"partial clone", func(dir string) {
			id := git(dir, "rev-parse", "HEAD")
			if err := os.Remove(filepath.Join(dir, ".git", "objects", id[:2], id[2:])); err != nil {
				t.Fatal(err)
			}
			git(dir, "config", "core.repositoryformatversion", "1")
			git(dir, "config", "extensions.partialClone", "origin")
			git(dir, "config", "remote.origin.promisor", "true")
			git(dir, "config", "remote.origin.url", "ssh://example.invalid/r")
			git(dir, "config", "core.sshCommand", mark)
		}, []string{"git log --oneline -5", "git blame a.txt"}},
		{"submodule's fsmonitor", func(dir string) {
			sub := inner(dir)
			git(dir, "add", "sub")
			git(dir, "commit", "-qm", "sub")
			git(sub, "config", "core.fsmonitor", mark)
		}, []string{"git status", "git diff"}},
		{"a broken .git beside a git directory the model wrote", func(dir string) {
			// Every file here is one a model can write in accept-edits
			// but .git/HEAD, which is now protected; git, finding .git no
			// repository, takes the project itself for one.
			write(t, filepath.Join(dir, ".git", "HEAD"), "garbage\n")
			write(t, filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n")
			write(t, filepath.Join(dir, "objects", "x"), "x")
			write(t, filepath.Join(dir, "refs", "x"), "x")
			write(t, filepath.Join(dir, "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "+mark+"\n")
		}, []string{"git status", "git ls-files"}},
		{"git -C through a link into a git directory", func(dir string) {
			evil := filepath.Join(dir, "evil")
			write(t, filepath.Join(evil, "HEAD"), "ref: refs/heads/main\n")
			write(t, filepath.Join(evil, "objects", "x"), "x")
			write(t, filepath.Join(evil, "refs", "x"), "x")
			write(t, filepath.Join(evil, "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "+mark+"\n")
			if err := os.Symlink("evil/objects", filepath.Join(dir, "docs")); err != nil {
				t.Fatal(err)
			}
		}, []string{"git -C docs/.. status", "git -C docs status"}},
		{"a submodule not checked out, opened by diff.submodule=diff", func(dir string) {
			sub := inner(dir)
			git(dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod")
			git(dir, "commit", "-qm", "mod")
			git(dir, "config", "diff.submodule", "diff")
			git(dir, "config", "--file", filepath.Join(dir, ".git", "modules", "mod", "config"), "diff.external", mark)
			if err := os.RemoveAll(filepath.Join(dir, "mod")); err != nil {
				t.Fatal(err)
			}
		}, []string{"git diff"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, form := range c.forms {
				dir := repo()
				c.setup(dir)
				d := decide(dir, form) // before git runs: it may refresh the index
				if !ran(dir, form) {
					t.Fatalf("%s: git did not run the repository's program, so this case proves nothing", form)
				}
				if d.Allowed() {
					t.Errorf("%s runs the repository's program, and the engine allows it: %s", form, d.Reason)
				}
			}
		})
	}
	t.Run("clean", func(t *testing.T) {
		for _, form := range []string{"git status", "git ls-files", "git grep -n TODO", "git describe --dirty", "git diff --stat",
			"git blame a.txt", "git log --oneline -5", "git diff"} {
			dir := repo()
			dirty(dir)
			d := decide(dir, form)
			if ran(dir, form) {
				t.Fatalf("%s ran the marker in a clean repository", form)
			}
			if !d.Allowed() {
				t.Errorf("%s in a clean repository: %s, %s", form, d.Decision, d.Reason)
			}
		}
	})
}
