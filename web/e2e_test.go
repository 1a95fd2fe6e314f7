package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
)

// These tests answer, in Chromium, a question a real `custom-agent run`
// process asks (the scripted model writes a file), through the store's
// inbox and that process's relay.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func agentBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "custom-agent-web-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "custom-agent")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/custom-agent/custom-agent/cmd/custom-agent").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// runProcess is a `custom-agent run` waiting on a question: its stdin (the
// terminal's line protocol) a pipe left open and silent, or a terminal
// (runSetup.attach).
type runProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser // nil on a terminal
	stderr *syncBuffer    // nil on a terminal
	output func() string  // everything the process wrote so far
	done   chan struct{}  // closed when the process has exited; err is then set
	err    error
	cwd    string
	data   string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// writeScript is the model of startRun: one write_file call, then done.
const writeScript = `{"text":"writing it","toolCalls":[{"id":"tc_1","name":"write_file","args":{"path":"out.txt","content":"hi from the browser\n"}}]}` + "\n" + `{"text":"done"}` + "\n"

// runSetup says how startRunWith starts `custom-agent run`.
type runSetup struct {
	timeout string   // --approval-timeout
	script  string   // the script model's JSONL; "" is writeScript
	env     []string // more environment
	// attach, when not nil, gives the process its standard files (a
	// terminal) in place of pipes. It returns what the process wrote so
	// far, and a function called once the process has started.
	attach func(*exec.Cmd) (output func() string, started func())
}

func startRun(t *testing.T, timeout string) *runProcess {
	t.Helper()
	return startRunWith(t, runSetup{timeout: timeout})
}

func startRunWith(t *testing.T, setup runSetup) *runProcess {
	t.Helper()
	bin := agentBinary(t)
	root := t.TempDir()
	p := &runProcess{cwd: filepath.Join(root, "work"), data: filepath.Join(root, "data"), done: make(chan struct{})}
	for _, d := range []string{p.cwd, p.data, filepath.Join(root, "home"), filepath.Join(root, "config")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(root, "script.jsonl")
	lines := setup.script
	if lines == "" {
		lines = writeScript
	}
	if err := os.WriteFile(script, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	// The log exists before either process opens it.
	s, err := sqlitestore.Open(t.Context(), filepath.Join(p.data, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	p.cmd = exec.Command(bin, "--data-dir", p.data, "run", "--model", "script:"+script, "--cwd", p.cwd,
		"--approval-timeout", setup.timeout, "write the file")
	p.cmd.Env = append(os.Environ(), "HOME="+filepath.Join(root, "home"), "XDG_CONFIG_HOME="+filepath.Join(root, "config"),
		"XDG_DATA_HOME="+filepath.Join(root, "xdgdata"), "NO_COLOR=1", "CUSTOM_AGENT_DATA_DIR=")
	p.cmd.Env = append(p.cmd.Env, setup.env...)
	started := func() {}
	if setup.attach != nil {
		p.output, started = setup.attach(p.cmd)
	} else {
		p.stderr = &syncBuffer{}
		p.output = p.stderr.String
		p.cmd.Stderr = p.stderr
		p.cmd.Stdout = p.stderr
		p.stdin, err = p.cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started()
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if p.stdin != nil {
			_ = p.stdin.Close()
		}
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// openStore opens the run's log, as serve does.
func (p *runProcess) openStore(t *testing.T) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(t.Context(), filepath.Join(p.data, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitAsk waits until the log holds the run's question, and returns its
// dialog's path.
func waitAsk(t *testing.T, s *sqlitestore.Store, p *runProcess) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		x := NewIndex(s, 0)
		if err := x.Refresh(t.Context()); err == nil {
			if q := x.Queue(); len(q) == 1 {
				return fmt.Sprintf("/session/%s/ask/%d", q[0].SessionID, q[0].Seq)
			}
		}
		select {
		case <-p.done:
			t.Fatalf("run ended before asking: %v\n%s", p.err, p.output())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("no question in the log after 60 s\n%s", p.output())
	return ""
}

// eventsOf returns the session's events by type, in order.
func eventsOf(t *testing.T, s *sqlitestore.Store) []event.Event {
	t.Helper()
	ss, err := s.Sessions(t.Context())
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions %v %v", ss, err)
	}
	var out []event.Event
	for e, err := range s.Read(t.Context(), ss[0].ID, 1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func waitResult(ctx context.Context, want string) chromedp.Action {
	return chromedp.Poll(fmt.Sprintf(`document.getElementById("result").textContent.includes(%q)`, want), nil,
		chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))
}

func TestBrowserAllowLetsTheRunProcessToolRun(t *testing.T) {
	chromiumPath(t)
	p := startRun(t, "60s")
	s := p.openStore(t)
	l := serveLog(t, s, nil)
	path := waitAsk(t, s, p)
	ctx := browser(t, 1000, 900)
	var result string
	err := chromedp.Run(ctx, l.login(), chromedp.Navigate(l.base+path),
		chromedp.WaitVisible(`button[data-option="allow_once"][data-armed]`, chromedp.ByQuery),
		chromedp.Click(`button[data-option="allow_once"]`, chromedp.ByQuery),
		waitResult(ctx, "your answer was recorded"),
		chromedp.Text("#result", &result, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("%v\nrun's output:\n%s", err, p.output())
	}
	screenshot(t, ctx, "answered-from-browser.png")
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("run: %v\n%s", p.err, p.output())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not finish after the answer\n%s", p.output())
	}
	got, err := os.ReadFile(filepath.Join(p.cwd, "out.txt"))
	if err != nil || string(got) != "hi from the browser\n" {
		t.Fatalf("the tool did not run: %q %v\n%s", got, err, p.output())
	}
	// The log: resolved by the user via the web, then the tool started.
	var resolved *event.PermissionResolvedPayload
	started := false
	for _, e := range eventsOf(t, s) {
		switch e.Type {
		case event.PermissionResolved:
			resolved = &event.PermissionResolvedPayload{}
			_ = json.Unmarshal(e.Payload, resolved)
		case event.ToolStarted:
			started = resolved != nil
		}
	}
	if resolved == nil || resolved.Actor != event.ActorUser || resolved.UI != UIName || resolved.Option != "allow_once" || !started {
		t.Fatalf("resolution %+v, tool started after it %v", resolved, started)
	}
	// The terminal's question closed with the web's answer.
	if out := p.output(); !strings.Contains(out, "approval: answered in the web UI: allow once") {
		t.Errorf("the terminal does not say how its question ended:\n%s", out)
	}
	t.Logf("page: %s", result)
}

func TestBrowserCountdownEndsInDenyBySystem(t *testing.T) {
	chromiumPath(t)
	p := startRun(t, "4s")
	s := p.openStore(t)
	l := serveLog(t, s, nil)
	path := waitAsk(t, s, p)
	ctx := browser(t, 1000, 900)
	var left string
	err := chromedp.Run(ctx, l.login(), chromedp.Navigate(l.base+path),
		chromedp.WaitVisible("#countdown", chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("countdown").dataset.left === "0"`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.AttributeValue("#countdown", "data-left", &left, nil, chromedp.ByQuery),
		waitResult(ctx, "denied by system"),
	)
	if err != nil {
		var txt string
		_ = chromedp.Run(ctx, chromedp.Text("#result", &txt, chromedp.ByQuery))
		t.Fatalf("%v (result %q)\nrun's output:\n%s", err, txt, p.output())
	}
	screenshot(t, ctx, "countdown-denied.png")
	var resolved *event.PermissionResolvedPayload
	for _, e := range eventsOf(t, s) {
		if e.Type == event.PermissionResolved {
			resolved = &event.PermissionResolvedPayload{}
			_ = json.Unmarshal(e.Payload, resolved)
		}
		if e.Type == event.ToolStarted {
			t.Fatal("the tool ran after a timeout")
		}
	}
	if resolved == nil || resolved.Actor != event.ActorSystem || resolved.Decision != "deny" {
		t.Fatalf("resolution %+v, want deny by system", resolved)
	}
}
