package policy

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// TestBuiltinFile parses the built-in rules as strictly as any policy file
// and runs every example the way a file's examples are run at load.
func TestBuiltinFile(t *testing.T) {
	p, err := parse(BuiltinFile, permission.BuiltinJSON(), permission.LevelBuiltin)
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Cwd: "/home/u/proj", Home: "/home/u"}
	for i := range p.ents {
		for _, e := range checkExamples(&p.ents[i].Rule, permission.LevelBuiltin, env) {
			t.Errorf("%s %s: %s", e.RuleID, e.Field, e.Why)
		}
	}
	if len(p.ents) != len(permission.BuiltinRules()) {
		t.Errorf("policy reads %d built-in rules, permission %d", len(p.ents), len(permission.BuiltinRules()))
	}
}
