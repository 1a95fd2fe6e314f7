package acp

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// An option's name says what its rule allows: a rule for one exact command
// is not shown as its first words (web-review-5 finding 2).
func TestRuleTextNamesAnExactCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    permission.Rule
		want string
	}{
		{permission.Rule{Tool: "shell", Command: "git -C . log"}, "shell, command git -C . log"},
		{permission.Rule{Tool: "shell", Command: "curl -s https://x.example/a", Args: map[string]string{"command": permission.QuoteGlob("curl -s https://x.example/a?b")}},
			"shell, exactly the command curl -s https://x.example/a?b"},
	} {
		if got := ruleText(tc.r); got != tc.want {
			t.Errorf("ruleText(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
