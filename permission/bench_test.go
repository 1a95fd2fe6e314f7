package permission_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/custom-agent/custom-agent/permission"
)

// benchCompound is a compound command of about 100 characters with an
// escalation (a recursive delete in its third part).
const benchCompound = `cd web && npm ci --silent && rm -rf dist/* node_modules/.cache | tee build.log; git status --short`

// benchScript is a shell script of about 2 KB: a realistic build and
// release helper with functions, loops, conditions and substitutions.
var benchScript = func() string {
	part := `set -euo pipefail
build() {
  for pkg in api web worker; do
    if [ -d "$pkg" ]; then
      (cd "$pkg" && go build -o "../bin/$pkg" ./... 2>&1 | tee -a build.log)
    else
      echo "skip $pkg" >&2
    fi
  done
}
VERSION=$(git describe --tags --always)
case "$1" in
  test) go test ./... -count=1 ;;
  lint) golangci-lint run --timeout 5m ;;
  *) build && tar -czf "dist/app-$VERSION.tgz" bin/ ;;
esac
`
	var b strings.Builder
	for b.Len() < 2048 {
		b.WriteString(part)
	}
	return b.String()[:2048]
}()

// benchRules returns n rules of the shapes people write, none of which
// matches the benchmarked read_file call except the last.
func benchRules(n int) *permission.Policy {
	tools := []string{"shell", "write_file", "http_get", "mcp__github__*", "apply_patch"}
	rules := make([]permission.Rule, 0, n)
	for i := range n - 1 {
		r := permission.Rule{ID: fmt.Sprintf("r%d", i), Level: permission.LevelUser, Tool: tools[i%len(tools)], Decision: permission.Allow}
		switch i % 4 {
		case 0:
			r.Command = fmt.Sprintf("tool%d run", i)
		case 1:
			r.Path = fmt.Sprintf("pkg%d/**", i)
		case 2:
			r.URL = fmt.Sprintf("host%d.example.com/api/**", i)
		case 3:
			r.Decision = permission.Deny
			r.Command = fmt.Sprintf("danger%d", i)
		}
		rules = append(rules, r)
	}
	rules = append(rules, permission.Rule{ID: "docs", Level: permission.LevelProject, Tool: "read_file", Path: "docs/**", Decision: permission.Allow})
	p, err := permission.Compile(rules)
	if err != nil {
		panic(err)
	}
	return p
}

func BenchmarkCheck(b *testing.B) {
	readFile, _ := permission.Builtin("read_file")
	shell, _ := permission.Builtin("shell")
	cases := []struct {
		name string
		req  permission.Request
	}{
		{"read_file_in_cwd", permission.Request{Tool: readFile, Args: map[string]any{"path": "src/main.go"}, Cwd: testCwd, Home: testHome}},
		{"shell_compound100", permission.Request{Tool: shell, Args: map[string]any{"command": benchCompound}, Cwd: testCwd, Home: testHome}},
		{"shell_script2KB", permission.Request{Tool: shell, Args: map[string]any{"command": benchScript}, Cwd: testCwd, Home: testHome}},
		{"rules20", permission.Request{Tool: readFile, Args: map[string]any{"path": "docs/guide.md"}, Cwd: testCwd, Home: testHome, Policy: benchRules(20)}},
		{"rules1000", permission.Request{Tool: readFile, Args: map[string]any{"path": "docs/guide.md"}, Cwd: testCwd, Home: testHome, Policy: benchRules(1000)}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var e permission.Engine
			b.ReportAllocs()
			for b.Loop() {
				_ = e.Check(c.req)
			}
		})
	}
}

// TestLatencyPercentiles measures p50 and p99 of single decisions, which a
// benchmark's mean hides. It reports and only fails on gross regressions
// (10× the targets), since the machine is shared.
// BenchmarkLatency reports the p50 and p99 of single decisions (the issue's
// targets: read_file p50 ≤ 1 µs; the compound command p50 ≤ 10 µs and
// p99 ≤ 50 µs; 1,000 rules ≤ 5 µs). Each iteration times 20,000 decisions.
func BenchmarkLatency(b *testing.B) {
	readFile, _ := permission.Builtin("read_file")
	shell, _ := permission.Builtin("shell")
	for _, c := range []struct {
		name string
		req  permission.Request
	}{
		{"read_file_in_cwd", permission.Request{Tool: readFile, Args: map[string]any{"path": "src/main.go"}, Cwd: testCwd, Home: testHome}},
		{"shell_compound100", permission.Request{Tool: shell, Args: map[string]any{"command": benchCompound}, Cwd: testCwd, Home: testHome}},
		{"rules1000", permission.Request{Tool: readFile, Args: map[string]any{"path": "docs/guide.md"}, Cwd: testCwd, Home: testHome, Policy: benchRules(1000)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			const n = 20000
			d := make([]time.Duration, n)
			var e permission.Engine
			var p50, p99 time.Duration
			for range b.N {
				for i := range d {
					start := time.Now()
					_ = e.Check(c.req)
					d[i] = time.Since(start)
				}
				slices.Sort(d)
				p50, p99 = d[n/2], d[n*99/100]
			}
			b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(p99.Nanoseconds()), "p99-ns")
		})
	}
}

// TestNoRetainedMemory runs a million decisions and checks that the live
// heap does not grow: the engine keeps nothing between calls.
func TestNoRetainedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 10⁶ decisions")
	}
	readFile, _ := permission.Builtin("read_file")
	shell, _ := permission.Builtin("shell")
	reqs := []permission.Request{
		{Tool: readFile, Args: map[string]any{"path": "src/main.go"}, Cwd: testCwd, Home: testHome, Policy: benchRules(20)},
		{Tool: shell, Args: map[string]any{"command": "npm test && rm -rf dist"}, Cwd: testCwd, Home: testHome},
		{Tool: readFile, Args: map[string]any{"path": "~/.ssh/id_rsa"}, Cwd: testCwd, Home: testHome},
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var e permission.Engine
	run := func(n int) {
		for i := range n {
			_ = e.Check(reqs[i%len(reqs)])
		}
	}
	run(10000) // warm pools and lazily built tables
	before := heap()
	run(1_000_000)
	after := heap()
	t.Logf("heap before %d B, after 10⁶ decisions %d B", before, after)
	if after > before+256<<10 {
		t.Errorf("heap grew by %d B over 10⁶ decisions", after-before)
	}
}

// BenchmarkParse measures the mvdan/sh parse alone for the shell cases of
// BenchmarkCheck, so the engine's own share can be read off.
func BenchmarkParse(b *testing.B) {
	for _, c := range []struct{ name, src string }{
		{"compound100", benchCompound},
		{"script2KB", benchScript},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := syntax.NewParser(syntax.Variant(syntax.LangBash))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Parse(strings.NewReader(c.src), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
