package resolve_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/resolve"
)

// TestFillHardLinkToTheDataDir (fourth serve review, finding 7): a hard
// link in the project to serve's script token or to the event log, in the
// default data directory or in one given with --data-dir (Request.DataDir,
// here outside both home and project), is judged as the file it opens:
// read_file and cat of it are denied, not allowed as a project file.
func TestFillHardLinkToTheDataDir(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	proj := filepath.Join(home, "proj")
	custom := filepath.Join(dir, "srv", "cadata")
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
	def := filepath.Join(home, ".local", "share", "custom-agent")
	write(filepath.Join(def, "serve-7717.token"), "TOKEN1")
	write(filepath.Join(def, "events.db"), "LOG1")
	write(filepath.Join(custom, "serve-8080.token"), "TOKEN2")
	write(filepath.Join(custom, "events.db"), "LOG2")
	write(filepath.Join(custom, "sessions", "s1.json"), "S") // depth 1
	write(filepath.Join(proj, "README.md"), "hi")
	links := map[string]string{
		"a.txt": filepath.Join(def, "serve-7717.token"),
		"b.txt": filepath.Join(def, "events.db"),
		"c.txt": filepath.Join(custom, "serve-8080.token"),
		"d.txt": filepath.Join(custom, "events.db"),
		"e.txt": filepath.Join(custom, "sessions", "s1.json"),
	}
	for name, target := range links {
		link(target, filepath.Join(proj, name))
	}
	shell, _ := permission.Builtin("shell")
	readFile, _ := permission.Builtin("read_file")
	pol, err := permission.Compile(permission.BuiltinRules())
	if err != nil {
		t.Fatal(err)
	}
	check := func(tool permission.ToolInfo, args map[string]any) permission.Decision {
		req := permission.Request{Tool: tool, Args: args, Cwd: proj, Home: home, DataDir: custom, Policy: pol}
		resolve.Fill(&req)
		return (permission.Engine{}).Check(req)
	}
	for name, target := range links {
		if d := check(readFile, map[string]any{"path": name}); d.Decision != permission.Deny {
			t.Errorf("read_file %s, a hard link to %s: %s (%s), want deny", name, target, d.Decision, d.Reason)
		}
		if d := check(shell, map[string]any{"command": "cat " + name}); d.Allowed() {
			t.Errorf("cat %s, a hard link to %s: %s (%s), want not allowed", name, target, d.Decision, d.Reason)
		}
	}
	if d := check(readFile, map[string]any{"path": "README.md"}); !d.Allowed() {
		t.Errorf("read_file README.md: %s (%s), want allowed", d.Decision, d.Reason)
	}
}
