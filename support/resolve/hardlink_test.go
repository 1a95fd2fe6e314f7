package resolve_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/resolve"
)

// TestFillHardLink (review class g): a hard link made inside the project to
// a credential file before the call is judged as the credential file it
// opens, whether read by name, through a glob or beneath a tree; a file
// with several links none of which is a credential stays a project file;
// and a credential file made after the index was first read is found too.
func TestFillHardLink(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	proj := filepath.Join(home, "proj")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(old, new string) {
		if err := os.Link(old, new); err != nil {
			t.Skipf("hard links unsupported here: %v", err)
		}
	}
	write(filepath.Join(home, ".ssh", "id_rsa"), "KEYDATA")
	write(filepath.Join(home, ".aws", "credentials"), "[default]")
	write(filepath.Join(proj, "README.md"), "hi")
	write(filepath.Join(proj, "src", "a.txt"), "plain")
	link(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(proj, "notes.txt"))
	link(filepath.Join(proj, "src", "a.txt"), filepath.Join(proj, "copy.md")) // two links, no credential
	shell, _ := permission.Builtin("shell")
	readFile, _ := permission.Builtin("read_file")
	pol, err := permission.Compile(permission.BuiltinRules())
	if err != nil {
		t.Fatal(err)
	}
	check := func(tool permission.ToolInfo, args map[string]any) permission.Decision {
		req := permission.Request{Tool: tool, Args: args, Cwd: proj, Home: home, Policy: pol}
		resolve.Fill(&req)
		return (permission.Engine{}).Check(req)
	}
	for _, cmd := range []string{"cat notes.txt", "head -c 100 notes.txt", "cat *.txt", "grep -r K ."} {
		if d := check(shell, map[string]any{"command": cmd}); d.Allowed() {
			t.Errorf("%s, notes.txt a hard link to ~/.ssh/id_rsa: %s (%s), want not allowed", cmd, d.Decision, d.Reason)
		}
	}
	if d := check(shell, map[string]any{"command": "cat notes.txt"}); d.Decision != permission.Deny {
		t.Errorf("cat notes.txt: %s (%s), want deny (credential)", d.Decision, d.Reason)
	}
	if d := check(readFile, map[string]any{"path": "notes.txt"}); d.Decision != permission.Deny {
		t.Errorf("read_file notes.txt: %s (%s), want deny", d.Decision, d.Reason)
	}
	for _, cmd := range []string{"cat copy.md", "cat README.md", "wc -l src/a.txt"} {
		if d := check(shell, map[string]any{"command": cmd}); !d.Allowed() {
			t.Errorf("%s: %s (%s), want allowed", cmd, d.Decision, d.Reason)
		}
	}
	// A credential made after the index was built, and linked into the
	// project: the .aws directory changed, so the index is read again.
	write(filepath.Join(home, ".aws", "config"), "[profile x]")
	link(filepath.Join(home, ".aws", "config"), filepath.Join(proj, "later.txt"))
	if d := check(shell, map[string]any{"command": "cat later.txt"}); d.Allowed() {
		t.Errorf("cat later.txt, a hard link to ~/.aws/config made later: %s (%s), want not allowed", d.Decision, d.Reason)
	}
}

// TestReposHardLink: git diff prints the tracked files of the working
// tree, so a tracked file that is a hard link to a key makes the
// repository hold a secret.
func TestReposHardLink(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	for _, d := range []string{filepath.Join(home, ".ssh"), proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(proj, "notes.txt")); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "notes.txt"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	shell, _ := permission.Builtin("shell")
	pol, err := permission.Compile(permission.BuiltinRules())
	if err != nil {
		t.Fatal(err)
	}
	req := permission.Request{Tool: shell, Args: map[string]any{"command": "git diff"}, Cwd: proj, Home: home, Policy: pol}
	resolve.Fill(&req)
	if r := req.Repos[proj]; r.Secret != filepath.Join(proj, "notes.txt") {
		t.Errorf("Repos[%s] = %+v, want notes.txt as its secret", proj, r)
	}
	if d := (permission.Engine{}).Check(req); d.Allowed() {
		t.Errorf("git diff with notes.txt a hard link to a key: %s (%s), want not allowed", d.Decision, d.Reason)
	}
}
