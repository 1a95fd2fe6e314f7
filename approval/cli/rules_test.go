package cli

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
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

// The preview shows the rule the store proposes, which no longer widens
// with the model's spelling (web-review-5 finding 2): options before git's
// subcommand stay in the rule, and a call with no narrow prefix gets a rule
// for that exact command, shown as such.
func TestRuleLinesShowTheNarrowProposal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := policy.Open(policy.Options{Cwd: dir, ConfigHome: filepath.Join(dir, "cfg"), Home: filepath.Join(dir, "home"), NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	shell, _ := permission.Builtin("shell")
	for _, tc := range []struct{ cmd, want string }{
		{"git -C . log --oneline -3", "allow_session adds the session rule: shell `git -C . log` → allow"},
		{"git --no-pager log", "allow_session adds the session rule: shell `git --no-pager log` → allow"},
		{"make -k test", "allow_session adds the session rule: shell `make -k test` (this exact command only) → allow"},
		{"curl -s https://api.github.com/repos/golang/go",
			"allow_session adds the session rule: shell `curl -s https://api.github.com/repos/golang/go` (this exact command only) → allow"},
		{"pip --quiet install -r requirements.txt",
			"allow_session adds the session rule: shell `pip --quiet install -r requirements.txt` (this exact command only) → allow"},
	} {
		r, ok := s.SessionRuleFor(shell, map[string]any{"command": tc.cmd})
		if !ok {
			t.Errorf("%s: no rule proposed", tc.cmd)
			continue
		}
		if got := ruleLines(executor.Question{SessionRule: &r}); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: preview %q, want %q", tc.cmd, got, tc.want)
		}
	}
}
