package policy_test

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

func (w *world) openBuiltin(t testing.TB, off bool) *policy.Store {
	t.Helper()
	s, err := policy.Open(policy.Options{Cwd: w.repo, ConfigHome: w.cfg, Home: w.home, NoBuiltin: off})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreBuiltin(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	status := map[string]any{"command": "git status && git diff --stat"}

	s := w.openBuiltin(t, false)
	es := s.Entries(permission.LevelBuiltin)
	if len(es) != len(permission.BuiltinRules()) || es[0].File != "" || es[0].Rule.Comment == "" {
		t.Fatalf("builtin entries: %d (want %d), first %+v", len(es), len(permission.BuiltinRules()), es[0])
	}
	d := w.check(t, s, "shell", status)
	if !d.Allowed() || d.Rule == nil || d.Rule.ID != "builtin:git-status" || d.Rule.Level != permission.LevelBuiltin ||
		d.Rule.Source != permission.BuiltinSource || !strings.Contains(d.Reason, "Read-only command inside the project") {
		t.Errorf("git status with built-in rules: %+v", d)
	}
	if err := s.Remove("", "builtin:git-status"); err == nil || !strings.Contains(err.Error(), "built in") {
		t.Errorf("Remove of a built-in rule: %v", err)
	}

	if d := w.check(t, w.openBuiltin(t, true), "shell", status); d.Allowed() {
		t.Errorf("NoBuiltin: %+v", d)
	}

	// A user deny and an untrusted project's ask both beat them.
	w.writeUser(t, `{"version": 1, "rules": [{"id": "no-diff", "tool": "shell", "command": "git diff", "decision": "deny"}]}`)
	if d := w.check(t, w.openBuiltin(t, false), "shell", status); d.Decision != permission.Deny || d.Rule.ID != "no-diff" {
		t.Errorf("user deny: %+v", d)
	}
	w.writeUser(t, `{"version": 1, "rules": []}`)
	w.writeProject(t, `{"version": 1, "rules": [{"id": "ask-git", "tool": "shell", "command": "git", "decision": "ask"}]}`)
	if d := w.check(t, w.openBuiltin(t, false), "shell", status); d.Allowed() {
		t.Errorf("untrusted project's ask: %+v", d)
	}

	// The prefix is kept for the built-in rules.
	w.writeProject(t, `{"version": 1, "rules": [{"id": "builtin:rm", "tool": "shell", "command": "rm", "decision": "allow"}]}`)
	if _, err := policy.Open(policy.Options{Cwd: w.repo, ConfigHome: w.cfg, Home: w.home}); err == nil || !strings.Contains(err.Error(), "kept for the built-in rules") {
		t.Errorf("a project rule named builtin:rm: %v", err)
	}
}
