package proc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// RunTestsTimeout bounds a test run; the tests and everything they started
// are killed after it.
const RunTestsTimeout = 10 * time.Minute

// RunTests is the run_tests tool: {path?}. It finds the nearest project at
// or above path (default the session's cwd) and runs its tests:
//
//	go.mod                         go test -json ./...  (from path down)
//	package.json with "test"       npm test
//	pytest config or test files    python3 -m pytest -q [path]
//	Cargo.toml                     cargo test
//
// The output streams to the call's Output (for go, the text go test prints,
// without the per-test "=== RUN" and "--- PASS" lines). Result.ExitCode is
// the runner's, and Result.Summary is JSON such as
//
//	{"runner":"go","passed":12,"failed":1,"skipped":0,"packagesPassed":3,
//	 "packagesFailed":1,"failedTests":["example.com/m/pkg.TestX/case"]}
//
// where a count the runner's output did not tell is left out (npm runners
// other than node:test, jest, vitest and mocha). pytest adds "errors".
//
// A RunTests is stateless and safe for concurrent use.
type RunTests struct{}

var _ tool.Tool = (*RunTests)(nil)

// NewRunTests returns the run_tests tool.
func NewRunTests() *RunTests { return &RunTests{} }

// Info returns the run_tests entry of the built-in tool table.
func (*RunTests) Info() permission.ToolInfo { return builtin("run_tests") }

// testSummary is Result.Summary of run_tests.
type testSummary struct {
	Runner         string   `json:"runner"`
	Passed         *int     `json:"passed,omitempty"`
	Failed         *int     `json:"failed,omitempty"`
	Skipped        *int     `json:"skipped,omitempty"`
	Errors         *int     `json:"errors,omitempty"`
	PackagesPassed *int     `json:"packagesPassed,omitempty"`
	PackagesFailed *int     `json:"packagesFailed,omitempty"`
	FailedTests    []string `json:"failedTests,omitempty"`
}

// Run runs the tests; see RunTests.
func (*RunTests) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	tg, err := resolveTarget(call.Cwd, call.String("path"))
	if err != nil {
		return tool.Result{}, err
	}
	r, err := detectRunner(tg)
	if err != nil {
		return tool.Result{}, err
	}
	t := &tally{}
	var stdout *goTestOutput
	stderrTee := &lineTee{w: out.Stderr, line: func(string) {}}
	c := command{argv: r.argv, dir: r.dir, env: call.Env, timeout: RunTestsTimeout, stderr: stderrTee, confine: call.Confine}
	if r.line == nil { // go
		t.passed, t.failed, t.skipped = new(int), new(int), new(int)
		t.pkgPassed, t.pkgFailed = new(int), new(int)
		stdout = &goTestOutput{w: out.Stdout, t: t}
		c.stdout = stdout
	} else {
		stdoutTee := &lineTee{w: out.Stdout, line: func(l string) { r.line(t, l) }}
		stderrTee.line = stdoutTee.line
		c.stdout = stdoutTee
		defer stdoutTee.flush()
	}
	code, err := c.run(ctx)
	if stdout != nil {
		if ferr := stdout.flush(); err == nil && ferr != nil {
			err = fmt.Errorf("writing the test output: %w", ferr)
		}
	}
	stderrTee.flush()
	if err != nil {
		if me := (*missingError)(nil); errors.As(err, &me) {
			return tool.Result{}, fmt.Errorf("%w: %s", err, r.install)
		}
		return tool.Result{}, err
	}
	if t.hint != "" {
		return tool.Result{}, errors.New(t.hint)
	}
	sum, err := json.Marshal(testSummary{
		Runner: r.name, Passed: t.passed, Failed: t.failed, Skipped: t.skipped, Errors: t.errs,
		PackagesPassed: t.pkgPassed, PackagesFailed: t.pkgFailed, FailedTests: t.failedTests,
	})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{ExitCode: &code, Summary: sum}, nil
}

// runner is how to run one kind of project's tests.
type runner struct {
	name    string // in the summary: go, npm, pytest, cargo
	argv    []string
	dir     string               // where the runner runs: the project's root
	install string               // what to do when argv[0] is not installed
	line    func(*tally, string) // reads counts from output lines; nil for go
}

// detectRunner finds the nearest project at or above the target.
func detectRunner(tg target) (runner, error) {
	var r runner
	var notes []string
	_, found := walkUp(tg.dir, func(dir string) bool {
		switch {
		case isFile(filepath.Join(dir, "go.mod")):
			pkgs := target{path: tg.dir}.rel(dir) + "/..."
			r = runner{name: "go", argv: []string{"go", "test", "-json", pkgs}, dir: dir,
				install: "install Go (https://go.dev/dl/) and put it on PATH to run this module's tests"}
		case isFile(filepath.Join(dir, "package.json")):
			if !hasTestScript(filepath.Join(dir, "package.json")) {
				notes = append(notes, filepath.Join(dir, "package.json")+` has no "test" script`)
				return false
			}
			r = runner{name: "npm", argv: []string{"npm", "test"}, dir: dir, line: npmLine,
				install: "install Node.js and npm to run this project's tests"}
		case pytestProject(dir):
			argv := []string{"python3", "-m", "pytest", "-q"}
			if rel := tg.rel(dir); rel != "." {
				argv = append(argv, rel)
			}
			r = runner{name: "pytest", argv: argv, dir: dir, line: pytestSummary,
				install: "install Python 3 and pytest (python3 -m pip install pytest) to run this project's tests"}
		case isFile(filepath.Join(dir, "Cargo.toml")):
			r = runner{name: "cargo", argv: []string{"cargo", "test"}, dir: dir, line: cargoSummary,
				install: "install Rust with cargo (https://rustup.rs) to run this crate's tests"}
		default:
			return false
		}
		return true
	})
	if !found {
		msg := fmt.Sprintf("no test setup found in %s or its parents: looked for go.mod (go test), "+
			`package.json with a "test" script (npm test), pytest.ini, pyproject.toml with [tool.pytest.ini_options], `+
			"setup.cfg with [tool:pytest], tox.ini with [pytest], conftest.py or test_*.py files (pytest), "+
			"and Cargo.toml (cargo test); run the tests with the shell tool instead", tg.dir)
		if len(notes) > 0 {
			msg += " (" + strings.Join(notes, "; ") + ")"
		}
		return runner{}, errors.New(msg)
	}
	return r, nil
}

// hasTestScript reports whether package.json has a test script other than
// the one npm init writes, which only fails.
func hasTestScript(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return false
	}
	s := pkg.Scripts["test"]
	return s != "" && !strings.Contains(s, "no test specified")
}

// pytestProject reports whether dir is the root of a pytest project. Test
// files and conftest.py in a directory named tests or test point to its
// parent as the root, which is where pytest should run.
func pytestProject(dir string) bool {
	if fileHasLine(filepath.Join(dir, "pyproject.toml"), "[tool.pytest") ||
		isFile(filepath.Join(dir, "pytest.ini")) ||
		fileHasLine(filepath.Join(dir, "setup.cfg"), "[tool:pytest]") ||
		fileHasLine(filepath.Join(dir, "tox.ini"), "[pytest]") ||
		anyFile(dir, "tests/test_*.py", "tests/*_test.py", "tests/conftest.py") {
		return true
	}
	switch filepath.Base(dir) {
	case "tests", "test":
		return false
	}
	return anyFile(dir, "conftest.py", "test_*.py")
}
