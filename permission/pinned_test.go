package permission_test

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// mcpTool is an MCP tool as the mcp package declares one: execute, with
// its path arguments named.
func mcpTool(name string, changed *permission.DefinitionChange) permission.ToolInfo {
	return permission.ToolInfo{Name: "mcp__fs__" + name, Namespace: "mcp__fs", Risk: risk.Execute, Kind: permission.KindOther,
		PathArgs: []string{"path", "paths"}, PathsWrite: true, Changed: changed, Schema: `{"type":"object"}`}
}

func TestDefinitionChangedAsksDespiteRulesAndApprovals(t *testing.T) {
	changed := &permission.DefinitionChange{Approved: "sha256:aaaaaaaaaaaaaaaaaaaa", Offered: "sha256:bbbbbbbbbbbbbbbbbbbbbb"}
	args := map[string]any{"path": "notes.txt"}
	canon, _ := permission.CanonicalArgs(args)
	allow := withRules(t, permission.Rule{ID: "fs", Tool: "mcp__fs__*", Decision: permission.Allow})
	prior := func(r *permission.Request) {
		r.History = []permission.Prior{{Tool: "mcp__fs__read", Args: canon, Risk: risk.Execute, Decision: permission.Allow, ByUser: true}}
	}
	for _, tc := range []struct {
		name string
		opts []func(*permission.Request)
	}{{"rule", []func(*permission.Request){allow}}, {"prior", []func(*permission.Request){prior}}} {
		t.Run(tc.name, func(t *testing.T) {
			req := permission.Request{Tool: mcpTool("read", nil), Args: args, Cwd: testCwd, Home: testHome}
			for _, o := range tc.opts {
				o(&req)
			}
			if d := (permission.Engine{}).Check(req); d.Decision != permission.Allow {
				t.Fatalf("pinned definition: %s (%s), want allow", d.Decision, d.Reason)
			}
			req.Tool.Changed = changed
			d := (permission.Engine{}).Check(req)
			if d.Decision != permission.Ask || !strings.Contains(d.Reason, permission.ReasonDefinitionChanged) {
				t.Fatalf("changed definition: %s (%s), want ask with %q", d.Decision, d.Reason, permission.ReasonDefinitionChanged)
			}
		})
	}
	// A deny rule still denies, and a key file is still credential.
	req := permission.Request{Tool: mcpTool("read", changed), Args: args, Cwd: testCwd, Home: testHome}
	withRules(t, permission.Rule{ID: "no", Tool: "mcp__fs__*", Decision: permission.Deny})(&req)
	if d := (permission.Engine{}).Check(req); d.Decision != permission.Deny {
		t.Fatalf("deny rule on a changed tool: %s (%s)", d.Decision, d.Reason)
	}
	req = permission.Request{Tool: mcpTool("read", changed), Args: map[string]any{"path": "~/.ssh/id_rsa"}, Cwd: testCwd, Home: testHome}
	if d := (permission.Engine{}).Check(req); d.Decision != permission.Deny {
		t.Fatalf("key file through a changed tool: %s (%s)", d.Decision, d.Reason)
	}
}

func TestMCPPathListArgsAreJudged(t *testing.T) {
	req := permission.Request{Tool: mcpTool("read_multiple", nil), Args: map[string]any{"paths": []any{"a.txt", "/home/u/.ssh/id_ed25519"}}, Cwd: testCwd, Home: testHome}
	if d := (permission.Engine{}).Check(req); d.Decision != permission.Deny || d.RiskAtDecision != risk.Credential {
		t.Fatalf("paths[] with a key: %s at %s (%s), want deny at credential", d.Decision, d.RiskAtDecision, d.Reason)
	}
	req.Args = map[string]any{"paths": []any{"a.txt", 3.0}}
	if d := (permission.Engine{}).Check(req); d.Decision == permission.Allow {
		t.Fatalf("paths[] with a number: %s, want it judged opaque", d.Decision)
	}
	if got := permission.PathsToResolve(permission.Request{Tool: mcpTool("m", nil), Args: map[string]any{"paths": []any{"a", "b"}}, Cwd: testCwd}); len(got) != 2 {
		t.Fatalf("PathsToResolve of paths[]: %v", got)
	}
}
