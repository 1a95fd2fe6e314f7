package pathrisk_test

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// BenchmarkClassify judges paths the engine sees on every file call: a
// source file in the working directory (the common case, nothing found),
// a deep one, a key in ~/.ssh and a file whose name alone is a secret.
func BenchmarkClassify(b *testing.B) {
	env := pathrisk.Env{Cwd: "/home/u/proj", Home: "/home/u"}
	for _, c := range []struct{ name, raw string }{
		{"src_in_cwd", "src/main.go"},
		{"deep_in_cwd", "internal/store/sqlite/testdata/fixtures/v2/events.json"},
		{"ssh_key", "~/.ssh/id_ed25519"},
		{"env_file", "config/.env.production"},
	} {
		canon, ok := pathrisk.Canonical(c.raw, env)
		if !ok {
			b.Fatalf("%s: no canonical form", c.raw)
		}
		p := pathrisk.PathFacts{Raw: c.raw, Canonical: canon}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pathrisk.Classify(p, env)
			}
		})
	}
}
