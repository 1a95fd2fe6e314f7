package permission_test

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// TestSandboxUnavailableFailsClosed: where the sandbox is on but cannot be
// enforced, a call that would be allowed to start processes is asked,
// saying why; nothing else changes.
func TestSandboxUnavailableFailsClosed(t *testing.T) {
	allowLs := permission.Rule{ID: "ls", Tool: "shell", Command: "ls", Decision: permission.Allow, Level: permission.LevelUser}
	unavailable := &permission.SandboxFacts{Unavailable: "no user namespaces"}
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		sandbox *permission.SandboxFacts
		mode    permission.Mode
		want    permission.Verdict
		reason  string
	}{
		{"allowed shell is asked", "shell", map[string]any{"command": "ls"}, unavailable, "", permission.Ask, "the sandbox is unavailable here (no user namespaces)"},
		{"dont-ask denies it", "shell", map[string]any{"command": "ls"}, unavailable, permission.ModeDontAsk, permission.Deny, "the sandbox is unavailable here"},
		{"sandbox on: allowed", "shell", map[string]any{"command": "ls"}, &permission.SandboxFacts{}, "", permission.Allow, ""},
		{"turned off on purpose: allowed", "shell", map[string]any{"command": "ls"}, &permission.SandboxFacts{Off: true, Unavailable: "x"}, "", permission.Allow, ""},
		{"no facts: unchanged", "shell", map[string]any{"command": "ls"}, nil, "", permission.Allow, ""},
		{"a read starts no process", "read_file", map[string]any{"path": "README.md"}, unavailable, "", permission.Allow, ""},
		{"a credential stays denied", "shell", map[string]any{"command": "cat ~/.ssh/id_rsa"}, unavailable, "", permission.Deny, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newReq(t, tc.tool, tc.args, withRules(t, allowLs))
			req.Sandbox, req.Mode = tc.sandbox, tc.mode
			d := permission.Engine{}.Check(req)
			if d.Decision != tc.want {
				t.Fatalf("decision %s, want %s: %s", d.Decision, tc.want, d.Reason)
			}
			if !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("reason %q does not say %q", d.Reason, tc.reason)
			}
		})
	}
}

// TestReadOnlyDecision: a call that only reads, as the analyser understood
// it, is marked so, whichever rule allowed it; the sandbox then runs it
// read-only (white-box A1: `ls \r#; rm -rf ./src` allowed by a rule `ls`
// could delete nothing).
func TestReadOnlyDecision(t *testing.T) {
	for _, tc := range []struct {
		tool string
		args map[string]any
		want bool
	}{
		{"shell", map[string]any{"command": "ls -la"}, true},
		{"shell", map[string]any{"command": "git status && git diff --stat"}, true},
		{"shell", map[string]any{"command": "cat a | grep x"}, true},
		{"shell", map[string]any{"command": "ls > out.txt"}, false},
		{"shell", map[string]any{"command": "rm -rf dist"}, false},
		{"shell", map[string]any{"command": "make"}, false},
		{"shell", map[string]any{"command": "eval ls"}, false},
		{"read_file", map[string]any{"path": "README.md"}, true},
		{"write_file", map[string]any{"path": "a.txt", "content": "x"}, false},
		{"run_tests", map[string]any{}, false},
	} {
		d := permission.Engine{}.Check(newReq(t, tc.tool, tc.args))
		if d.ReadOnly != tc.want {
			t.Errorf("%s %v: ReadOnly %v, want %v (%s)", tc.tool, tc.args, d.ReadOnly, tc.want, d.Reason)
		}
	}
}

// TestSandboxWritesUnavailable: where only the read-only profile can be
// enforced, a call that only reads still runs confined, any other is
// asked.
func TestSandboxWritesUnavailable(t *testing.T) {
	allow := permission.Rule{ID: "make", Tool: "shell", Command: "make", Decision: permission.Allow, Level: permission.LevelUser}
	facts := &permission.SandboxFacts{WritesUnavailable: "a protected path is a symbolic link: .vscode"}
	read := shellReq("ls -la", builtinPolicy(t))
	read.Sandbox = facts
	if d := (permission.Engine{}).Check(read); d.Decision != permission.Allow {
		t.Errorf("a read: %s: %s", d.Decision, d.Reason)
	}
	build := newReq(t, "shell", map[string]any{"command": "make"}, withRules(t, allow))
	build.Sandbox = facts
	if d := (permission.Engine{}).Check(build); d.Decision != permission.Ask || !strings.Contains(d.Reason, ".vscode") {
		t.Errorf("a build: %s: %s", d.Decision, d.Reason)
	}
}
