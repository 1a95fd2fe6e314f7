package policy

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// BenchmarkParseBuiltin reads the built-in rules file as every process
// that opens a policy does once (builtinRules): 86 rules with their
// examples, parsed, checked and compiled.
func BenchmarkParseBuiltin(b *testing.B) {
	src := permission.BuiltinJSON()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := parse(BuiltinFile, src, permission.LevelBuiltin)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.entries(permission.LevelBuiltin)) == 0 {
			b.Fatal("no built-in rules")
		}
	}
}
