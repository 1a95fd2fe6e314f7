package resolve_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/resolve"
)

// BenchmarkFill prepares a compound command's request for Check on a real
// tree, as the executor and check do: "fill" is resolve.Fill (one analysis,
// each directory looked up once); "separate" is the three calls the callers
// made before it, each parsing the command again (each Map or Globs call
// still shares its own lookups, which the code before Resolver did not).
func BenchmarkFill(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cwd := filepath.Join(dir, "home", "me", "src", "app")
	for _, d := range []string{"web/dist", "web/node_modules/.cache", "src"} {
		if err := os.MkdirAll(filepath.Join(cwd, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range []string{"web/dist/a.js", "web/dist/b.js", "build.log", "src/main.go"} {
		if err := os.WriteFile(filepath.Join(cwd, f), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	shell, _ := permission.Builtin("shell")
	req := permission.Request{Tool: shell, Cwd: cwd, Home: filepath.Join(dir, "home", "me"),
		Args: map[string]any{"command": `cd web && npm ci --silent && rm -rf dist/* node_modules/.cache | tee build.log; git status --short; cat ../src/main.go`}}
	var e permission.Engine
	b.Run("fill", func(b *testing.B) {
		for b.Loop() {
			r := req
			resolve.Fill(&r)
			_ = e.Check(r)
		}
	})
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			r := req
			r.Resolved = resolve.Map(permission.PathsToResolve(r))
			r.Expanded = resolve.Globs(permission.GlobsToExpand(r))
			r.Trees = resolve.TreesFor(r)
			_ = e.Check(r)
		}
	})
}
