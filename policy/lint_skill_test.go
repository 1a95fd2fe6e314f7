package policy

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// A rule naming use_skill is not reported as naming no tool: it is how a
// person turns skills off or asks before one is used (docs/skills.md).
func TestLintUseSkill(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rule Rule
		want string // substring of the one warning; "" for none
	}{
		{"deny every skill", Rule{ID: "no-skills", Tool: "use_skill", Decision: permission.Deny}, ""},
		{"ask for one skill", Rule{ID: "ask-deploy", Tool: "use_skill", Args: map[string]string{"name": "deploy"}, Decision: permission.Ask}, ""},
		{"a command never matches", Rule{ID: "odd", Tool: "use_skill", Command: "deploy", Decision: permission.Deny}, "takes only a skill's name"},
		{"a misspelt tool is still reported", Rule{ID: "typo", Tool: "use_skills", Decision: permission.Deny}, "no built-in tool is named"},
	}
	for _, tt := range tests {
		fs := Lint([]Entry{{Rule: tt.rule, Level: permission.LevelUser}})
		switch {
		case tt.want == "" && len(fs) != 0:
			t.Errorf("%s: warnings %v, want none", tt.name, fs)
		case tt.want != "" && (len(fs) != 1 || !strings.Contains(fs[0].Message, tt.want)):
			t.Errorf("%s: warnings %v, want one saying %q", tt.name, fs, tt.want)
		}
	}
}
