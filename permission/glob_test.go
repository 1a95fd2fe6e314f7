package permission_test

import (
	"slices"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Globs the shell expands are expanded by the caller (Request.Expanded)
// and every match is judged by where it leads (red-team finding 9).
func TestGlobsExpanded(t *testing.T) {
	shell, _ := permission.Builtin("shell")
	pol, err := permission.Compile([]permission.Rule{{ID: "cat", Level: permission.LevelUser, Tool: "shell", Command: "cat", Decision: permission.Allow}})
	if err != nil {
		t.Fatal(err)
	}
	req := permission.Request{Tool: shell, Args: map[string]any{"command": "cat *.txt notes/[!a]* README"}, Cwd: testCwd, Home: testHome, Policy: pol}
	got := permission.GlobsToExpand(req)
	want := []string{testCwd + "/*.txt", testCwd + "/notes/[!a]*"}
	if !slices.Equal(got, want) {
		t.Fatalf("GlobsToExpand = %q, want %q", got, want)
	}
	var e permission.Engine
	if d := e.Check(req); d.Decision != permission.Allow {
		t.Fatalf("without expansion: %s (%s), want allow", d.Decision, d.Reason)
	}
	for _, c := range []struct {
		name    string
		matches []string
		want    permission.Verdict
		min     risk.Level
	}{
		{"matches in cwd", []string{testCwd + "/a.txt", testCwd + "/docs/b.txt"}, permission.Allow, risk.Execute},
		{"a match is a link to a key", []string{testCwd + "/a.txt", testHome + "/.ssh/id_rsa"}, permission.Deny, risk.Credential},
		{"cut short", []string{testCwd + "/a.txt", ""}, permission.Ask, risk.Execute},
	} {
		r := req
		r.Expanded = map[string][]string{want[0]: c.matches}
		d := e.Check(r)
		if d.Decision != c.want || d.RiskAtDecision < c.min {
			t.Errorf("%s: %s at %s (%s), want %s at least %s", c.name, d.Decision, d.RiskAtDecision, d.Reason, c.want, c.min)
		}
	}
}
