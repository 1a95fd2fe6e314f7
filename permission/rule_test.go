package permission_test

import (
	"encoding/json"
	"errors"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/permission"
)

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	ok := permission.Rule{ID: "x", Level: permission.LevelUser, Tool: "shell", Decision: permission.Allow}
	tests := []struct {
		name  string
		edit  func(*permission.Rule)
		field string
	}{
		{"bad decision", func(r *permission.Rule) { r.Decision = "maybe" }, "decision"},
		{"unset decision", func(r *permission.Rule) { r.Decision = "" }, "decision"},
		{"bad level", func(r *permission.Rule) { r.Level = "global" }, "level"},
		{"no tool", func(r *permission.Rule) { r.Tool = "" }, "tool"},
		{"bad tool glob", func(r *permission.Rule) { r.Tool = "sh[" }, "tool"},
		{"blank command", func(r *permission.Rule) { r.Command = "   " }, "command"},
		{"bad path glob", func(r *permission.Rule) { r.Path = "src/[" }, "path"},
		{"url without host", func(r *permission.Rule) { r.URL = "https:///x" }, "url"},
		{"url with password", func(r *permission.Rule) { r.URL = "u:p@host" }, "url"},
		{"bad args glob", func(r *permission.Rule) { r.Args = map[string]string{"pattern": "[a"} }, "args.pattern"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := ok
			tc.edit(&r)
			_, err := permission.Compile([]permission.Rule{ok, r})
			var re *permission.RuleError
			if !errors.As(err, &re) {
				t.Fatalf("Compile = %v, want a *RuleError", err)
			}
			if re.Index != 1 || re.Field != tc.field {
				t.Errorf("error %v at index %d field %q, want index 1 field %q", err, re.Index, re.Field, tc.field)
			}
		})
	}
	if _, err := permission.Compile([]permission.Rule{ok}); err != nil {
		t.Errorf("valid rule: %v", err)
	}
}

func TestPolicyJSONRoundTrip(t *testing.T) {
	t.Parallel()
	rules := []permission.Rule{
		{ID: "a", Level: permission.LevelProject, Source: "p.json", Tool: "shell", Command: "npm test", Decision: permission.Allow},
		{ID: "b", Level: permission.LevelUser, Tool: "read_file", Path: "~/.aws/**", Decision: permission.Deny},
	}
	p, err := permission.Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q permission.Policy
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(rules, q.Rules()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	var nilPolicy *permission.Policy
	if nilPolicy.Len() != 0 || nilPolicy.Rules() != nil {
		t.Error("a nil policy holds no rules")
	}
}

func TestGlobShapes(t *testing.T) {
	t.Parallel()
	// Each glob shape has a fast path; these calls pin their meaning.
	tests := []struct {
		name, tool, path string
		want             permission.Verdict
	}{
		{"literal", "read_file", "docs/a.md", permission.Deny},
		{"tree root itself", "read_file", "docs", permission.Deny},
		{"tree", "read_file", "docs/x/y", permission.Deny},
		{"tree sibling prefix", "read_file", "docs2/x", permission.Allow},
		{"prefix within component", "read_file", "notes-1.txt", permission.Deny},
		{"prefix does not cross slash", "read_file", "notes-1/x.txt", permission.Allow},
		{"pattern", "read_file", "a/b/c.key.txt", permission.Deny},
		{"tool prefix glob", "list_files", "x", permission.Ask},
	}
	p, err := permission.Compile([]permission.Rule{
		{ID: "lit", Level: permission.LevelUser, Tool: "read_file", Path: "docs/a.md", Decision: permission.Deny},
		{ID: "tree", Level: permission.LevelUser, Tool: "read_file", Path: "docs/**", Decision: permission.Deny},
		{ID: "prefix", Level: permission.LevelUser, Tool: "read_file", Path: "notes-*", Decision: permission.Deny},
		{ID: "pattern", Level: permission.LevelUser, Tool: "read_file", Path: "**/*.key.txt", Decision: permission.Deny},
		{ID: "toolprefix", Level: permission.LevelUser, Tool: "list_*", Decision: permission.Ask},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := permission.Engine{}.Check(newReq(t, tc.tool, args{"path": tc.path}, func(r *permission.Request) { r.Policy = p }))
			if d.Decision != tc.want {
				t.Errorf("%s %s: %s (%s), want %s", tc.tool, tc.path, d.Decision, d.Reason, tc.want)
			}
		})
	}
}

func TestBuiltins(t *testing.T) {
	t.Parallel()
	want := []string{"read_file", "list_files", "search_text", "get_diagnostics", "write_file", "apply_patch", "shell", "run_tests", "http_get", "http_post", "read_output"}
	var got []string
	for _, ti := range permission.Builtins() {
		got = append(got, ti.Name)
		var schema map[string]any
		if err := json.Unmarshal([]byte(ti.Schema), &schema); err != nil {
			t.Errorf("%s: schema is not JSON: %v", ti.Name, err)
		}
		if b, ok := permission.Builtin(ti.Name); !ok || b.Name != ti.Name {
			t.Errorf("Builtin(%q) not found", ti.Name)
		}
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("built-in tools (-want +got):\n%s", diff)
	}
	if _, ok := permission.Builtin("nope"); ok {
		t.Error("Builtin(nope) found")
	}
}
