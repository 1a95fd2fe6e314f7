package proc

import (
	"github.com/custom-agent/custom-agent/testsupport/testenv"

	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/tool"
)

func ptr(n int) *int { return &n }

// writeFiles creates files (path → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goModule is a module with one passing, one failing and one skipped test
// at its root and a passing package b.
var goModule = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.26\n",
	"a_test.go": `package m

import "testing"

func TestPass(t *testing.T) {}

func TestFail(t *testing.T) {
	t.Run("case", func(t *testing.T) { t.Error("boom") })
}

func TestSkip(t *testing.T) { t.Skip("later") }
`,
	"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {}\n",
}

func needProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := lookPath(name, os.Environ()); err != nil {
		testenv.NeedProgram(t, name) // skips locally, fails in CI
	}
}

func TestRunTestsGo(t *testing.T) {
	t.Parallel()
	needProgram(t, "go")
	dir := t.TempDir()
	writeFiles(t, dir, goModule)
	tests := []struct {
		name     string
		path     string
		wantCode int
		want     testSummary
	}{
		{name: "whole module", wantCode: 1, want: testSummary{
			Runner: "go", Passed: ptr(2), Failed: ptr(1), Skipped: ptr(1),
			PackagesPassed: ptr(1), PackagesFailed: ptr(1),
			FailedTests: []string{"example.com/m.TestFail/case", "example.com/m.TestFail"},
		}},
		{name: "a package below", path: "b", want: testSummary{
			Runner: "go", Passed: ptr(1), Failed: ptr(0), Skipped: ptr(0),
			PackagesPassed: ptr(1), PackagesFailed: ptr(0),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := map[string]any{}
			if tt.path != "" {
				args["path"] = tt.path
			}
			res, o := runWithResult(t, NewRunTests(), tool.Call{Args: args, Cwd: dir, Env: os.Environ()})
			if o.err != nil {
				t.Fatalf("Run: %v\nstderr: %s", o.err, o.stderr)
			}
			if o.code != tt.wantCode {
				t.Errorf("exit %d, want %d", o.code, tt.wantCode)
			}
			var got testSummary
			if err := json.Unmarshal(res.Summary, &got); err != nil {
				t.Fatalf("summary %s: %v", res.Summary, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("summary (-want +got):\n%s", d)
			}
			if strings.Contains(o.stdout, "=== RUN") || strings.Contains(o.stdout, "--- PASS") {
				t.Errorf("stdout keeps the framing lines:\n%s", o.stdout)
			}
			if tt.wantCode != 0 && !strings.Contains(o.stdout, "boom") {
				t.Errorf("stdout lacks the failure message:\n%s", o.stdout)
			}
		})
	}
}

func TestRunTestsNode(t *testing.T) {
	t.Parallel()
	needProgram(t, "npm")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"package.json": `{"name":"demo","scripts":{"test":"node --test"}}`,
		"a.test.js": `const test = require('node:test');
const assert = require('node:assert');
test('passes', () => {});
test('fails', () => { assert.equal(1, 2); });
`,
	})
	res, o := runWithResult(t, NewRunTests(), tool.Call{Cwd: dir, Env: os.Environ()})
	if o.err != nil {
		t.Fatalf("Run: %v\nstderr: %s", o.err, o.stderr)
	}
	if want := `{"runner":"npm","passed":1,"failed":1,"skipped":0}`; string(res.Summary) != want || o.code == 0 {
		t.Errorf("summary %s exit %d, want %s and a non-zero exit", res.Summary, o.code, want)
	}
}

func runWithResult(t *testing.T, tl tool.Tool, call tool.Call) (tool.Result, outcome) {
	t.Helper()
	var stdout, stderr strings.Builder
	res, err := tl.Run(t.Context(), call, tool.Output{Stdout: &stdout, Stderr: &stderr})
	o := outcome{stdout: stdout.String(), stderr: stderr.String(), code: -1, err: err}
	if res.ExitCode != nil {
		o.code = *res.ExitCode
	}
	return res, o
}

func TestDetectRunner(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		files    map[string]string
		path     string // the target, under the temp dir
		wantName string
		wantArgv []string
		wantDir  string // relative to the temp dir
		wantErr  string
	}{
		{name: "go module root", files: map[string]string{"go.mod": "module m\n"},
			wantName: "go", wantArgv: []string{"go", "test", "-json", "./..."}},
		{name: "go package below the module", files: map[string]string{"go.mod": "module m\n", "p/q/x.go": ""},
			path: "p/q", wantName: "go", wantArgv: []string{"go", "test", "-json", "./p/q/..."}},
		{name: "go file means its package", files: map[string]string{"go.mod": "module m\n", "p/x_test.go": ""},
			path: "p/x_test.go", wantName: "go", wantArgv: []string{"go", "test", "-json", "./p/..."}},
		{name: "npm", files: map[string]string{"package.json": `{"scripts":{"test":"jest"}}`},
			wantName: "npm", wantArgv: []string{"npm", "test"}},
		{name: "npm init's failing script is no test setup",
			files:   map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`},
			wantErr: `has no "test" script`},
		{name: "pytest.ini", files: map[string]string{"pytest.ini": "[pytest]\n"},
			wantName: "pytest", wantArgv: []string{"python3", "-m", "pytest", "-q"}},
		{name: "pyproject with pytest options", files: map[string]string{"pyproject.toml": "[project]\nname='x'\n\n[tool.pytest.ini_options]\n"},
			wantName: "pytest", wantArgv: []string{"python3", "-m", "pytest", "-q"}},
		{name: "setup.cfg", files: map[string]string{"setup.cfg": "[metadata]\n[tool:pytest]\n"},
			wantName: "pytest", wantArgv: []string{"python3", "-m", "pytest", "-q"}},
		{name: "tests dir, subdir target", files: map[string]string{"tests/test_a.py": "", "tests/sub/x": ""},
			path: "tests/sub", wantName: "pytest", wantArgv: []string{"python3", "-m", "pytest", "-q", "./tests/sub"}},
		{name: "flat test files", files: map[string]string{"test_a.py": ""},
			wantName: "pytest", wantArgv: []string{"python3", "-m", "pytest", "-q"}},
		{name: "conftest", files: map[string]string{"conftest.py": ""},
			wantName: "pytest", wantArgv: []string{"python3", "-m", "pytest", "-q"}},
		{name: "pyproject without pytest is no test setup", files: map[string]string{"pyproject.toml": "[project]\n"},
			wantErr: "no test setup found"},
		{name: "cargo", files: map[string]string{"Cargo.toml": "[package]\n"},
			wantName: "cargo", wantArgv: []string{"cargo", "test"}},
		{name: "nearest project wins", files: map[string]string{"go.mod": "module m\n", "web/package.json": `{"scripts":{"test":"vitest"}}`},
			path: "web", wantName: "npm", wantArgv: []string{"npm", "test"}, wantDir: "web"},
		{name: "nothing", files: map[string]string{"README": ""}, wantErr: "looked for go.mod (go test)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			tg, err := resolveTarget(dir, tt.path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := detectRunner(tg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.name != tt.wantName || !cmp.Equal(r.argv, tt.wantArgv) || r.dir != filepath.Join(dir, tt.wantDir) {
				t.Errorf("got %s %q in %s, want %s %q in %s", r.name, r.argv, r.dir, tt.wantName, tt.wantArgv, tt.wantDir)
			}
		})
	}
}

func TestRunTestsNoProject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, o := runWithResult(t, NewRunTests(), tool.Call{Args: map[string]any{"path": "missing"}, Cwd: dir, Env: testEnv()})
	if o.err == nil || !strings.Contains(o.err.Error(), "does not exist") {
		t.Errorf("error %v, want a missing path", o.err)
	}
}

// The summary parsers read fixtures of each runner's output, fed through
// the same lineTee the tool uses, in small chunks to cut lines apart.
func TestRunnerOutputParsers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fixture  string
		parse    func(*tally, string)
		want     testSummary
		wantHint string
	}{
		{"npm_node_tap.txt", npmLine, testSummary{Passed: ptr(1), Failed: ptr(1), Skipped: ptr(1)}, ""},
		{"npm_node_spec.txt", npmLine, testSummary{Passed: ptr(1), Failed: ptr(1), Skipped: ptr(1)}, ""},
		{"npm_jest.txt", npmLine, testSummary{Passed: ptr(5), Failed: ptr(2), Skipped: ptr(1)}, ""},
		{"npm_vitest.txt", npmLine, testSummary{Passed: ptr(3), Failed: ptr(1), Skipped: ptr(1)}, ""},
		{"npm_mocha.txt", npmLine, testSummary{Passed: ptr(2), Failed: ptr(1), Skipped: ptr(1)}, ""},
		{"npm_unknown.txt", npmLine, testSummary{}, ""},
		{"pytest.txt", pytestSummary, testSummary{Passed: ptr(3), Failed: ptr(1), Skipped: ptr(0 + 1), Errors: ptr(0)}, ""},
		{"pytest_errors.txt", pytestSummary, testSummary{Passed: ptr(2), Failed: ptr(0), Skipped: ptr(0), Errors: ptr(1)}, ""},
		{"pytest_missing.txt", pytestSummary, testSummary{}, "python3 -m pip install pytest"},
		{"cargo.txt", cargoSummary, testSummary{Passed: ptr(3), Failed: ptr(1), Skipped: ptr(1)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			tl := &tally{}
			var out strings.Builder
			tee := &lineTee{w: &out, line: func(l string) { tt.parse(tl, l) }}
			for len(data) > 0 {
				n := min(7, len(data))
				if _, err := tee.Write(data[:n]); err != nil {
					t.Fatal(err)
				}
				data = data[n:]
			}
			tee.flush()
			got := testSummary{Passed: tl.passed, Failed: tl.failed, Skipped: tl.skipped, Errors: tl.errs}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("counts (-want +got):\n%s", d)
			}
			if !strings.Contains(tl.hint, tt.wantHint) || (tt.wantHint == "") != (tl.hint == "") {
				t.Errorf("hint %q, want %q", tl.hint, tt.wantHint)
			}
		})
	}
}
