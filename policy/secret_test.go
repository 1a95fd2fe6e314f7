package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

// No rule is proposed for a call whose arguments hold a secret, nor one
// that would hold one, and no rule holding one is ever added: rules are
// logged, shown and written to files in plain text.
func TestNoRuleHoldsASecret(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.open(t)
	const key = "sk-proj-Qw3rTy7uIo9pAs2dFg4hJk6lZx8cVb1nM5"
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"shell", map[string]any{"command": "echo OPENAI_API_KEY=" + key}},
		{"shell", map[string]any{"command": "echo " + key}},
		// The parser joins the quoted pieces into one word holding the key;
		// the arguments as sent show none.
		{"shell", map[string]any{"command": `echo sk-proj-"Qw3rTy7uIo9pAs2dFg4hJk6lZx8cVb1nM5"`}},
		{"shell", map[string]any{"command": "npm test", "cwd": "password=hunter2-Zq8vXk3p"}},
		{"write_file", map[string]any{"path": "src/a.go", "content": "token = ghp_Z8xQ2mN4vB6nM1kL9pO3iU7yT5rE0wQaSdFg"}},
		{"write_file", map[string]any{"path": "src/AKIAIOSFODNN7EXAMPLE/a", "content": "x"}},
		{"http_get", map[string]any{"url": "https://api.example.test/x", "headers": map[string]any{"Authorization": "Basic dXNlcjpwYXNz"}}},
	}
	for _, c := range calls {
		ti, _ := permission.Builtin(c.tool)
		if r, ok := s.SessionRuleFor(ti, c.args); ok {
			t.Errorf("%s %v: session rule %+v proposed", c.tool, c.args, r)
		}
		if r, ok := s.ProjectRuleFor(ti, c.args); ok {
			t.Errorf("%s %v: project rule %+v proposed", c.tool, c.args, r)
		}
	}
	// The same calls without the secret are offered a rule, so the test
	// can fail.
	ti, _ := permission.Builtin("shell")
	if _, ok := s.SessionRuleFor(ti, map[string]any{"command": "echo hello"}); !ok {
		t.Fatal("no rule for echo hello either: the test cannot tell")
	}

	bad := permission.Rule{ID: "shell-echo", Tool: "shell", Command: "echo " + key, Decision: permission.Allow}
	if err := s.AddSession(bad); !errors.Is(err, policy.ErrSecret) {
		t.Errorf("AddSession of a rule holding a key: %v, want ErrSecret", err)
	}
	if err := s.AddProject(bad); !errors.Is(err, policy.ErrSecret) {
		t.Errorf("AddProject of a rule holding a key: %v, want ErrSecret", err)
	}
	if err := s.AddSession(bad); err != nil && strings.Contains(err.Error(), key) {
		t.Errorf("the error shows the key: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(w.repo, ".custom-agent", "policy.json")); err == nil && strings.Contains(string(b), key) {
		t.Errorf("the project file holds the key:\n%s", b)
	}
}
