//go:build linux

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/sys/unix"

	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/testsupport/ptytest"
)

// These tests run `custom-agent run` on a real terminal (a pseudo-terminal
// as its controlling terminal, stdin, stdout and stderr), so that its
// question is drawn there and waits for a key in raw mode, while the same
// question is answered, or seen answered, in Chromium.

// startRunOnPTY starts `custom-agent run` on a new terminal of 100×40,
// and returns the terminal and its settings from before the process ran.
func startRunOnPTY(t *testing.T, timeout, script string) (*runProcess, *ptytest.PTY, unix.Termios) {
	t.Helper()
	pt := ptytest.Open(t)
	if err := pt.Resize(100, 40); err != nil {
		t.Fatal(err)
	}
	before := pt.Termios(t)
	p := startRunWith(t, runSetup{timeout: timeout, script: script, env: []string{"TERM=xterm"},
		attach: func(c *exec.Cmd) (func() string, func()) {
			slave, err := pt.OpenSlave()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = slave.Close() })
			c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			return pt.Output, func() { _ = slave.Close() }
		}})
	return p, pt, before
}

// afterOn waits until the terminal's output after byte from holds s, and
// returns where s ends.
func afterOn(t *testing.T, pt *ptytest.PTY, p *runProcess, from int, s string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := pt.Output()
		if i := strings.Index(out[min(from, len(out)):], s); i >= 0 {
			return from + i + len(s)
		}
		select {
		case <-p.done:
			if out := pt.Output(); strings.Contains(out[min(from, len(out)):], s) {
				continue
			}
			t.Fatalf("run exited (%v) and the terminal never showed %q after byte %d; it shows:\n%q", p.err, s, from, pt.Output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q after byte %d; it shows:\n%q", s, from, out[min(from, len(out)):])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitExit waits for run to exit, and fails the test unless it exited 0.
func waitExit(t *testing.T, p *runProcess) {
	t.Helper()
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("run: %v\n%q", p.err, p.output())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not finish\n%q", p.output())
	}
}

// resolutions are the session's permission.resolved payloads, with
// whether a tool.started came after the first.
func resolutions(t *testing.T, s *sqlitestore.Store) (res []event.PermissionResolvedPayload, startedAfter bool) {
	t.Helper()
	for _, e := range eventsOf(t, s) {
		switch e.Type {
		case event.PermissionResolved:
			var r event.PermissionResolvedPayload
			if err := json.Unmarshal(e.Payload, &r); err != nil {
				t.Fatal(err)
			}
			res = append(res, r)
		case event.ToolStarted:
			startedAfter = startedAfter || len(res) > 0
		}
	}
	return res, startedAfter
}

// sameTerminal reports how the terminal's settings differ from before.
func sameTerminal(before, after unix.Termios) string {
	var diff []string
	if before.Iflag != after.Iflag {
		diff = append(diff, "iflag")
	}
	if before.Oflag != after.Oflag {
		diff = append(diff, "oflag")
	}
	if before.Lflag != after.Lflag {
		diff = append(diff, "lflag")
	}
	if before.Cc != after.Cc {
		diff = append(diff, "cc")
	}
	return strings.Join(diff, " ")
}

// stoppedCountdown checks that the closed dialog's countdown has stopped
// and says so, rather than counting on to "time is up: denied" under an
// answer that allowed the call.
func stoppedCountdown(t *testing.T, ctx context.Context) {
	t.Helper()
	var cd struct {
		Text     string `json:"text"`
		Counting bool   `json:"counting"`
	}
	err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { const c = document.getElementById("countdown");
		return {text: c.textContent, counting: c.hasAttribute("data-deadline")}; })()`, &cd))
	if err != nil {
		t.Fatal(err)
	}
	if cd.Counting || !strings.HasPrefix(cd.Text, "stopped with ") || !strings.HasSuffix(cd.Text, "s left: the question is closed") {
		t.Errorf("the closed dialog's countdown: %+v, want it stopped, saying so", cd)
	}
}

// holdScript is a shell call that leaves its mark (out.txt) and then runs
// until the test creates release: the run process goes on, its question
// answered, while the test looks at its terminal.
const holdScript = `{"text":"writing it","toolCalls":[{"id":"tc_1","name":"shell","args":{"command":"echo hi > out.txt && while [ ! -e release ]; do sleep 0.05; done"}}]}
{"text":"done"}
`

// Issue 25: a question of a `run` on a terminal, drawn there and waiting
// for a key in raw mode, is answered allow once in the browser. The
// terminal's question closes with where and how it was answered, and
// gives the terminal back at once (cooked, echoing; checked while the tool
// still runs, not only after run exits); a key typed then answers
// nothing, and the question draws nothing more. The tool runs, the log
// says user via web, run exits 0 and leaves the terminal as it found it.
func TestBrowserAllowClosesTheTerminalsQuestion(t *testing.T) {
	chromiumPath(t)
	p, pt, before := startRunOnPTY(t, "60s", holdScript)
	if m := ptytest.Cooked(before); m != "" {
		t.Fatalf("a new terminal lacks %s", m)
	}
	s := p.openStore(t)
	l := serveLog(t, s, nil)
	path := waitAsk(t, s, p)
	at := afterOn(t, pt, p, 0, "approval needed")
	at = afterOn(t, pt, p, at, "press a key")
	// Raw while the question waits (raw mode comes before the drawing).
	if m := ptytest.Cooked(pt.Termios(t)); !strings.Contains(m, "ICANON") || !strings.Contains(m, "ECHO") {
		t.Fatalf("the terminal is not raw while its question waits (lacks only %q)", m)
	}

	ctx := browser(t, 1000, 900)
	err := chromedp.Run(ctx, l.login(), chromedp.Navigate(l.base+path),
		chromedp.WaitVisible(`button[data-option="allow_once"][data-armed]`, chromedp.ByQuery),
		chromedp.Click(`button[data-option="allow_once"]`, chromedp.ByQuery),
		waitResult(ctx, "your answer was recorded: allowed (allow_once) by user via web"),
	)
	if err != nil {
		t.Fatalf("%v\nthe terminal shows:\n%q", err, pt.Output())
	}
	stoppedCountdown(t, ctx)
	// The terminal's question closes, saying where and how.
	closed := afterOn(t, pt, p, at, "→ answered in the web UI: allow once\r\n")

	// The tool runs, and runs on: its mark is on disk.
	mark := filepath.Join(p.cwd, "out.txt")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got, err := os.ReadFile(mark); err == nil && string(got) == "hi\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool did not run\n%q", pt.Output())
		}
	}
	// The terminal is cooked again while run goes on. (The call resumes
	// once the terminal UI has shown the outcome and restored the
	// terminal, or after approval.MaxShowWait: so wait for it.)
	for deadline := time.Now().Add(10 * time.Second); ptytest.Cooked(pt.Termios(t)) != ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal is still raw after the web's answer, while run goes on (lacks %s)", ptytest.Cooked(pt.Termios(t)))
		}
	}
	// A key typed now answers nothing: the terminal echoes it, as a
	// cooked one does, and run reads it (Enter) without a word. v, the
	// key that pages a question, would make a question still shown say
	// something.
	typed := len(pt.Output())
	pt.Type(t, "v\r")
	afterOn(t, pt, p, typed, "v\r\n")
	select {
	case <-p.done:
		t.Fatalf("run ended before the tool was released: %v\n%q", p.err, pt.Output())
	default:
	}
	if err := os.WriteFile(filepath.Join(p.cwd, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	afterOn(t, pt, p, closed, "done")
	waitExit(t, p)

	out := pt.Output()
	for _, s := range []string{"press a key", "pasted text", "see the rest", "shows the rest", "approval needed", "not offered", "denied"} {
		if strings.Contains(out[closed:], s) {
			t.Errorf("after the web's answer the terminal showed %q:\n%q", s, out[closed:])
		}
	}
	res, started := resolutions(t, s)
	if len(res) != 1 || res[0].Actor != event.ActorUser || res[0].UI != UIName || res[0].Option != "allow_once" || !started {
		t.Fatalf("resolutions %+v, tool started after the first %v; want one, allow_once by user via web", res, started)
	}
	if d := sameTerminal(before, pt.Termios(t)); d != "" {
		t.Errorf("run left the terminal changed (%s): %+v, was %+v", d, pt.Termios(t), before)
	}
	screenshot(t, ctx, "answered-from-browser-terminal-closed.png")
	t.Logf("the terminal from the web's answer on:\n%q", out[at:])
}

// The converse: the dialog is open in the browser when the person at the
// terminal answers allow once with a key. The dialog closes and says how
// the question ended; an answer the page sends after that (a deny) is
// refused with 409, too late, and changes nothing.
func TestBrowserDialogClosesWhenTheTerminalAnswers(t *testing.T) {
	chromiumPath(t)
	p, pt, before := startRunOnPTY(t, "60s", "")
	s := p.openStore(t)
	l := serveLog(t, s, nil)
	path := waitAsk(t, s, p)
	at := afterOn(t, pt, p, 0, "press a key")

	ctx := browser(t, 1000, 900)
	// The dialog is shown, armed: past its own delay and, since the
	// terminal's question was drawn before the page was opened, past
	// the terminal's key guard (cli.DefaultKeyGuard < 0.8 s). The page
	// follows the queue: its count says the question is in it, so what
	// closes the dialog below is the live queue, not the page's first
	// look at it.
	err := chromedp.Run(ctx, l.login(), chromedp.Navigate(l.base+path),
		chromedp.WaitVisible(`button[data-option="allow_once"][data-armed]`, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("queue-count").textContent === "1"`, nil,
			chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
	if err != nil {
		t.Fatalf("%v\nthe terminal shows:\n%q", err, pt.Output())
	}
	if cli.DefaultKeyGuard >= 800*time.Millisecond {
		t.Fatalf("the terminal's key guard %v outlasts the dialog's arming: the key below may be ignored", cli.DefaultKeyGuard)
	}
	pt.Type(t, "o")
	afterOn(t, pt, p, at, "→ allowed (allow_once) by user\r\n")

	const outcome = "allowed (allow_once) by user via terminal"
	var disabled bool
	err = chromedp.Run(ctx, waitResult(ctx, "Closed: "+outcome),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("#dialog button")).every(b => b.disabled)`, &disabled))
	if err != nil {
		var txt string
		_ = chromedp.Run(ctx, chromedp.Text("#result", &txt, chromedp.ByQuery))
		t.Fatalf("the dialog did not close saying how (result %q): %v", txt, err)
	}
	if !disabled {
		t.Error("the closed dialog's buttons still work")
	}
	stoppedCountdown(t, ctx)
	screenshot(t, ctx, "answered-at-terminal-dialog-closed.png")

	// A late answer from the page, as its deny button would send it.
	late := `(() => {
		const d = document.getElementById("dialog");
		return fetch("/api/answer", {method: "POST", credentials: "same-origin",
			headers: {"Content-Type": "application/json", "X-Custom-Agent": "1",
				"X-Custom-Agent-Key": sessionStorage.getItem("custom-agent-key") || ""},
			body: JSON.stringify({sessionId: d.dataset.session, seq: Number(d.dataset.seq),
				toolCallId: d.dataset.toolcall, option: "deny"})
		}).then(r => r.json().then(b => ({status: r.status, message: b.message, won: !!b.won})));
	})()`
	var resp struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
		Won     bool   `json:"won"`
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(late, &resp, awaitPromise)); err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusConflict || resp.Won || resp.Message != "too late: this question was already answered ("+outcome+")" {
		t.Errorf("a late answer from the page: %+v, want 409 too late (%s)", resp, outcome)
	}

	waitExit(t, p)
	if got, err := os.ReadFile(filepath.Join(p.cwd, "out.txt")); err != nil || string(got) != "hi from the browser\n" {
		t.Errorf("the tool did not run: %q %v", got, err)
	}
	res, started := resolutions(t, s)
	if len(res) != 1 || res[0].Actor != event.ActorUser || res[0].UI != cli.UITerminal || res[0].Option != "allow_once" || !started {
		t.Fatalf("resolutions %+v, tool started after the first %v; want one, allow_once by user at the terminal", res, started)
	}
	if d := sameTerminal(before, pt.Termios(t)); d != "" {
		t.Errorf("run left the terminal changed (%s)", d)
	}
}
