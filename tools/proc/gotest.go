package proc

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// maxFailedNames caps the failed test names listed in the summary.
const maxFailedNames = 20

// goEvent is one line of `go test -json` (see `go doc test2json`).
type goEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// goTestOutput sits on go test -json's stdout. It writes to w the text go
// test would have printed, less the per-test framing lines (=== RUN, ===
// PAUSE, === CONT, === NAME, --- PASS) that -json implies and that would
// bury the failures; when a test's output follows another's it is headed
// by "=== NAME  TestX", as go test does for interleaved output. It counts
// tests and packages in t. A line that is not an event passes through as
// it is. It is used by one goroutine.
type goTestOutput struct {
	w    io.Writer
	t    *tally
	buf  []byte
	raw  bool   // the line in progress is too long for an event: pass it through
	last string // the package and test whose output was written last
}

func (g *goTestOutput) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i+1]
		}
		rest = rest[len(chunk):]
		if !g.raw && len(g.buf)+len(chunk) > maxLine {
			g.raw = true
			if _, err := g.w.Write(g.buf); err != nil {
				return 0, err
			}
			g.buf = g.buf[:0]
		}
		if g.raw {
			if _, err := g.w.Write(chunk); err != nil {
				return 0, err
			}
			g.raw = i < 0
			continue
		}
		g.buf = append(g.buf, chunk...)
		if i >= 0 {
			err := g.event(g.buf)
			g.buf = g.buf[:0]
			if err != nil {
				return 0, err
			}
		}
	}
	return len(p), nil
}

// flush handles a last line without a newline.
func (g *goTestOutput) flush() error {
	if len(g.buf) == 0 {
		return nil
	}
	err := g.event(g.buf)
	g.buf = g.buf[:0]
	return err
}

func (g *goTestOutput) event(line []byte) error {
	var ev goEvent
	if err := json.Unmarshal(line, &ev); err != nil || ev.Action == "" {
		_, err := g.w.Write(line)
		return err
	}
	switch ev.Action {
	case "output", "build-output":
		if framing(ev.Output) {
			return nil
		}
		if key := ev.Package + " " + ev.Test; key != g.last {
			g.last = key
			if ev.Test != "" && !strings.HasPrefix(strings.TrimLeft(ev.Output, " "), "--- ") {
				if _, err := io.WriteString(g.w, "=== NAME  "+ev.Test+"\n"); err != nil {
					return err
				}
			}
		}
		_, err := io.WriteString(g.w, ev.Output)
		return err
	case "pass", "fail", "skip":
		g.count(ev)
	}
	return nil
}

// framing reports whether a line of test output is one of the lines -json
// adds to every test.
func framing(s string) bool {
	s = strings.TrimLeft(s, " ")
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// count adds a result: packages apart, tests by their top-level result
// (a failing subtest fails its parent too), failed names down to subtests.
func (g *goTestOutput) count(ev goEvent) {
	t := g.t
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case ev.Test == "" && ev.Action == "pass":
		inc(&t.pkgPassed, 1)
	case ev.Test == "" && ev.Action == "fail":
		inc(&t.pkgFailed, 1)
	case ev.Test == "": // skip: a package without test files
	case !strings.Contains(ev.Test, "/"):
		switch ev.Action {
		case "pass":
			inc(&t.passed, 1)
		case "fail":
			inc(&t.failed, 1)
		default:
			inc(&t.skipped, 1)
		}
	}
	if ev.Test != "" && ev.Action == "fail" && len(t.failedTests) < maxFailedNames {
		t.failedTests = append(t.failedTests, ev.Package+"."+ev.Test)
	}
}
