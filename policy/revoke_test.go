package policy_test

import (
	"errors"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

func TestRemoveSession(t *testing.T) {
	t.Parallel()
	s, err := policy.Open(policy.Options{Cwd: t.TempDir(), ConfigHome: t.TempDir(), NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	rule := permission.Rule{ID: "shell-npm-test", Tool: "shell", Command: "npm test", Decision: permission.Allow}
	if err := s.AddSession(rule); err != nil {
		t.Fatal(err)
	}
	got, err := s.RemoveSession("shell-npm-test")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != rule.ID || got.Command != rule.Command || got.Decision != permission.Allow || got.Level != permission.LevelSession {
		t.Errorf("removed %+v, want the session rule %+v", got, rule)
	}
	if n := len(s.Entries(permission.LevelSession)); n != 0 {
		t.Errorf("%d session rules left", n)
	}
	if _, err := s.RemoveSession("shell-npm-test"); !errors.Is(err, policy.ErrNotFound) {
		t.Errorf("removing it again: %v, want ErrNotFound", err)
	}
}
