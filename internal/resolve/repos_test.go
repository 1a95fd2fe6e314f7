package resolve_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/internal/resolve"
	"github.com/custom-agent/custom-agent/permission"
)

// gitRepo makes a repository with the given files added to its index, with
// the real git (the index format is git's).
func gitRepo(t *testing.T, files ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("init", "-q")
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		run("add", "-f", f)
	}
	return dir
}

// TestReposFindsATrackedSecret: a git diff from the root or from a
// subdirectory learns the repository tracks a credential file, anywhere in
// it; one that tracks none is clean; an untracked secret does not count
// (git diff prints only what the index tracks); a directory in no
// repository tracks nothing; an index that cannot be read is not checked.
func TestReposFindsATrackedSecret(t *testing.T) {
	home := t.TempDir()
	check := func(cwd string) permission.Repo {
		t.Helper()
		info, _ := permission.Builtin("shell")
		req := permission.Request{Tool: info, Args: map[string]any{"command": "git diff"}, Cwd: cwd, Home: home}
		m := resolve.ReposFor(req)
		r, ok := m[cwd]
		if !ok || len(m) != 1 {
			t.Fatalf("ReposFor(git diff in %s) = %v", cwd, m)
		}
		return r
	}
	leaky := gitRepo(t, "src/main.go", "config/.env")
	if r := check(leaky); !r.Checked || r.Secret != filepath.Join(leaky, "config/.env") {
		t.Fatalf("repository tracking config/.env: %+v", r)
	}
	if r := check(filepath.Join(leaky, "src")); !r.Checked || r.Secret != filepath.Join(leaky, "config/.env") {
		t.Fatalf("from a subdirectory: %+v", r)
	}
	clean := gitRepo(t, "src/main.go", "README.md")
	if err := os.WriteFile(filepath.Join(clean, ".env"), []byte("TOKEN=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := check(clean); !r.Checked || r.Secret != "" {
		t.Fatalf("repository tracking no secret (an untracked .env beside): %+v", r)
	}
	// The same index judged again comes from the cache; a change is seen.
	cmd := exec.Command("git", "add", "-f", ".env")
	cmd.Dir = clean
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	if r := check(clean); r.Secret != filepath.Join(clean, ".env") {
		t.Fatalf("after git add .env: %+v", r)
	}
	if r := check(t.TempDir()); !r.Checked || r.Secret != "" {
		t.Fatalf("no repository: %+v", r)
	}
	broken := gitRepo(t, "a.txt")
	if err := os.WriteFile(filepath.Join(broken, ".git", "index"), []byte("DIRC garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := check(broken); r.Checked {
		t.Fatalf("a damaged index was read as checked: %+v", r)
	}
	fresh := gitRepo(t)
	if r := check(fresh); r.Checked {
		t.Fatalf("a repository with no index was read as checked: %+v", r)
	}
}
