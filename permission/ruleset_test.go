package permission_test

import (
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/custom-agent/custom-agent/permission"
)

// TestPropJoinIsCompile: a policy joined from rule sets decides every call
// as the policy compiled from the same rules end to end, whatever the
// split, built-in rules included (Join shares the sets' compiled rules and
// indexes them again under its own numbering).
func TestPropJoinIsCompile(t *testing.T) {
	t.Parallel()
	builtin := permission.BuiltinRules()
	rapid.Check(t, func(t *rapid.T) {
		req := drawRequest(t)
		rules := append(drawRules(t), drawRules(t)...)
		if rapid.Bool().Draw(t, "builtin") {
			from := rapid.IntRange(0, len(builtin)).Draw(t, "builtin-from")
			rules = append(rules, builtin[from:]...)
		}
		// Cut the rules into sets at random places, empty sets and nil
		// ones included.
		var sets []*permission.RuleSet
		for rest := rules; ; {
			n := rapid.IntRange(0, len(rest)).Draw(t, "set")
			if rapid.IntRange(0, 4).Draw(t, "nil") == 0 {
				sets = append(sets, nil)
			}
			s, err := permission.CompileSet(n, slices.Values(rest[:n]))
			if err != nil {
				t.Fatalf("CompileSet: %v", err)
			}
			sets = append(sets, s)
			if rest = rest[n:]; len(rest) == 0 {
				break
			}
		}
		joined, whole := req, req
		joined.Policy = permission.Join(sets...)
		whole.Policy = compileT(t, rules)
		if diff := gocmp.Diff(whole.Policy.Rules(), joined.Policy.Rules()); diff != "" {
			t.Fatalf("Join holds other rules than Compile (-compile +join):\n%s", diff)
		}
		var e permission.Engine
		if diff := gocmp.Diff(e.Check(whole), e.Check(joined)); diff != "" {
			t.Fatalf("Join decides otherwise than Compile (-compile +join):\n%s", diff)
		}
	})
}
