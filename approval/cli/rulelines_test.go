package cli

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
)

// TestSessionRuleForAWriteMentionsAcceptEdits: "allow for this session" on
// a write covers one path; the question says what covers every edit.
func TestSessionRuleForAWriteMentionsAcceptEdits(t *testing.T) {
	write, _ := permission.Builtin("write_file")
	shell, _ := permission.Builtin("shell")
	for _, tc := range []struct {
		tool permission.ToolInfo
		rule permission.Rule
		want bool
	}{
		{write, permission.Rule{Tool: "write_file", Path: "src/a.go", Decision: permission.Allow}, true},
		{shell, permission.Rule{Tool: "shell", Command: "make", Decision: permission.Allow}, false},
	} {
		lines := strings.Join(ruleLines(executor.Question{Tool: tc.tool, SessionRule: &tc.rule}), "\n")
		if got := strings.Contains(lines, "accept-edits"); got != tc.want {
			t.Errorf("%s: mentions accept-edits %v, want %v:\n%s", tc.tool.Name, got, tc.want, lines)
		}
	}
}
