//go:build linux

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/testsupport/ptytest"
)

// These tests put the UI on a real pseudo-terminal: raw mode, tcflush and
// the window size are the kernel's, and what the test reads from the
// master side is what a terminal would have been sent.

func ptyQuestion(tool string, level risk.Level, args map[string]any) executor.Question {
	raw, _ := json.Marshal(args)
	d := permission.Decision{Decision: permission.Ask, RiskAtDecision: level, SourcedFrom: permission.FromDefault,
		Reason: level.String() + " calls are asked about by default"}
	return executor.Question{SessionID: "s1", ToolCallID: "tc_1", Tool: permission.ToolInfo{Name: tool, Risk: level},
		Args: raw, Decision: d, Options: executor.OfferedOptions(d, true, false)}
}

// ptyUI runs a UI on the slave side of p, as NewStdio would set it up;
// edit may change the options. It returns a function that asks q and
// waits for the answer.
func ptyUI(t *testing.T, p *ptytest.PTY, edit func(*Options)) func(executor.Question) executor.Answer {
	t.Helper()
	fd := p.SlaveFD
	opts := Options{IsTTY: true, MakeRaw: rawMode(fd), Flush: func() error { return flushInput(fd) },
		Size: func() (int, int, error) { return term.GetSize(fd) }}
	if edit != nil {
		edit(&opts)
	}
	b := approval.New(nil)
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		_ = New(b, p.Slave, p.Slave, &opts).Run(ctx)
	}()
	t.Cleanup(func() { stop(); <-ran })
	return func(q executor.Question) executor.Answer {
		t.Helper()
		a, err := b.Ask(context.Background(), q)
		if err != nil {
			t.Fatalf("Ask: %v", err)
		}
		return a
	}
}

// askAsync asks in the background.
func askAsync(ask func(executor.Question) executor.Answer, q executor.Question) <-chan executor.Answer {
	ch := make(chan executor.Answer, 1)
	go func() { ch <- ask(q) }()
	return ch
}

func waitAnswer(t *testing.T, ch <-chan executor.Answer) executor.Answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return executor.Answer{}
	}
}

// Keys typed while a tool ran (the terminal cooked, nobody reading a
// line yet) sit in the terminal's queue; raw mode would hand them to the
// UI the moment the question is drawn. The flush discards them, so they
// never answer, even with the key guard off. Without the flush, they do:
// the test can fail.
func TestPTYTypeAheadIsFlushed(t *testing.T) {
	q := ptyQuestion("shell", risk.Execute, map[string]any{"command": "npm test"})
	for _, flush := range []bool{true, false} {
		t.Run(fmt.Sprintf("flush=%v", flush), func(t *testing.T) {
			p := ptytest.Open(t)
			ask := ptyUI(t, p, func(o *Options) {
				o.KeyGuard = -1
				if !flush {
					o.Flush = nil
				}
			})
			p.Type(t, "s") // typed ahead, no Enter: the terminal holds it
			time.Sleep(50 * time.Millisecond)
			ch := askAsync(ask, q)
			p.WaitFor(t, "press a key", 5*time.Second)
			time.Sleep(100 * time.Millisecond)
			p.Type(t, "d")
			a := waitAnswer(t, ch)
			if flush && a.Option != executor.OptionDeny {
				t.Fatalf("type-ahead answered the question: %+v", a)
			}
			if !flush && a.Option != executor.OptionAllowSession {
				t.Fatalf("without the flush the type-ahead s should answer (else this test proves nothing): %+v", a)
			}
		})
	}
}

// A key pressed the moment the question appears is ignored; one pressed
// after the key guard answers.
func TestPTYKeyGuard(t *testing.T) {
	p := ptytest.Open(t)
	ask := ptyUI(t, p, func(o *Options) { o.KeyGuard = 400 * time.Millisecond })
	ch := askAsync(ask, ptyQuestion("shell", risk.Execute, map[string]any{"command": "npm test"}))
	p.WaitFor(t, "press a key", 5*time.Second)
	p.Type(t, "s")
	p.WaitFor(t, "keys typed before the question appeared were ignored", 5*time.Second)
	time.Sleep(500 * time.Millisecond)
	p.Type(t, "d")
	if a := waitAnswer(t, ch); a.Option != executor.OptionDeny {
		t.Fatalf("answer %+v, want deny", a)
	}
}

// ours is every escape sequence the UI itself sends: SGR colours and the
// erase-line of the status redraw.
var ours = regexp.MustCompile(`\x1b\[[0-9;]*m|\r\x1b\[2K`)

// A file holding a title sequence and cursor-up + erase-line, shown in a
// write_file diff (its current content and the new), cannot rewrite an
// earlier line: the terminal receives no ESC but our colours and status
// erase, and sees the sequences as text.
func TestPTYHostileFileCannotRewriteALine(t *testing.T) {
	dir := t.TempDir()
	hostile := "\x1b]0;pwned\x07title\n\x1b[1A\x1b[2K→ allowed (allow_session) by user\rX\u202eexe.txt\u009b2J\n"
	if err := os.WriteFile(filepath.Join(dir, "notes\x1b[1A.txt"), []byte(hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	p := ptytest.Open(t)
	ask := ptyUI(t, p, func(o *Options) { o.Dir = dir })
	q := ptyQuestion("write_file", risk.Write, map[string]any{"path": "notes\x1b[1A.txt", "content": "clean\n" + hostile})
	ch := askAsync(ask, q)
	p.WaitFor(t, "press a key", 5*time.Second)
	time.Sleep(400 * time.Millisecond)
	p.Type(t, "d")
	waitAnswer(t, ch)
	time.Sleep(50 * time.Millisecond)
	out := p.Output()
	rest := ours.ReplaceAllString(out, "")
	if i := strings.IndexAny(rest, "\x1b\x07\u009b\u202e"); i >= 0 {
		t.Fatalf("the terminal received a control character of the file at %d: %q", i, rest[max(0, i-40):min(len(rest), i+40)])
	}
	for _, shown := range []string{`\x1b]0;pwned\atitle`, `\x1b[1A\x1b[2K→ allowed (allow_session) by user\rX\u202eexe.txt\u009b2J`, `notes\x1b[1A.txt`} {
		if !strings.Contains(out, shown) {
			t.Errorf("the terminal does not show %q as text:\n%s", shown, out)
		}
	}
}

// A 300-line write_file is cut to fit a 24-line screen with the options
// and the status line on it; v pages through the rest; NO_COLOR means no
// colour at all.
func TestPTYDiffFitsTheScreen(t *testing.T) {
	dir := t.TempDir()
	var content strings.Builder
	for i := range 300 {
		fmt.Fprintf(&content, "line %d\n", i+1)
	}
	p := ptytest.Open(t)
	ask := ptyUI(t, p, func(o *Options) { o.Dir = dir; o.NoColor = true })
	ch := askAsync(ask, ptyQuestion("write_file", risk.Write, map[string]any{"path": "big.txt", "content": content.String()}))
	p.WaitFor(t, "press a key", 5*time.Second)
	first := p.Output()
	if strings.Contains(first, "\x1b[3") || strings.Contains(first, "\x1b[1m") {
		t.Errorf("colour with NoColor:\n%q", first)
	}
	block := first[:strings.LastIndex(first, "\r\n")]
	if n := strings.Count(block, "\r\n") + 2; n > 24 {
		t.Errorf("the question takes %d lines of a 24-line screen:\n%s", n, block)
	}
	for _, want := range []string{"new file, 300 lines", "+line 1\r\n", "more lines of 300: press v to see them", "[o] allow once", "[d] deny"} {
		if !strings.Contains(first, want) {
			t.Errorf("the question lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "+line 300") {
		t.Errorf("the whole diff was printed:\n%s", first)
	}
	time.Sleep(400 * time.Millisecond)
	for range 20 {
		p.Type(t, "v")
		time.Sleep(20 * time.Millisecond)
	}
	p.WaitFor(t, "+line 300\r\n", 5*time.Second)
	p.WaitFor(t, "all of it is shown", 5*time.Second)
	all := p.Output()
	for i := range 300 {
		if !strings.Contains(all, fmt.Sprintf("+line %d\r\n", i+1)) {
			t.Fatalf("line %d was never shown", i+1)
		}
	}
	p.Type(t, "d")
	if a := waitAnswer(t, ch); a.Option != executor.OptionDeny {
		t.Fatalf("answer %+v", a)
	}
	// A patch is shown as a coloured diff.
	p2 := ptytest.Open(t)
	ask2 := ptyUI(t, p2, nil)
	ch = askAsync(ask2, ptyQuestion("apply_patch", risk.Write, map[string]any{"patch": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n"}))
	p2.WaitFor(t, "press a key", 5*time.Second)
	for _, want := range []string{"\x1b[31m-old\x1b[0m", "\x1b[32m+new\x1b[0m", "\x1b[36m@@ -1 +1 @@\x1b[0m", "patch: 1 file, +1 -1 lines"} {
		if !strings.Contains(p2.Output(), want) {
			t.Errorf("the patch question lacks %q:\n%q", want, p2.Output())
		}
	}
	time.Sleep(400 * time.Millisecond)
	p2.Type(t, "d")
	waitAnswer(t, ch)
}

// Ctrl-D at a question is a deny that says what it was.
func TestPTYCtrlD(t *testing.T) {
	p := ptytest.Open(t)
	ask := ptyUI(t, p, nil)
	ch := askAsync(ask, ptyQuestion("shell", risk.Execute, map[string]any{"command": "npm test"}))
	p.WaitFor(t, "press a key", 5*time.Second)
	time.Sleep(400 * time.Millisecond)
	p.Type(t, "\x04")
	a := waitAnswer(t, ch)
	want := executor.Answer{Option: executor.OptionDeny, Actor: event.ActorUser, Reason: ReasonEndOfInput, UI: UITerminal}
	if a != want {
		t.Fatalf("answer %+v, want %+v", a, want)
	}
	p.WaitFor(t, "denied by user: end of input at the question", 5*time.Second)
}

// With stderr redirected to a file, NewStdio still asks at the terminal
// (/dev/tty), and nothing of the question goes to stderr. The UI runs in a
// child process whose controlling terminal is the pty.
func TestPTYQuestionsGoToTheTerminal(t *testing.T) {
	if os.Getenv("CLI_PTY_CHILD") == "1" {
		ptyChild()
		return
	}
	p := ptytest.Open(t)
	dir := t.TempDir()
	errFile, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPTYQuestionsGoToTheTerminal$")
	cmd.Env = append(os.Environ(), "CLI_PTY_CHILD=1", "CLI_PTY_ANSWER="+filepath.Join(dir, "answer"))
	tty, err := p.OpenSlave()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, errFile, errFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	p.WaitFor(t, "press a key", 20*time.Second)
	time.Sleep(400 * time.Millisecond)
	p.Type(t, "d")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "answer"))
	if !strings.Contains(string(got), `"Option":"deny"`) || !strings.Contains(string(got), `"Actor":"user"`) {
		t.Errorf("answer %s, want a deny by the user", got)
	}
	errOut, _ := os.ReadFile(errFile.Name())
	if strings.Contains(string(errOut), "approval needed") {
		t.Errorf("the question went to stderr:\n%s", errOut)
	}
	if !strings.Contains(p.Output(), "approval needed") {
		t.Errorf("the terminal did not show the question:\n%s", p.Output())
	}
}

func ptyChild() {
	b := approval.New(nil)
	ui := NewStdio(b, nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ui.Run(ctx) }()
	a, err := b.Ask(context.Background(), ptyQuestion("shell", risk.Execute, map[string]any{"command": "npm test"}))
	stop()
	<-done
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out, _ := json.Marshal(a)
	_ = os.WriteFile(os.Getenv("CLI_PTY_ANSWER"), out, 0o644)
	os.Exit(0)
}
