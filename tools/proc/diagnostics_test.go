package proc

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/tool"
)

func TestDiagnosticsGoVet(t *testing.T) {
	t.Parallel()
	needProgram(t, "go")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/m\n\ngo 1.26\n",
		"a.go":    "package m\n\nimport \"fmt\"\n\nfunc F() {\n\tfmt.Printf(\"%d\\n\", \"s\")\n}\n",
		"ok/b.go": "package ok\n\nfunc G() int { return 1 }\n",
	})
	tests := []struct {
		name    string
		path    string
		want    []diagnostic
		summary string
	}{
		{name: "module", want: []diagnostic{{File: "a.go", Line: 6, Column: 14, Severity: "error",
			Message: "fmt.Printf format %d has arg \"s\" of wrong type string", Source: "go vet"}},
			summary: `{"checker":"go vet","count":1}`},
		{name: "a clean package", path: "ok", summary: `{"checker":"go vet","count":0}`},
		{name: "a file means its package", path: "a.go", want: []diagnostic{{File: "a.go", Line: 6, Column: 14, Severity: "error",
			Message: "fmt.Printf format %d has arg \"s\" of wrong type string", Source: "go vet"}},
			summary: `{"checker":"go vet","count":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := map[string]any{}
			if tt.path != "" {
				args["path"] = tt.path
			}
			res, o := runWithResult(t, NewDiagnostics(), tool.Call{Args: args, Cwd: dir, Env: os.Environ()})
			if o.err != nil {
				t.Fatalf("Run: %v", o.err)
			}
			got := decodeLines(t, o.stdout)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("diagnostics (-want +got):\n%s\nstderr: %s", d, o.stderr)
			}
			if string(res.Summary) != tt.summary {
				t.Errorf("summary %s, want %s", res.Summary, tt.summary)
			}
		})
	}
}

func decodeLines(t *testing.T, s string) []diagnostic {
	t.Helper()
	var ds []diagnostic
	for line := range strings.Lines(s) {
		var d diagnostic
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		ds = append(ds, d)
	}
	return ds
}

func TestDiagnosticsRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no checker", map[string]string{"README": ""}, "no checker configured"},
		{"tsc not installed in the project", map[string]string{"tsconfig.json": "{}"}, "npm install --save-dev typescript"},
		{"eslint not installed in the project", map[string]string{"eslint.config.js": ""}, "npm install --save-dev eslint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			_, o := runWithResult(t, NewDiagnostics(), tool.Call{Cwd: dir, Env: testEnv()})
			if o.err == nil || !strings.Contains(o.err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", o.err, tt.want)
			}
		})
	}
}

func TestCheckerParsers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		parse     func(r *strings.Reader) ([]diagnostic, string, error)
		in        string
		want      []diagnostic
		wantOther string
	}{
		{name: "go vet", parse: via(vetParse), in: "# example.com/m\n./a.go:6:2: fmt.Printf format %d has arg \"s\" of wrong type string\nvet: b/b.go:3:9: undefined: x\ngo: warning: something\n",
			want: []diagnostic{
				{File: "./a.go", Line: 6, Column: 2, Severity: "error", Message: `fmt.Printf format %d has arg "s" of wrong type string`, Source: "go vet"},
				{File: "b/b.go", Line: 3, Column: 9, Severity: "error", Message: "undefined: x", Source: "go vet"},
			}, wantOther: "go: warning: something\n"},
		{name: "go vet continuation lines", parse: via(vetParse), in: "a.go:1:1: first\n\tmore\nb.go:2: second\n",
			want: []diagnostic{
				{File: "a.go", Line: 1, Column: 1, Severity: "error", Message: "first\nmore", Source: "go vet"},
				{File: "b.go", Line: 2, Severity: "error", Message: "second", Source: "go vet"},
			}},
		{name: "tsc", parse: via(tscParse), in: "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n  Details here.\nsrc/b.ts(1,1): warning TS6133: 'x' is declared but never used.\n",
			want: []diagnostic{
				{File: "src/a.ts", Line: 3, Column: 7, Severity: "error", Message: "Type 'string' is not assignable to type 'number'.\nDetails here.", Source: "tsc", Code: "TS2322"},
				{File: "src/b.ts", Line: 1, Column: 1, Severity: "warning", Message: "'x' is declared but never used.", Source: "tsc", Code: "TS6133"},
			}},
		{name: "eslint", parse: via(eslintParse),
			in: `[{"filePath":"/p/a.js","messages":[{"ruleId":"no-unused-vars","severity":2,"message":"'x' is assigned a value but never used.","line":1,"column":7},{"ruleId":"semi","severity":1,"message":"Missing semicolon.","line":2,"column":3}],"errorCount":1},{"filePath":"/p/b.js","messages":[]}]`,
			want: []diagnostic{
				{File: "/p/a.js", Line: 1, Column: 7, Severity: "error", Message: "'x' is assigned a value but never used.", Source: "eslint", Code: "no-unused-vars"},
				{File: "/p/a.js", Line: 2, Column: 3, Severity: "warning", Message: "Missing semicolon.", Source: "eslint", Code: "semi"},
			}},
		{name: "ruff", parse: via(ruffParse),
			in: `[{"code":"F401","message":"` + "`os` imported but unused" + `","filename":"/p/a.py","location":{"row":1,"column":8},"end_location":{"row":1,"column":10},"fix":null,"noqa_row":1,"url":"https://docs.astral.sh/ruff/rules/unused-import"},{"code":null,"message":"SyntaxError: Expected an expression","filename":"/p/b.py","location":{"row":2,"column":5}}]`,
			want: []diagnostic{
				{File: "/p/a.py", Line: 1, Column: 8, Severity: "warning", Message: "`os` imported but unused", Source: "ruff", Code: "F401"},
				{File: "/p/b.py", Line: 2, Column: 5, Severity: "error", Message: "SyntaxError: Expected an expression", Source: "ruff"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, other, err := tt.parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if other != tt.wantOther {
				t.Errorf("other output %q, want %q", other, tt.wantOther)
			}
		})
	}
}

func TestCheckerParserRejectsText(t *testing.T) {
	t.Parallel()
	if _, _, err := via(eslintParse)(strings.NewReader("Oops! Something went wrong!\n")); err == nil {
		t.Error("eslint parser read text as findings")
	}
}

// via runs a parser over r and returns what it found and what it passed on.
func via(parse func(io.Reader, func(diagnostic), io.Writer) error) func(*strings.Reader) ([]diagnostic, string, error) {
	return func(r *strings.Reader) ([]diagnostic, string, error) {
		var got []diagnostic
		var other strings.Builder
		err := parse(r, func(d diagnostic) { got = append(got, d) }, &other)
		return got, other.String(), err
	}
}

// TestDiagnosticsStaysInCwd is white-box review A7: checkers configured
// above the session's working directory, or project-local programs found
// only there, are never run.
func TestDiagnosticsStaysInCwd(t *testing.T) {
	t.Parallel()
	needProgram(t, "npx")
	const fakeESLint = "#!/bin/sh\ntouch PWNED_DIAG\necho '[]'\n"
	setup := func(t *testing.T, files map[string]string) string {
		t.Helper()
		root := t.TempDir()
		writeFiles(t, root, files)
		if err := os.Chmod(filepath.Join(root, "node_modules/.bin/eslint"), 0o755); err != nil {
			t.Fatal(err)
		}
		return root
	}
	pwned := func(root string) []string {
		m, _ := filepath.Glob(filepath.Join(root, "*", "PWNED_DIAG"))
		if isFile(filepath.Join(root, "PWNED_DIAG")) {
			m = append(m, filepath.Join(root, "PWNED_DIAG"))
		}
		return m
	}

	// The fixture works: with the checker in cwd, the project's "eslint" runs.
	root := setup(t, map[string]string{"eslint.config.js": "", "node_modules/.bin/eslint": fakeESLint, "sub/README": ""})
	if _, o := runWithResult(t, NewDiagnostics(), tool.Call{Cwd: root, Env: testEnv()}); o.err != nil || len(pwned(root)) == 0 {
		t.Fatalf("control: the project's eslint did not run (err %v, stderr %q)", o.err, o.stderr)
	}

	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"config and program above cwd", map[string]string{"eslint.config.js": "", "node_modules/.bin/eslint": fakeESLint, "sub/README": ""},
			"no checker configured in"},
		{"program only above cwd", map[string]string{"sub/eslint.config.js": "", "node_modules/.bin/eslint": fakeESLint},
			"eslint is not installed in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := setup(t, tt.files)
			_, o := runWithResult(t, NewDiagnostics(), tool.Call{Cwd: filepath.Join(root, "sub"), Env: testEnv()})
			if o.err == nil || !strings.Contains(o.err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", o.err, tt.want)
			}
			if p := pwned(root); len(p) > 0 {
				t.Errorf("a checker above the working directory ran: %v", p)
			}
		})
	}
}

func TestWalkUpTo(t *testing.T) {
	t.Parallel()
	var seen []string
	collect := func(dir string) bool { seen = append(seen, dir); return false }
	tests := []struct {
		dir, root string
		want      []string
	}{
		{"/a/b/c", "/a", []string{"/a/b/c", "/a/b", "/a"}},
		{"/a", "/a", []string{"/a"}},
		{"/x/y", "/a", []string{"/x/y"}},
		{"/ab/c", "/a", []string{"/ab/c"}},
		{"/a/b", "/", []string{"/a/b", "/a", "/"}},
	}
	for _, tt := range tests {
		seen = nil
		walkUpTo(tt.dir, tt.root, collect)
		if d := cmp.Diff(tt.want, seen); d != "" {
			t.Errorf("walkUpTo(%s, %s) (-want +got):\n%s", tt.dir, tt.root, d)
		}
	}
}
