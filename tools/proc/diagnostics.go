package proc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// DiagnosticsTimeout bounds each checker a get_diagnostics call runs.
const DiagnosticsTimeout = 5 * time.Minute

// Diagnostics is the get_diagnostics tool: {path?}. It finds the nearest
// directory at or above path (default the session's cwd), but not above
// the session's cwd, that configures a checker, runs every checker
// configured there and writes their findings
// to stdout, one JSON object a line:
//
//	{"file":"a.go","line":7,"column":2,"severity":"error","message":"…","source":"go vet"}
//
// with "code" (TS2322, no-unused-vars, F401) where the checker names the
// rule. File names are relative to the session's cwd when inside it. The
// checkers, by the file that configures them:
//
//	go.mod                          go vet ./...  (from path down; a file: its package)
//	tsconfig.json                   npx --no-install tsc --noEmit --pretty false
//	eslint.config.*, .eslintrc*     npx --no-install eslint -f json PATH
//	ruff.toml, [tool.ruff]          ruff check --output-format=json PATH
//
// What a checker prints that is not a finding (build errors of go list, a
// crash) goes to stderr. Result.Summary is {"checker":"go vet","count":N}
// ("tsc, eslint" when several ran, and "missing" naming the checkers that
// are not installed); Result.ExitCode is the first non-zero exit of a
// checker, or 0.
//
// The checkers run code the project controls (eslint.config.js, the
// programs in node_modules/.bin, pyproject.toml plugins), so the tool is
// judged execute: asked by default and never run in plan mode.
//
// A Diagnostics is stateless and safe for concurrent use.
type Diagnostics struct{}

var _ tool.Tool = (*Diagnostics)(nil)

// NewDiagnostics returns the get_diagnostics tool.
func NewDiagnostics() *Diagnostics { return &Diagnostics{} }

// Info returns the get_diagnostics entry of the built-in tool table.
func (*Diagnostics) Info() permission.ToolInfo { return builtin("get_diagnostics") }

type diagnosticsSummary struct {
	Checker string   `json:"checker"`
	Count   int      `json:"count"`
	Missing []string `json:"missing,omitempty"`
}

// Run runs the checkers; see Diagnostics.
func (*Diagnostics) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	tg, err := resolveTarget(call.Cwd, call.String("path"))
	if err != nil {
		return tool.Result{}, err
	}
	checkers, err := detectCheckers(tg, call.Cwd)
	if err != nil {
		return tool.Result{}, err
	}
	var ran, missing []string
	count, code := 0, 0
	for _, c := range checkers {
		if why := available(c, call.Env, call.Cwd); why != "" {
			missing = append(missing, why)
			continue
		}
		n, exit, err := runChecker(ctx, c, call, out)
		if err != nil {
			return tool.Result{}, fmt.Errorf("%s: %w", c.name, err)
		}
		ran = append(ran, c.name)
		count += n
		if code == 0 {
			code = exit
		}
	}
	if len(ran) == 0 {
		return tool.Result{}, fmt.Errorf("no checker could run: %s", strings.Join(missing, "; "))
	}
	sum, err := json.Marshal(diagnosticsSummary{Checker: strings.Join(ran, ", "), Count: count, Missing: missing})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{ExitCode: &code, Summary: sum}, nil
}

// available returns why c cannot run, or "". A project-local program
// (node_modules/.bin) counts only at or below the working directory root.
func available(c checker, env []string, root string) string {
	if _, err := lookPath(c.argv[0], env); err != nil {
		return fmt.Sprintf("%s needs %s, which is not installed: %s", c.name, c.argv[0], c.install)
	}
	if c.localBin != "" {
		if _, ok := walkUpTo(c.dir, root, func(dir string) bool {
			return isFile(filepath.Join(dir, "node_modules", ".bin", c.localBin))
		}); !ok {
			return fmt.Sprintf("%s is not installed in %s: %s", c.name, c.dir, c.install)
		}
	}
	return ""
}

// runChecker runs one checker with its output in temporary files, then
// reads the findings from them; it returns how many there were.
func runChecker(ctx context.Context, c checker, call tool.Call, out tool.Output) (count, exit int, err error) {
	stdout, err := os.CreateTemp("", "diagnostics-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(stdout.Name())
	defer stdout.Close()
	stderr, err := os.CreateTemp("", "diagnostics-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()

	cmd := command{argv: c.argv, dir: c.dir, env: call.Env, timeout: DiagnosticsTimeout, stdout: stdout, stderr: stderr, confine: call.Confine}
	exit, err = cmd.run(ctx)
	if err != nil {
		return 0, 0, err
	}
	findings, rest := stderr, stdout
	if c.fromStdout {
		findings, rest = stdout, stderr
	}
	for _, f := range []*os.File{findings, rest} {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, 0, err
		}
	}
	enc := json.NewEncoder(out.Stdout)
	var werr error
	emit := func(d diagnostic) {
		d.File = displayPath(d.File, c.dir, call.Cwd)
		if werr == nil {
			werr = enc.Encode(d)
			count++
		}
	}
	if err := c.parse(findings, emit, out.Stderr); err != nil {
		// Not the format we know (a crash, a usage error): show it as is.
		fmt.Fprintf(out.Stderr, "could not read %s's findings (%v); its output follows\n", c.name, err)
		if _, err := findings.Seek(0, io.SeekStart); err != nil {
			return 0, 0, err
		}
		if _, err := io.Copy(out.Stderr, findings); err != nil {
			return 0, 0, err
		}
	}
	if _, err := io.Copy(out.Stderr, rest); err != nil {
		return 0, 0, err
	}
	if werr != nil {
		return 0, 0, fmt.Errorf("writing the findings: %w", werr)
	}
	return count, exit, nil
}

// displayPath makes a checker's file name (relative to where it ran, or
// absolute) relative to the session's cwd when it is inside it.
func displayPath(file, dir, cwd string) string {
	if file == "" {
		return file
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	if rel, err := filepath.Rel(cwd, file); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return file
}
