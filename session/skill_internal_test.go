package session

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/tool"
)

type namedTool string

func (n namedTool) Info() permission.ToolInfo {
	ns := ""
	if len(n) > 5 && n[:5] == "mcp__" {
		ns = "mcp__gh"
	}
	return permission.ToolInfo{Name: string(n), Namespace: ns, Risk: risk.Execute, Schema: `{"type":"object"}`}
}

func (namedTool) Run(context.Context, tool.Call, tool.Output) (tool.Result, error) {
	return tool.Result{}, nil
}

// The engine's AllowedTools is the session's own list narrowed by the
// active skill's: globs in both are intersected over the router's tools.
func TestAllowedTools(t *testing.T) {
	t.Parallel()
	r := tool.NewRouter()
	for _, n := range []string{"read_file", "shell", "mcp__gh__get", "mcp__gh__put"} {
		r.Register(namedTool(n))
	}
	tests := []struct {
		name        string
		info, skill []string
		active      bool
		want        []string
	}{
		{"no skill, no list", nil, nil, false, nil},
		{"no skill keeps the session's list", []string{"shell"}, nil, false, []string{"shell"}},
		{"a skill that does not narrow", []string{"shell"}, nil, true, []string{"shell"}},
		{"a skill alone", nil, []string{"mcp__gh__*", "read_file"}, true, []string{"mcp__gh__*", "read_file"}},
		{"both: the tools both allow", []string{"mcp__*__get", "read_file", "shell"}, []string{"mcp__gh__*", "read_file"}, true, []string{"mcp__gh__get", "read_file"}},
		{"nothing in common", []string{"shell"}, []string{"read_file"}, true, []string{}},
		{"a skill listing nothing", nil, []string{}, true, []string{}},
	}
	for _, tt := range tests {
		s := &Session{cfg: Config{Router: r}, info: Info{AllowedTools: tt.info}}
		if tt.active {
			s.skill = &activeSkill{name: "x", tools: tt.skill}
		}
		got := s.allowedTools()
		if d := cmp.Diff(tt.want, got); d != "" || (tt.want == nil) != (got == nil) {
			t.Errorf("%s: (-want +got)\n%s (nil: want %v, got %v)", tt.name, d, tt.want == nil, got == nil)
		}
	}
}
