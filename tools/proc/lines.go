package proc

import (
	"bytes"
	"io"
	"regexp"
	"sync"
)

// maxLine is the longest line a parser sees; the rest of a longer line is
// still written through but not parsed.
const maxLine = 64 << 10

// lineTee writes everything to w unchanged, as it comes, and hands each
// complete line (without its newline, at most maxLine bytes) to line. A
// lineTee is used by one goroutine.
type lineTee struct {
	w    io.Writer
	line func(string)
	buf  []byte
	long bool // the current line passed maxLine
}

func (l *lineTee) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if room := maxLine - len(l.buf); len(chunk) > room {
			chunk, l.long = chunk[:room], true
		}
		l.buf = append(l.buf, chunk...)
		if i < 0 {
			break
		}
		l.flush()
		rest = rest[i+1:]
	}
	return n, err
}

// flush hands over the line in progress, if any.
func (l *lineTee) flush() {
	if len(l.buf) > 0 || l.long {
		l.line(string(l.buf))
	}
	l.buf, l.long = l.buf[:0], false
}

// ansi matches terminal colour and cursor sequences, which test runners
// print even into a pipe when asked to (FORCE_COLOR and the like).
var ansi = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`) })

// tally counts tests as a runner's output is parsed. Its methods may be
// called from the stdout and stderr goroutines at once.
type tally struct {
	mu                            sync.Mutex
	passed, failed, skipped, errs *int
	pkgPassed, pkgFailed          *int
	failedTests                   []string
	hint                          string // what to do when the runner could not run
}

// set records counts from a summary line; nil leaves a count as it was.
func (t *tally) set(passed, failed, skipped *int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if passed != nil {
		t.passed = passed
	}
	if failed != nil {
		t.failed = failed
	}
	if skipped != nil {
		t.skipped = skipped
	}
}

func inc(p **int, n int) {
	if *p == nil {
		*p = new(int)
	}
	**p += n
}
