// Package layers holds one test: that no package imports upward across the
// layers of the repository, from its own source. It is the layering that
// docs/engine.md draws, enforced rather than described.
package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/custom-agent/custom-agent"

// Layers, lowest first. A package may import packages of its own layer
// and of the layers below it, never above. Each entry is a package path
// relative to the module; an entry ending in "/..." names the folder and
// everything under it. A longer entry wins over a shorter one.
var layers = []struct {
	name string
	pkgs []string
}{
	{"core", []string{ // pure: decisions, events, scanning; no I/O (puritytest)
		"event", "permission/...", "injection", "secrets",
	}},
	{"support", []string{ // leaf helpers any layer above the core may use
		"support/...",
	}},
	{"domain", []string{ // what the runtime is made of: ports and their types
		"config", "policy", "skill", "skill/toolinfo", "tool", "contextbuild", "model", "artifact",
		"eventlog", "hook", "hook/journal", "hook/settings", "hook/ruleimport",
	}},
	{"orchestration", []string{ // the gate's path through a call, turns, audit
		"executor", "session", "approval", "replay/...", "sandbox/...", "hook/ingest",
	}},
	{"adapters", []string{ // UIs, model providers, tools, stores, MCP
		"approval/cli", "approval/acp", "web", "mcp", "model/anthropic", "model/openai",
		"model/script", "tools/...", "eventlog/sqlitestore", "eventlog/pgstore",
	}},
	{"root", []string{ // the composition root and the binaries
		"app/...", "cmd/...",
	}},
}

// testHelper reports whether a package exists only for tests: no package's
// non-test source may import it, and it may import anything.
func testHelper(pkg string) bool {
	last := pkg[strings.LastIndex(pkg, "/")+1:]
	return strings.HasPrefix(pkg, "testsupport/") || strings.HasSuffix(last, "test")
}

// layerOf returns the index of pkg's layer, or -1 when no entry names it.
func layerOf(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.pkgs {
			match := p == pkg
			if dir, ok := strings.CutSuffix(p, "/..."); ok {
				match = pkg == dir || strings.HasPrefix(pkg, dir+"/")
			}
			if match && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	return best
}

// imports returns the module packages each package's non-test source
// imports, keyed by package path relative to the module.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		af, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(p, module+"/"); ok {
				out[pkg] = append(out[pkg], dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// check returns the violations in a package graph, sorted.
func check(graph map[string][]string) []string {
	var bad []string
	for pkg, deps := range graph {
		if testHelper(pkg) {
			continue
		}
		from := layerOf(pkg)
		if from < 0 {
			bad = append(bad, pkg+": in no layer; add it to the table in this test")
			continue
		}
		for _, dep := range deps {
			switch to := layerOf(dep); {
			case testHelper(dep):
				bad = append(bad, pkg+" imports "+dep+", a package for tests only")
			case to > from:
				bad = append(bad, pkg+" ("+layers[from].name+") imports "+dep+" ("+layers[to].name+"): an import upward across the layers")
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func TestNoImportUpward(t *testing.T) {
	graph := imports(t, moduleRoot(t))
	if len(graph) < 40 {
		t.Fatalf("found only %d packages: the walk is broken", len(graph))
	}
	for _, v := range check(graph) {
		t.Error(v)
	}
}

// TestCheckCanFail proves the check sees what it is for, on made-up graphs.
func TestCheckCanFail(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  string
	}{
		{"core imports orchestration", map[string][]string{"permission": {"executor"}}, "permission (core) imports executor (orchestration)"},
		{"adapter imports root", map[string][]string{"web": {"app/logstore"}}, "web (adapters) imports app/logstore (root)"},
		{"support imports domain", map[string][]string{"support/resolve": {"policy"}}, "support/resolve (support) imports policy (domain)"},
		{"code imports a test helper", map[string][]string{"session": {"testsupport/ptytest"}}, "session imports testsupport/ptytest"},
		{"unplaced package", map[string][]string{"newthing": nil}, "newthing: in no layer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := check(tc.graph)
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("check = %q, want one violation starting %q", got, tc.want)
			}
		})
	}
	if got := check(map[string][]string{"web": {"executor", "support/termtext", "permission"}, "approval/cli": {"approval"}}); len(got) != 0 {
		t.Errorf("downward imports reported: %q", got)
	}
}
