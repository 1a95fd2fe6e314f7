package policy_test

import (
	"path/filepath"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

// TestPolicyIsTheEntriesCompiled: the policy a store joins from the rule
// sets compiled when its files were read is the policy of its entries as
// the engine sees them (Entry.Effective), compiled afresh, through every
// change: an untrusted project (allow rules left out, ask rules only
// tightening), flag files, session rules, a project rule trusted on its
// own, a removal, a trusted project, and without the built-in rules.
func TestPolicyIsTheEntriesCompiled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeUser(t, `{"version": 1, "rules": [
		{"id": "u-test", "tool": "shell", "command": "npm test", "decision": "allow"},
		{"id": "u-env", "tool": "read_file", "path": "**/.env", "decision": "deny"},
		{"id": "u-api", "tool": "http_get", "url": "api.example.com/v1/**", "decision": "ask"}]}`)
	w.writeProject(t, `{"version": 1, "rules": [
		{"id": "p-ls", "tool": "shell", "command": "ls", "decision": "allow"},
		{"id": "p-push", "tool": "shell", "command": "git push", "decision": "ask"},
		{"id": "p-secrets", "tool": "*", "path": "secrets/**", "decision": "deny"}]}`)
	dir := filepath.Dir(w.repo)
	flagA := writeFile(t, filepath.Join(dir, "a.json"), `{"version": 1, "rules": [{"id": "f-gh", "tool": "mcp__github__*", "args": {"repo": "org/*"}, "decision": "allow"}]}`)
	flagB := writeFile(t, filepath.Join(dir, "b.json"), `{"version": 1, "rules": []}`)
	flagC := writeFile(t, filepath.Join(dir, "c.json"), `{"version": 1, "rules": [{"id": "f-make", "tool": "shell", "command": "make", "decision": "ask"}]}`)

	same := func(t *testing.T, s *policy.Store, step string) {
		t.Helper()
		got, err := s.Policy()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		var rules []permission.Rule
		for _, e := range s.Entries("") {
			if r, ok := e.Effective(); ok {
				rules = append(rules, r)
			}
		}
		want, err := permission.Compile(rules)
		if err != nil {
			t.Fatalf("%s: compiling the entries: %v", step, err)
		}
		if diff := gocmp.Diff(want.Rules(), got.Rules()); diff != "" {
			t.Errorf("%s: the store's policy is not its entries compiled (-entries +store):\n%s", step, diff)
		}
	}
	open := func(t *testing.T, noBuiltin bool) *policy.Store {
		t.Helper()
		s, err := policy.Open(policy.Options{Cwd: w.repo, ConfigHome: w.cfg, Home: w.home, Files: []string{flagA, flagB, flagC}, NoBuiltin: noBuiltin})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	s := open(t, false)
	same(t, s, "untrusted project")
	if pol, _ := s.Policy(); len(s.Entries("")) == pol.Len() {
		t.Fatal("the untrusted project's allow rule is in the policy")
	}
	if err := s.AddSession(permission.Rule{ID: "s-cat", Tool: "shell", Command: "cat README.md", Decision: permission.Allow}); err != nil {
		t.Fatal(err)
	}
	same(t, s, "session rule added")
	if err := s.AddProject(permission.Rule{ID: "p-go", Tool: "shell", Command: "go test", Decision: permission.Allow}); err != nil {
		t.Fatal(err)
	}
	same(t, s, "project rule trusted on its own")
	if err := s.Remove(permission.LevelUser, "u-env"); err != nil {
		t.Fatal(err)
	}
	same(t, s, "user rule removed")
	if err := s.Remove(permission.LevelSession, "s-cat"); err != nil {
		t.Fatal(err)
	}
	same(t, s, "session rule removed")
	if _, err := policy.Trust(w.cfg, w.repo); err != nil {
		t.Fatal(err)
	}
	same(t, open(t, false), "trusted project")
	same(t, open(t, true), "no built-in rules")
}
