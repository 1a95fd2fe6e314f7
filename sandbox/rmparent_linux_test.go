package sandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// sbx-review-3, R8: a non-root command that makes the directory holding
// what it planted read-only (chmod 0555 . or .git or .git/refs/heads)
// before it exits. Root ignores directory modes, so as root these tests
// run themselves again as uid 65534 (asNobody), as the agent runs as a
// user.

// nobodyEnv is set in a test run again as uid 65534.
const nobodyEnv = "SANDBOX_TEST_NOBODY"

// asNobody reports whether the caller is to run its test here: when it
// runs as root, it runs the test again as uid 65534 in a copy of the test
// binary, with a home of that user's, checks that it passed, and returns
// false. As any other user the test runs here.
func asNobody(t *testing.T) bool {
	t.Helper()
	if os.Getuid() != 0 {
		return true
	}
	if os.Getenv(nobodyEnv) != "" {
		t.Fatal("still root in the run as uid 65534")
	}
	dir, err := os.MkdirTemp("", "sandbox-nobody-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	home := filepath.Join(dir, "home")
	must(t, os.Mkdir(home, 0o755))
	must(t, os.Chown(home, 65534, 65534))
	bin := filepath.Join(dir, "sandbox.test")
	in, err := os.Open(os.Args[0])
	must(t, err)
	defer in.Close()
	out, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	must(t, err)
	_, err = io.Copy(out, in)
	must(t, errors.Join(err, out.Close()))
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = home
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, nobodyEnv + "=1", "CI=" + os.Getenv("CI")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	b, err := cmd.CombinedOutput()
	switch {
	case err == nil && strings.Contains(string(b), "--- PASS: "+t.Name()):
		t.Logf("as uid 65534:\n%s", b)
	case err == nil && strings.Contains(string(b), "--- SKIP: "+t.Name()) && os.Getenv("CI") != "true":
		t.Skipf("skipped as uid 65534:\n%s", b)
	default:
		t.Fatalf("as uid 65534: %v\n%s", err, b)
	}
	return false
}

// TestReadOnlyParentKeepsNothing: what the command planted is removed, and
// the refs it added or moved are put back, though it made their
// directories (and files) read-only; each directory gets its mode back.
// The host's git checkout then writes nothing protected.
func TestReadOnlyParentKeepsNothing(t *testing.T) {
	if !asNobody(t) {
		return
	}
	l := newGitLab(t)
	// commit makes, in the sandbox, a commit on HEAD holding .envrc.
	const commit = `b=$(echo "echo PWNED" | git hash-object -w --stdin); t=$(printf "100644 blob $b\t.envrc\n" | git mktree); c=$(git commit-tree $t -p HEAD -m x)`
	tests := []struct {
		name   string
		script string
		ro     map[string]os.FileMode // modes afterwards: as the command left them, but readable
		gone   []string
		branch string // checked out on the host afterwards
		kept   bool   // what cannot be undone: the call fails
	}{
		{
			name:   "absent paths in a read-only working directory and .git",
			script: `echo "eval evil" > .envrc; mkdir .vscode; echo "{}" > .vscode/tasks.json; chmod 0555 .; mkdir -p .git/rebase-merge && echo "exec touch $PWNED" > .git/rebase-merge/git-rebase-todo; chmod 0555 .git`,
			ro:     map[string]os.FileMode{".": 0o555, ".git": 0o555},
			gone:   []string{".envrc", ".vscode", ".git/rebase-merge"},
		},
		{
			name:   "an absent path in an unreadable working directory",
			script: `echo "eval evil" > .envrc; chmod 0311 .`,
			ro:     map[string]os.FileMode{".": 0o711}, // made readable again
			gone:   []string{".envrc"},
		},
		{
			name:   "a guarded name in a read-only directory",
			script: `echo "import os" > src/conftest.py; chmod 0555 src`,
			ro:     map[string]os.FileMode{"src": 0o555},
			gone:   []string{"src/conftest.py"},
		},
		{
			name:   "a new branch in a read-only refs/heads",
			script: commit + ` && git update-ref refs/heads/feature $c && chmod 0555 .git/refs/heads .git/logs/refs/heads`,
			ro:     map[string]os.FileMode{".git/refs/heads": 0o555, ".git/logs/refs/heads": 0o555},
			gone:   []string{".git/refs/heads/feature", ".git/logs/refs/heads/feature"},
			branch: "feature",
		},
		{
			name:   "a branch moved, its files and directories read-only",
			script: commit + ` && git update-ref refs/heads/main $c && chmod 0444 .git/refs/heads/main .git/logs/refs/heads/main .git/logs/HEAD && chmod 0555 .git/refs/heads .git/logs/refs/heads .git/logs .git`,
			ro:     map[string]os.FileMode{".git/refs/heads": 0o555, ".git/logs/refs/heads": 0o555, ".git/logs": 0o555, ".git": 0o555},
			branch: "main",
		},
		{
			// The check after the call cannot list the branches, so it
			// cannot tell which to remove: the call fails, for a person
			// to look.
			name:   "a new branch in an unreadable refs/heads",
			script: commit + ` && git update-ref refs/heads/feature $c && chmod 0000 .git/refs/heads`,
			kept:   true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := l.repo(t, strings.NewReplacer(" ", "-", "/", "-", ",", "").Replace(tc.name))
			must(t, os.Mkdir(filepath.Join(dir, "src"), 0o755))
			t.Cleanup(func() {
				_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
					if err == nil && d.IsDir() {
						_ = os.Chmod(p, 0o755)
					}
					return nil
				})
			})
			before := l.git(t, dir, "rev-parse", "main")
			out, err := l.run(t, dir, tc.script)
			var note interface{ Note() string }
			if tc.kept {
				if !errors.Is(err, ErrProtectedKept) || errors.Is(err, ErrProtectedCreated) || errors.As(err, &note) {
					t.Fatalf("Done = %v; want an error that fails the call\n%s", err, out)
				}
				return
			}
			if !errors.Is(err, ErrProtectedCreated) || !errors.As(err, &note) || strings.Contains(err.Error(), "NOT") {
				t.Fatalf("Done = %v; want a note of what was undone\n%s", err, out)
			}
			for _, g := range tc.gone {
				if _, err := os.Lstat(filepath.Join(dir, g)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s is still there (%v)", g, err)
				}
			}
			for d, mode := range tc.ro {
				if fi, err := os.Lstat(filepath.Join(dir, d)); err != nil || fi.Mode().Perm() != mode {
					t.Errorf("%s: %v, %v; want the mode the command left, %v", d, fi.Mode(), err, mode)
				}
			}
			if got := l.git(t, dir, "rev-parse", "main"); got != before {
				t.Errorf("main = %s; want it put back to %s", got, before)
			}
			if tc.branch != "" {
				// (Each directory made writable again first, as a
				// person would: checkout needs to write.)
				for d := range tc.ro {
					must(t, os.Chmod(filepath.Join(dir, d), 0o755))
				}
				_, _ = l.try(dir, "checkout", "-q", tc.branch)
				if _, err := os.Lstat(filepath.Join(dir, ".envrc")); err == nil {
					t.Errorf("git checkout %s wrote .envrc", tc.branch)
				}
			}
			l.notPwned(t)
		})
	}
}
