package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/support/datadir"
	"github.com/custom-agent/custom-agent/testsupport/testenv"
	"github.com/custom-agent/custom-agent/web"
)

// servingProcess is `custom-agent serve`, a process of its own, with a
// store handle on its log (to watch what it records) and its URL.
type servingProcess struct {
	base, token string // for scripts: http://127.0.0.1:PORT and the script token
	ui, login   string // for the browser: http://NAME.localhost:PORT and its single-use URL
	log         *sqlitestore.Store
	stderr      *testenv.Buffer
	stdout      *testenv.Buffer // what it prints after the first lines
	proc        *os.Process
}

// serveScripts finds, in what serve prints, the script token's file and the
// address scripts use.
var serveLogin = regexp.MustCompile(`((http://[0-9a-f]{32}\.localhost:\d+)/\?token=[0-9a-f]{64})`)

// serveLinkFile finds, in what serve prints when its output is not a
// terminal, the file its login link is in.
var serveLinkFile = regexp.MustCompile(`login link saved to (\S+) \(`)

// loginIn returns the login link serve's printed line refers to: the
// contents of the file it names (its output here is never a terminal, so
// it prints no token). It fails the test on a token printed.
func loginIn(t *testing.T, line string) (url, ui string, ok bool) {
	t.Helper()
	if serveLogin.MatchString(line) {
		t.Fatalf("serve printed its login token to an output that is not a terminal: %q", line)
	}
	m := serveLinkFile.FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	b, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	l := serveLogin.FindStringSubmatch(string(b))
	if l == nil {
		t.Fatalf("%s holds no login link: %q", m[1], b)
	}
	return l[1], l[2], true
}

var serveScripts = regexp.MustCompile(`Bearer \$\(cat (\S+)\) at (http://127\.0\.0\.1:\d+)`)

func startServe(t *testing.T, data, home string, args ...string) *servingProcess {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self, append([]string{"--data-dir", data, "serve"}, args...)...)
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "TMPDIR=" + os.TempDir(), asCLI + "=1"}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &servingProcess{stderr: new(testenv.Buffer), stdout: new(testenv.Buffer)}
	c.Stderr = p.stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = c.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = c.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
			<-exited
		}
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if login, ui, ok := loginIn(t, sc.Text()); ok {
			p.login, p.ui = login, ui
		}
		if m := serveScripts.FindStringSubmatch(sc.Text()); m != nil {
			tok, err := os.ReadFile(m[1])
			if err != nil {
				t.Fatal(err)
			}
			p.base, p.token = m[2], strings.TrimSpace(string(tok))
			break
		}
	}
	if p.base == "" {
		t.Fatalf("serve printed no URL; stderr:\n%s", p.stderr.String())
	}
	p.proc = c.Process
	go func() { _, _ = io.Copy(p.stdout, out) }()
	if p.log, err = sqlitestore.Open(context.Background(), filepath.Join(data, datadir.LogFile), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.log.Close() })
	return p
}

// post sends what the page's script sends: JSON, the custom header, our
// Origin, and the token (as a bearer token; the page has the cookie).
func (p *servingProcess) post(t *testing.T, path string, body any) (int, map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.NewRequest("POST", p.base+path, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(web.HeaderCSRF, "1")
	r.Header.Set("Origin", p.base)
	r.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatalf("%s: status %d, not JSON: %v", path, resp.StatusCode, err)
	}
	return resp.StatusCode, res
}

// await polls the log until ok says the events are what is waited for;
// the bound counts looks (a few milliseconds each), it times nothing.
func (p *servingProcess) await(t *testing.T, session, what string, ok func([]event.Event) bool) []event.Event {
	t.Helper()
	for i := 0; i < 2000; i++ {
		var evs []event.Event
		for e, err := range p.log.Read(context.Background(), session, 1) {
			if err != nil {
				break
			}
			evs = append(evs, e)
		}
		if ok(evs) {
			return evs
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("waiting for %s in session %s: never came; serve's stderr:\n%s", what, session, p.stderr.String())
	return nil
}

func openAsk(t *testing.T, p *servingProcess, session string) approval.OpenAsk {
	t.Helper()
	var open []approval.OpenAsk
	p.await(t, session, "a question", func([]event.Event) bool {
		var err error
		open, err = approval.OpenAsks(context.Background(), p.log, session)
		return err == nil && len(open) == 1
	})
	return open[0]
}

func completed(n int) func([]event.Event) bool {
	return func(evs []event.Event) bool {
		c := 0
		for _, e := range evs {
			if e.Type == event.TurnCompleted {
				c++
			}
		}
		return c >= n
	}
}

func payloads[P any](t *testing.T, evs []event.Event, typ event.Type) []P {
	t.Helper()
	var out []P
	for _, e := range evs {
		if e.Type != typ {
			continue
		}
		var p P
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestServeStartsATurnAnsweredInThePage: a prompt posted to serve starts a
// new session in serve's process, with serve's --model; its shell call is
// asked; the answer posted to /api/answer reaches the turn through the
// store's inbox and serve's relay (serve has no terminal); the tool runs
// and the turn completes. The session is then continued from the page,
// with the same script model going on.
func TestServeStartsATurnAnsweredInThePage(t *testing.T) {
	testenv.NeedProgram(t, "touch")
	data, cwd, home := t.TempDir(), t.TempDir(), t.TempDir()
	script := writeScript(t, `{"text":"touching","toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch ran.txt"}}]}
{"text":"done"}
{"text":"second turn"}
`)
	p := startServe(t, data, home, "--model", "script:"+script, "--cwd", cwd, "--approval-timeout", "60s")
	code, res := p.post(t, "/api/turn", map[string]string{"prompt": "touch a file"})
	if code != 200 {
		t.Fatalf("POST /api/turn: %d %v\n%s", code, res, p.stderr.String())
	}
	session, _ := res["sessionId"].(string)
	if session == "" || res["url"] != "/session/"+session {
		t.Fatalf("POST /api/turn: %v", res)
	}
	ask := openAsk(t, p, session)
	if ask.Request.ToolCallID != "t1" || ask.Request.Tool != "shell" {
		t.Fatalf("the question: %+v", ask.Request)
	}
	// The turn is running here: a second prompt to the session is refused.
	if code, res := p.post(t, "/api/turn", map[string]string{"sessionId": session, "prompt": "more"}); code != 409 || !strings.Contains(fmt.Sprint(res["message"]), "already running a turn") {
		t.Errorf("a second turn while one runs: %d %v", code, res)
	}
	code, res = p.post(t, "/api/answer", map[string]any{"sessionId": session, "seq": ask.Seq, "toolCallId": "t1", "option": "allow_once"})
	if code != 200 || res["won"] != true {
		t.Fatalf("POST /api/answer: %d %v\n%s", code, res, p.stderr.String())
	}
	evs := p.await(t, session, "turn.completed", completed(1))
	if _, err := os.Stat(filepath.Join(cwd, "ran.txt")); err != nil {
		t.Fatalf("the tool did not run after the page's allow: %v", err)
	}
	started := payloads[event.SessionStartedPayload](t, evs, event.SessionStarted)
	if len(started) != 1 || started[0].Cwd != cwd || !strings.Contains(started[0].Model, "script") {
		t.Errorf("session.started %+v: want in %s with the script model", started, cwd)
	}
	resolved := payloads[event.PermissionResolvedPayload](t, evs, event.PermissionResolved)
	if len(resolved) != 1 || resolved[0].Actor != event.ActorUser || resolved[0].UI != web.UIName || resolved[0].Decision != "allow" {
		t.Errorf("permission.resolved %+v: want one allow by user via web", resolved)
	}
	if done := payloads[event.TurnCompletedPayload](t, evs, event.TurnCompleted); done[0].StopReason != event.StopFinal {
		t.Errorf("turn.completed %+v", done[0])
	}
	// Continued from the session's page: the next line of the script.
	if code, res := p.post(t, "/api/turn", map[string]string{"sessionId": session, "prompt": "and now?"}); code != 200 || res["sessionId"] != session {
		t.Fatalf("continue: %d %v", code, res)
	}
	evs = p.await(t, session, "the second turn.completed", completed(2))
	done := payloads[event.TurnCompletedPayload](t, evs, event.TurnCompleted)
	if done[1].StopReason != event.StopFinal {
		t.Errorf("the second turn: %+v", done[1])
	}
	if err := p.log.Verify(context.Background(), session); err != nil {
		t.Fatal(err)
	}
}

// TestServeCancelsItsTurn: a turn serve runs waits on a question; Cancel
// from the page denies the question by system and completes the turn
// cancelled.
func TestServeCancelsItsTurn(t *testing.T) {
	data, cwd, home := t.TempDir(), t.TempDir(), t.TempDir()
	script := writeScript(t, `{"toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch ran.txt"}}]}
{"text":"done"}
`)
	p := startServe(t, data, home, "--model", "script:"+script, "--cwd", cwd, "--approval-timeout", "60s")
	code, res := p.post(t, "/api/turn", map[string]string{"prompt": "touch a file"})
	if code != 200 {
		t.Fatalf("POST /api/turn: %d %v\n%s", code, res, p.stderr.String())
	}
	session := res["sessionId"].(string)
	openAsk(t, p, session)
	if code, res := p.post(t, "/api/cancel", map[string]string{"sessionId": session}); code != 200 {
		t.Fatalf("POST /api/cancel: %d %v", code, res)
	}
	evs := p.await(t, session, "turn.completed", completed(1))
	resolved := payloads[event.PermissionResolvedPayload](t, evs, event.PermissionResolved)
	if len(resolved) != 1 || resolved[0].Decision != "deny" || resolved[0].Actor != event.ActorSystem {
		t.Errorf("permission.resolved %+v: want one deny by system", resolved)
	}
	if done := payloads[event.TurnCompletedPayload](t, evs, event.TurnCompleted); done[0].StopReason != event.StopCancelled {
		t.Errorf("turn.completed %+v: want stopReason cancelled", done[0])
	}
	if _, err := os.Stat(filepath.Join(cwd, "ran.txt")); err == nil {
		t.Error("the tool ran after the turn was cancelled")
	}
	// Nothing runs any more: a second cancel says so.
	if code, res := p.post(t, "/api/cancel", map[string]string{"sessionId": session}); code != 409 || !strings.Contains(fmt.Sprint(res["message"]), "no turn is running") {
		t.Errorf("a second cancel: %d %v", code, res)
	}
}

// TestServeRefusesASessionAnotherProcessRuns: while `custom-agent run`
// waits on a question, serve (same data directory) neither continues its
// session (the lease) nor cancels its turn, and says why; the run's
// question stays open and is answered from serve.
func TestServeRefusesASessionAnotherProcessRuns(t *testing.T) {
	w := startWaitingRun(t)
	script := writeScript(t, `{"text":"hi"}`+"\n")
	p := startServe(t, w.data, w.home, "--model", "script:"+script, "--cwd", w.cwd)
	code, res := p.post(t, "/api/turn", map[string]string{"sessionId": w.session, "prompt": "take over"})
	if code != 409 || !strings.Contains(fmt.Sprint(res["message"]), "another custom-agent process") {
		t.Errorf("continuing a session a run holds: %d %v", code, res)
	}
	code, res = p.post(t, "/api/cancel", map[string]string{"sessionId": w.session})
	if code != 409 || !strings.Contains(fmt.Sprint(res["message"]), "run by another custom-agent process") {
		t.Errorf("cancelling a run's turn: %d %v", code, res)
	}
	code, res = p.post(t, "/api/answer", map[string]any{"sessionId": w.session, "seq": w.open[0].Seq, "toolCallId": "t1", "option": "allow_once"})
	if code != 200 || res["won"] != true {
		t.Fatalf("answering the run's question from serve: %d %v", code, res)
	}
	<-w.exited
	if *w.waitErr != nil {
		t.Fatalf("the run: %v\n%s", *w.waitErr, w.stderr.String())
	}
}

// TestServeWithoutModel: serve starts without a model, the page says how
// to configure one, and a prompt is refused with the same words.
func TestServeWithoutModel(t *testing.T) {
	data, cwd, home := t.TempDir(), t.TempDir(), t.TempDir()
	p := startServe(t, data, home, "--cwd", cwd)
	code, res := p.post(t, "/api/turn", map[string]string{"prompt": "hello"})
	if code != 503 || !strings.Contains(fmt.Sprint(res["message"]), "choose a model with --model") {
		t.Errorf("a prompt without a model: %d %v", code, res)
	}
	r, _ := http.NewRequest("GET", p.base+"/", nil)
	r.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `id="model-help"`) || !strings.Contains(string(b), "CUSTOM_AGENT_MODEL") {
		t.Errorf("the sessions page does not say how to configure a model:\n%s", b)
	}
	if !strings.Contains(p.stderr.String(), "no model is configured") {
		t.Errorf("serve's stderr does not say there is no model: %s", p.stderr.String())
	}
}

// TestServeRevokesASessionRule: a call allowed for the session from the
// page makes a session rule; Revoke on the session's page (POST
// /api/revoke) records its removal, and the same call in the next turn is
// asked again instead of allowed by the rule.
func TestServeRevokesASessionRule(t *testing.T) {
	testenv.NeedProgram(t, "touch")
	data, cwd, home := t.TempDir(), t.TempDir(), t.TempDir()
	script := writeScript(t, `{"toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch a.txt"}}]}
{"text":"done"}
{"toolCalls":[{"id":"t2","name":"shell","args":{"command":"touch a.txt"}}]}
{"text":"done again"}
`)
	p := startServe(t, data, home, "--model", "script:"+script, "--cwd", cwd, "--approval-timeout", "60s")
	code, res := p.post(t, "/api/turn", map[string]string{"prompt": "touch it"})
	if code != 200 {
		t.Fatalf("POST /api/turn: %d %v\n%s", code, res, p.stderr.String())
	}
	session, _ := res["sessionId"].(string)
	ask := openAsk(t, p, session)
	if code, res := p.post(t, "/api/answer", map[string]any{"sessionId": session, "seq": ask.Seq, "toolCallId": "t1", "option": "allow_session"}); code != 200 || res["won"] != true {
		t.Fatalf("POST /api/answer: %d %v", code, res)
	}
	evs := p.await(t, session, "turn.completed", completed(1))
	var ruleID string
	for _, c := range payloads[event.PolicyChangedPayload](t, evs, event.PolicyChanged) {
		var r struct{ ID string }
		if c.Op == "add" && json.Unmarshal(c.Rule, &r) == nil {
			ruleID = r.ID
		}
	}
	if ruleID == "" {
		t.Fatalf("no session rule was recorded: %v", evs)
	}
	if code, res := p.post(t, "/api/revoke", map[string]string{"sessionId": session, "ruleId": ruleID}); code != 200 {
		t.Fatalf("POST /api/revoke: %d %v\n%s", code, res, p.stderr.String())
	}
	p.await(t, session, "the removal", func(evs []event.Event) bool {
		for _, c := range payloads[event.PolicyChangedPayload](t, evs, event.PolicyChanged) {
			if c.Op == "remove" {
				return true
			}
		}
		return false
	})
	// The next turn's identical call is asked: the rule is gone.
	if code, res := p.post(t, "/api/turn", map[string]string{"sessionId": session, "prompt": "again"}); code != 200 {
		t.Fatalf("continue: %d %v", code, res)
	}
	if again := openAsk(t, p, session); again.Request.ToolCallID != "t2" {
		t.Fatalf("the second call was not asked: %+v", again.Request)
	}
	if code, res := p.post(t, "/api/cancel", map[string]string{"sessionId": session}); code != 200 {
		t.Fatalf("cancel: %d %v", code, res)
	}
	if err := p.log.Verify(context.Background(), session); err != nil {
		t.Fatal(err)
	}
}

// Issue 25: one prior approval revoked from the page. A call allowed once
// is allowed again unasked when it comes back (a prior approval); revoked
// through POST /api/revoke-approval, the same call in the next turn is
// asked again.
func TestServeRevokesOnePriorApproval(t *testing.T) {
	testenv.NeedProgram(t, "touch")
	data, cwd, home := t.TempDir(), t.TempDir(), t.TempDir()
	script := writeScript(t, `{"toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch a.txt"}}]}
{"text":"done"}
{"toolCalls":[{"id":"t2","name":"shell","args":{"command":"touch a.txt"}}]}
{"text":"done again"}
`)
	p := startServe(t, data, home, "--model", "script:"+script, "--cwd", cwd, "--approval-timeout", "60s")
	code, res := p.post(t, "/api/turn", map[string]string{"prompt": "touch it"})
	if code != 200 {
		t.Fatalf("POST /api/turn: %d %v\n%s", code, res, p.stderr.String())
	}
	session, _ := res["sessionId"].(string)
	ask := openAsk(t, p, session)
	if code, res := p.post(t, "/api/answer", map[string]any{"sessionId": session, "seq": ask.Seq, "toolCallId": "t1", "option": "allow_once"}); code != 200 || res["won"] != true {
		t.Fatalf("POST /api/answer: %d %v", code, res)
	}
	evs := p.await(t, session, "turn.completed", completed(1))
	var seq uint64
	for _, e := range evs {
		if e.Type == event.PermissionResolved {
			seq = e.Seq
		}
	}
	if code, res := p.post(t, "/api/revoke-approval", map[string]any{"sessionId": session, "seq": seq}); code != 200 {
		t.Fatalf("POST /api/revoke-approval: %d %v\n%s", code, res, p.stderr.String())
	}
	p.await(t, session, "the revoke", func(evs []event.Event) bool {
		for _, c := range payloads[event.PolicyChangedPayload](t, evs, event.PolicyChanged) {
			if c.Op == event.PolicyOpRevokeApproval {
				return true
			}
		}
		return false
	})
	if code, res := p.post(t, "/api/revoke-approval", map[string]any{"sessionId": session, "seq": seq}); code != 404 {
		t.Fatalf("revoking it again: %d %v, want 404", code, res)
	}
	if code, res := p.post(t, "/api/turn", map[string]string{"sessionId": session, "prompt": "again"}); code != 200 {
		t.Fatalf("continue: %d %v", code, res)
	}
	if again := openAsk(t, p, session); again.Request.ToolCallID != "t2" {
		t.Fatalf("the second call was not asked: %+v", again.Request)
	}
	if code, res := p.post(t, "/api/cancel", map[string]string{"sessionId": session}); code != 200 {
		t.Fatalf("cancel: %d %v", code, res)
	}
	if err := p.log.Verify(context.Background(), session); err != nil {
		t.Fatal(err)
	}
}
