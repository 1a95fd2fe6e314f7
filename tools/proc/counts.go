package proc

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Summary lines of the runners other than go, which have no machine
// output on stdout we can rely on. Counts are best effort: a runner or
// reporter not listed here leaves them absent.
var (
	// node:test, spec reporter ("ℹ pass 3") and TAP reporter ("# pass 3").
	nodeTestLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:ℹ|#) (pass|fail|skipped|todo) (\d+)$`) })
	// jest: "Tests:       1 failed, 1 skipped, 2 passed, 4 total".
	jestLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Tests:\s+(.*\d+ total)$`) })
	// vitest: "Tests  1 failed | 2 passed | 1 skipped (4)".
	vitestLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^Tests\s+(.*\d+ (?:passed|failed|skipped).*)\(\d+\)$`)
	})
	// mocha: "2 passing (5ms)", "1 failing", "1 pending".
	mochaLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+) (passing|failing|pending)\b`) })
	// pytest's last line: "1 failed, 2 passed, 1 skipped in 0.12s".
	pytestLine  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bin [\d.]+s\b`) })
	pytestCount = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)\b`)
	})
	// cargo, once per test binary: "test result: ok. 2 passed; 1 failed; 0 ignored; …".
	cargoLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored`)
	})
	// "1 failed", "2 passed", "1 skipped" in jest and vitest summaries.
	countWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+) (passed|failed|skipped|todo)\b`) })
)

func cleanLine(line string) string {
	return strings.TrimSpace(ansi().ReplaceAllString(line, ""))
}

func num(s string) *int {
	n, _ := strconv.Atoi(s)
	return &n
}

// npmLine reads the summary lines of node:test, jest, vitest and mocha.
func npmLine(t *tally, line string) {
	line = cleanLine(line)
	if m := nodeTestLine().FindStringSubmatch(line); m != nil {
		switch m[1] {
		case "pass":
			t.set(num(m[2]), nil, nil)
		case "fail":
			t.set(nil, num(m[2]), nil)
		case "skipped":
			t.set(nil, nil, num(m[2]))
		}
		return
	}
	if m := jestLine().FindStringSubmatch(line); m != nil {
		t.set(wordCounts(m[1]))
		return
	}
	if m := vitestLine().FindStringSubmatch(line); m != nil {
		t.set(wordCounts(m[1]))
		return
	}
	if m := mochaLine().FindStringSubmatch(line); m != nil {
		switch m[2] {
		case "passing":
			t.set(num(m[1]), nil, nil)
		case "failing":
			t.set(nil, num(m[1]), nil)
		case "pending":
			t.set(nil, nil, num(m[1]))
		}
	}
}

// wordCounts reads "1 failed, 2 passed" or "1 failed | 2 passed"; a count
// the line does not mention is zero, since the line is the whole summary.
func wordCounts(s string) (passed, failed, skipped *int) {
	passed, failed, skipped = new(int), new(int), new(int)
	for _, m := range countWord().FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		switch m[2] {
		case "passed":
			*passed += n
		case "failed":
			*failed += n
		default:
			*skipped += n
		}
	}
	return passed, failed, skipped
}

// pytestSummary reads pytest's final line. Errors (a test that could not be
// collected or set up) are counted apart from failures.
func pytestSummary(t *tally, line string) {
	line = cleanLine(line)
	if strings.Contains(line, "No module named pytest") {
		t.mu.Lock()
		t.hint = "pytest is not installed for python3: install it (python3 -m pip install pytest) and call run_tests again"
		t.mu.Unlock()
		return
	}
	if !pytestLine().MatchString(line) {
		return
	}
	counts := pytestCount().FindAllStringSubmatch(line, -1)
	if len(counts) == 0 && !strings.Contains(line, "no tests ran") {
		return
	}
	passed, failed, skipped, errs := new(int), new(int), new(int), new(int)
	for _, m := range counts {
		n, _ := strconv.Atoi(m[1])
		switch m[2] {
		case "passed", "xpassed":
			*passed += n
		case "failed":
			*failed += n
		case "error", "errors":
			*errs += n
		default:
			*skipped += n
		}
	}
	t.set(passed, failed, skipped)
	t.mu.Lock()
	t.errs = errs
	t.mu.Unlock()
}

// cargoSummary adds up cargo's "test result:" lines, one per test binary
// (unit tests, each integration test file, doc tests).
func cargoSummary(t *tally, line string) {
	m := cargoLine().FindStringSubmatch(cleanLine(line))
	if m == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, p := range []**int{&t.passed, &t.failed, &t.skipped} {
		n, _ := strconv.Atoi(m[i+1])
		inc(p, n)
	}
}
