package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
)

func TestRuleLinesShowTheRuleBeforeItIsMade(t *testing.T) {
	t.Parallel()
	q := executor.Question{
		SessionRule: &permission.Rule{ID: "shell-npm-test", Tool: "shell", Command: "npm test", Decision: permission.Allow},
		ProjectRule: &permission.Rule{ID: "write-src", Tool: "write_file", Path: "src/**", Decision: permission.Allow},
	}
	want := []string{
		"allow_session adds the session rule: shell `npm test` → allow",
		"allow_project writes to the project policy: write_file on src/** → allow",
	}
	if diff := cmp.Diff(want, ruleLines(q)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got := ruleLines(executor.Question{}); got != nil {
		t.Fatalf("no rules offered, but lines %v", got)
	}
}
