package fs

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/tool"
)

func TestToolsRegister(t *testing.T) {
	t.Parallel()
	r := tool.NewRouter()
	for _, tl := range Tools() {
		r.Register(tl) // panics on a missing or bad schema
	}
	want := []string{"apply_patch", "list_files", "read_file", "search_text", "write_file"}
	if diff := cmp.Diff(want, r.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// TestThroughRouter runs a call the way the executor will: arguments
// validated and decoded by the router first.
func TestThroughRouter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{"f.txt": "a\nb\nc\n"})
	r := tool.NewRouter()
	for _, tl := range Tools() {
		r.Register(tl)
	}
	args, err := r.Validate("read_file", json.RawMessage(`{"path":"f.txt","offset":1,"limit":1}`))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := r.Resolve("read_file")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := run(t, tl, dir, args)
	if err != nil {
		t.Fatal(err)
	}
	want := "     2\tb\n[showed lines 2-2 of 3; to read on, call read_file with offset 2]\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{"f.txt": "a\n", "sub/g.txt": "a\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := []struct {
		tool tool.Tool
		args map[string]any
	}{
		{&ReadFile{}, map[string]any{"path": "f.txt"}},
		{&ListFiles{}, map[string]any{}},
		{&SearchText{}, map[string]any{"pattern": "a"}},
		{&WriteFile{}, map[string]any{"path": "new.txt", "content": "x"}},
		{&ApplyPatch{}, map[string]any{"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n"}},
	}
	before := tree(t, dir)
	for _, c := range calls {
		var out discard
		_, err := c.tool.Run(ctx, tool.Call{Args: c.args, Cwd: dir}, tool.Output{Stdout: &out, Stderr: &out})
		if diff := cmp.Diff("cancelled: context canceled", errText(err)); diff != "" {
			t.Errorf("%s: error (-want +got):\n%s", c.tool.Info().Name, diff)
		}
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }

// TestHomePaths is not parallel: it sets HOME. `~` and `$HOME` are expanded
// as the engine expands them, so the file read is the file judged.
func TestHomePaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	makeTree(t, home, map[string]string{"notes.txt": "at home\n"})
	for _, p := range []string{"~/notes.txt", "$HOME/notes.txt", "${HOME}/notes.txt", filepath.Join(home, "notes.txt")} {
		got, _, err := run(t, &ReadFile{}, t.TempDir(), map[string]any{"path": p})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if diff := cmp.Diff("     1\tat home\n", got); diff != "" {
			t.Errorf("%s: stdout (-want +got):\n%s", p, diff)
		}
	}
	_, _, err := run(t, &ReadFile{}, home, map[string]any{"path": "~nosuchuser/x"})
	if diff := cmp.Diff(`cannot tell which file "~nosuchuser/x" names (unknown home directory, user or working directory); give an absolute path`, errText(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}
