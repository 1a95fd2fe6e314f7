package proc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// diagnostic is one finding of a checker, written as a JSON line.
type diagnostic struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column,omitempty"`
	Severity string `json:"severity"` // error, warning or info
	Message  string `json:"message"`
	Source   string `json:"source"`         // the checker: go vet, tsc, eslint, ruff
	Code     string `json:"code,omitempty"` // the rule: TS2322, no-unused-vars, F401
}

// checker is how to run one checker and read its findings.
type checker struct {
	name       string
	argv       []string
	dir        string // where it runs; relative file names are relative to it
	install    string // what to do when it is not installed
	localBin   string // for npx: the program that must be in node_modules/.bin
	fromStdout bool   // the findings are on stdout (else stderr)
	// parse reads the findings from r, hands each to emit and writes what
	// it does not understand to other.
	parse func(r io.Reader, emit func(diagnostic), other io.Writer) error
}

// detectCheckers finds the nearest directory at or above the target, up
// to the session's working directory root and never above it, that
// configures a checker, and returns every checker configured there.
func detectCheckers(tg target, root string) ([]checker, error) {
	var found []checker
	walkUpTo(tg.dir, root, func(dir string) bool {
		if isFile(filepath.Join(dir, "go.mod")) {
			pkgs := target{path: tg.dir}.rel(dir)
			if tg.path == tg.dir {
				pkgs += "/..."
			}
			found = append(found, checker{name: "go vet", argv: []string{"go", "vet", pkgs}, dir: dir,
				install: "install Go (https://go.dev/dl/) and put it on PATH", parse: vetParse})
		}
		if isFile(filepath.Join(dir, "tsconfig.json")) {
			found = append(found, checker{name: "tsc", argv: []string{"npx", "--no-install", "tsc", "--noEmit", "--pretty", "false"},
				dir: dir, localBin: "tsc", fromStdout: true, parse: tscParse,
				install: "install TypeScript in the project (npm install --save-dev typescript)"})
		}
		if eslintConfigured(dir) {
			found = append(found, checker{name: "eslint", argv: []string{"npx", "--no-install", "eslint", "-f", "json", tg.rel(dir)},
				dir: dir, localBin: "eslint", fromStdout: true, parse: eslintParse,
				install: "install ESLint in the project (npm install --save-dev eslint)"})
		}
		if isFile(filepath.Join(dir, "ruff.toml")) || isFile(filepath.Join(dir, ".ruff.toml")) ||
			fileHasLine(filepath.Join(dir, "pyproject.toml"), "[tool.ruff") {
			found = append(found, checker{name: "ruff", argv: []string{"ruff", "check", "--output-format=json", tg.rel(dir)},
				dir: dir, fromStdout: true, parse: ruffParse,
				install: "install ruff (python3 -m pip install ruff)"})
		}
		return len(found) > 0
	})
	if len(found) == 0 {
		return nil, fmt.Errorf("no checker configured in %s or its parents up to the working directory: looked for go.mod (go vet), "+
			"tsconfig.json (tsc), an ESLint config (eslint.config.js/.mjs/.cjs/.ts, .eslintrc*, eslintConfig in package.json) "+
			"and ruff.toml, .ruff.toml or pyproject.toml with [tool.ruff] (ruff); run a checker with the shell tool instead", tg.dir)
	}
	return found, nil
}

func eslintConfigured(dir string) bool {
	return anyFile(dir, "eslint.config.*", ".eslintrc", ".eslintrc.*") ||
		fileHasLine(filepath.Join(dir, "package.json"), `"eslintConfig"`)
}

// lines calls fn for each line of r (lines longer than maxLine are cut).
func lines(r io.Reader, fn func(string)) error {
	br := bufio.NewReaderSize(r, maxLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			fn(strings.TrimRight(string(line), "\r\n"))
		}
		for err == bufio.ErrBufferFull { // skip the rest of a long line
			_, err = br.ReadSlice('\n')
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// textParser reads checkers that print one finding a line, followed by
// indented continuation lines. match returns the finding of a line, if it
// is one.
func textParser(match func(string) (diagnostic, bool), skip func(string) bool) func(io.Reader, func(diagnostic), io.Writer) error {
	return func(r io.Reader, emit func(diagnostic), other io.Writer) error {
		var pending *diagnostic
		flush := func() {
			if pending != nil {
				emit(*pending)
				pending = nil
			}
		}
		err := lines(r, func(line string) {
			if d, ok := match(line); ok {
				flush()
				pending = &d
				return
			}
			if pending != nil && (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "  ")) {
				pending.Message += "\n" + strings.TrimSpace(line)
				return
			}
			flush()
			if !skip(line) {
				fmt.Fprintln(other, line)
			}
		})
		flush()
		return err
	}
}

// go vet: "./a.go:7:2: fmt.Printf format %d has arg s of wrong type
// string", and for type errors "vet: ./a.go:3:9: undefined: x".
var vetLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:vet: )?(\S.*?\.go):(\d+)(?::(\d+))?: (.*)$`) })

var vetParse = textParser(func(line string) (diagnostic, bool) {
	m := vetLine().FindStringSubmatch(line)
	if m == nil {
		return diagnostic{}, false
	}
	return diagnostic{File: m[1], Line: atoi(m[2]), Column: atoi(m[3]), Severity: "error",
		Message: m[4], Source: "go vet"}, true
}, func(line string) bool { return strings.HasPrefix(line, "# ") })

// tsc --pretty false: "src/a.ts(3,7): error TS2322: Type 'string' is not …".
var tscLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(.+?)\((\d+),(\d+)\): (error|warning|message) (TS\d+): (.*)$`)
})

var tscParse = textParser(func(line string) (diagnostic, bool) {
	m := tscLine().FindStringSubmatch(line)
	if m == nil {
		return diagnostic{}, false
	}
	sev := m[4]
	if sev == "message" {
		sev = "info"
	}
	return diagnostic{File: m[1], Line: atoi(m[2]), Column: atoi(m[3]), Severity: sev,
		Message: m[6], Source: "tsc", Code: m[5]}, true
}, func(string) bool { return false })

// jsonArray decodes a JSON array one element at a time, so a checker's
// report is never held whole in memory.
func jsonArray[T any](r io.Reader, each func(T)) error {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return fmt.Errorf("the output is not a JSON array")
	}
	for dec.More() {
		var v T
		if err := dec.Decode(&v); err != nil {
			return err
		}
		each(v)
	}
	_, err := dec.Token()
	return err
}

// eslint -f json: [{"filePath", "messages": [{"ruleId", "severity" (1
// warning, 2 error), "message", "line", "column"}]}].
func eslintParse(r io.Reader, emit func(diagnostic), _ io.Writer) error {
	type result struct {
		FilePath string
		Messages []struct {
			RuleID   string
			Severity int
			Message  string
			Line     int
			Column   int
		}
	}
	return jsonArray(r, func(res result) {
		for _, m := range res.Messages {
			sev := "warning"
			if m.Severity >= 2 {
				sev = "error"
			}
			emit(diagnostic{File: res.FilePath, Line: m.Line, Column: m.Column, Severity: sev,
				Message: m.Message, Source: "eslint", Code: m.RuleID})
		}
	})
}

// ruff check --output-format=json: [{"code", "message", "filename",
// "location": {"row", "column"}}]; a null code is a syntax error.
func ruffParse(r io.Reader, emit func(diagnostic), _ io.Writer) error {
	type finding struct {
		Code     *string `json:"code"`
		Message  string  `json:"message"`
		Filename string  `json:"filename"`
		Location struct {
			Row    int `json:"row"`
			Column int `json:"column"`
		} `json:"location"`
	}
	return jsonArray(r, func(f finding) {
		d := diagnostic{File: f.Filename, Line: f.Location.Row, Column: f.Location.Column,
			Severity: "error", Message: f.Message, Source: "ruff"}
		if f.Code != nil {
			d.Severity, d.Code = "warning", *f.Code
		}
		emit(d)
	})
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
