package policy

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// BenchmarkParseBuiltin reads the built-in rules file as every process
// that opened a policy did once before builtin_gen.go (and as
// TestBuiltinGenerated does): 85 rules with their examples, parsed,
// checked and compiled. BenchmarkBuiltinGenerated is what a process does
// now.
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

// BenchmarkBuiltinGenerated builds the built-in rules as builtinSet does
// once per process that decides a call: the generated table, compiled.
func BenchmarkBuiltinGenerated(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileEntries(builtinTable[:], permission.LevelBuiltin, permission.BuiltinSource); err != nil {
			b.Fatal(err)
		}
	}
}
