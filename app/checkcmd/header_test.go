package checkcmd

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestHeaderOfABuiltinAllow: check's first line for a read-only command a
// built-in rule allowed says that it only reads and names the built-in
// rule, not "risk execute, from override … (builtin, built-in)" (issue 24
// item 7); any other decision keeps its risk and source.
func TestHeaderOfABuiltinAllow(t *testing.T) {
	t.Parallel()
	info, _ := permission.Builtin("shell")
	req := permission.Request{Tool: info, Args: map[string]any{"command": "git log"}}
	tests := []struct {
		name string
		d    permission.Decision
		want string
	}{
		{
			name: "built-in allow",
			d: permission.Decision{Decision: permission.Allow, RiskAtDecision: risk.Execute, SourcedFrom: permission.FromOverride, ReadOnly: true,
				Rule: &permission.RuleRef{ID: "builtin:git-log", Level: permission.LevelBuiltin, Source: permission.BuiltinSource}},
			want: `ALLOW  shell, read-only (the tool's own risk is execute), from the built-in rule "builtin:git-log"`,
		},
		{
			name: "user rule",
			d: permission.Decision{Decision: permission.Allow, RiskAtDecision: risk.Execute, SourcedFrom: permission.FromOverride,
				Rule: &permission.RuleRef{ID: "log", Level: permission.LevelUser, Source: "/u/policy.json"}},
			want: `ALLOW  shell, risk execute, from override, rule "log" (user, /u/policy.json)`,
		},
		{
			name: "default ask",
			d:    permission.Decision{Decision: permission.Ask, RiskAtDecision: risk.Execute, SourcedFrom: permission.FromDefault},
			want: `ASK  shell, risk execute, from default`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			if err := writeDecision(&b, &req, &tc.d); err != nil {
				t.Fatal(err)
			}
			if got, _, _ := strings.Cut(b.String(), "\n"); got != tc.want {
				t.Errorf("header %q\nwant   %q", got, tc.want)
			}
		})
	}
}
