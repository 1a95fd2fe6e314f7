package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// fakeTurns stands for serve's turns: it records what it is asked, runs
// nothing, and says a session is busy or running as told.
type fakeTurns struct {
	mu              sync.Mutex
	starts          []TurnRequest
	cancels         []string
	running         map[string]bool // run by this process
	busy            map[string]bool // held by another process
	model           string
	help            string
	cwd             string
	nextID          int
	startErr        error
	asked           int // calls of Start, Cancel and Revoke
	revokes         []RevokeRequest
	approvalRevokes []ApprovalRevokeRequest
}

func newFakeTurns() *fakeTurns {
	return &fakeTurns{running: map[string]bool{}, busy: map[string]bool{}, model: "script:demo.jsonl", cwd: "/home/me/proj"}
}

func (f *fakeTurns) Start(_ context.Context, t TurnRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	f.starts = append(f.starts, t)
	switch {
	case f.startErr != nil:
		return "", f.startErr
	case f.running[t.SessionID]:
		return "", ErrTurnRunning
	case f.busy[t.SessionID]:
		return "", fmt.Errorf("session %s (pid 4242): %w", t.SessionID, eventlog.ErrSessionBusy)
	}
	id := t.SessionID
	if id == "" {
		f.nextID++
		id = fmt.Sprintf("new-%d", f.nextID)
	}
	f.running[id] = true
	return id, nil
}

func (f *fakeTurns) Cancel(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if !f.running[id] {
		return ErrNotRunning
	}
	f.cancels = append(f.cancels, id)
	delete(f.running, id)
	return nil
}

func (f *fakeTurns) Revoke(_ context.Context, r RevokeRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	switch {
	case f.running[r.SessionID]:
		return "", ErrTurnRunning
	case f.busy[r.SessionID]:
		return "", fmt.Errorf("session %s (pid 4242): %w", r.SessionID, eventlog.ErrSessionBusy)
	}
	f.revokes = append(f.revokes, r)
	return "shell `" + r.RuleID + "` → allow", nil
}

func (f *fakeTurns) RevokeApproval(_ context.Context, r ApprovalRevokeRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	switch {
	case f.running[r.SessionID]:
		return ErrTurnRunning
	case f.busy[r.SessionID]:
		return fmt.Errorf("session %s (pid 4242): %w", r.SessionID, eventlog.ErrSessionBusy)
	}
	f.approvalRevokes = append(f.approvalRevokes, r)
	return nil
}

func (f *fakeTurns) Running(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running[id]
}

func (f *fakeTurns) Model() (string, string) { return f.model, f.help }
func (f *fakeTurns) Cwd() string             { return f.cwd }

// calls counts the calls of Start and Cancel that reached the turns.
func (f *fakeTurns) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

func decodeTurn(t *testing.T, body string) turnResponse {
	t.Helper()
	var r turnResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("response %q: %v", body, err)
	}
	return r
}

func TestStartTurn(t *testing.T) {
	f := newFixture(t)
	// A new session, in the directory typed.
	w := f.do(t, req{method: "POST", path: "/api/turn", body: `{"cwd":"/work/new","prompt":"run the tests"}`})
	if w.Code != 200 {
		t.Fatalf("new session: %d %s", w.Code, w.Body.String())
	}
	if r := decodeTurn(t, w.Body.String()); r.SessionID != "new-1" || r.URL != "/session/new-1" {
		t.Errorf("new session: %+v", r)
	}
	// A new session in the server's directory when none is typed.
	if w := f.do(t, req{method: "POST", path: "/api/turn", body: `{"prompt":"hello"}`}); w.Code != 200 {
		t.Fatalf("default directory: %d %s", w.Code, w.Body.String())
	}
	// Continuing a session: it runs in the session's last directory,
	// whatever the browser might say.
	if w := f.do(t, req{method: "POST", path: "/api/turn", body: `{"sessionId":"sess-A","prompt":"go on"}`}); w.Code != 200 {
		t.Fatalf("continue: %d %s", w.Code, w.Body.String())
	}
	want := []TurnRequest{
		{Cwd: "/work/new", Prompt: "run the tests"},
		{Cwd: "/home/me/proj", Prompt: "hello"},
		{SessionID: "sess-A", Cwd: "/work/sess-A", Prompt: "go on"},
	}
	if fmt.Sprint(f.turns.starts) != fmt.Sprint(want) {
		t.Errorf("starts %+v, want %+v", f.turns.starts, want)
	}
}

func TestStartTurnBadInput(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name, body string
		code       int
		says       string
	}{
		{"no prompt", `{"cwd":"/work/x"}`, 400, "prompt is empty"},
		{"a blank prompt", `{"prompt":"  \n\t"}`, 400, "prompt is empty"},
		{"a relative directory", `{"cwd":"work/x","prompt":"hi"}`, 400, "absolute"},
		{"a directory and a session", `{"cwd":"/work/x","sessionId":"sess-A","prompt":"hi"}`, 400, "not both"},
		{"no such session", `{"sessionId":"sess-Z","prompt":"hi"}`, 404, "no such session"},
		{"an unknown field", `{"prompt":"hi","model":"openai:gpt-4.1"}`, 400, "not one turn object"},
		{"two objects", `{"prompt":"hi"}{"prompt":"hi"}`, 400, "not one turn object"},
		{"not JSON", `prompt=hi`, 400, "not one turn object"},
		{"a prompt over 32 KiB", `{"prompt":"` + strings.Repeat("a", 33<<10) + `"}`, 400, "too long"},
		{"a body over the cap", `{"prompt":"` + strings.Repeat("a", 70<<10) + `"}`, 400, "not one turn object"},
	} {
		w := f.do(t, req{method: "POST", path: "/api/turn", body: c.body})
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, w.Code, strings.TrimSpace(w.Body.String()), c.code, c.says)
		}
	}
	if n := f.turns.calls(); n != 0 {
		t.Fatalf("%d bad requests reached the turns", n)
	}
}

func TestStartTurnBusySession(t *testing.T) {
	f := newFixture(t)
	// Another process holds sess-B: Resume fails with ErrSessionBusy.
	f.turns.busy["sess-B"] = true
	w := f.do(t, req{method: "POST", path: "/api/turn", body: `{"sessionId":"sess-B","prompt":"go on"}`})
	if w.Code != 409 || !strings.Contains(w.Body.String(), "another custom-agent process") || !strings.Contains(w.Body.String(), "start a new session") {
		t.Errorf("a session another process holds: %d %s", w.Code, w.Body.String())
	}
	// This server runs a turn in sess-A: a second one is refused.
	f.turns.running["sess-A"] = true
	w = f.do(t, req{method: "POST", path: "/api/turn", body: `{"sessionId":"sess-A","prompt":"and more"}`})
	if w.Code != 409 || !strings.Contains(w.Body.String(), "already running a turn in this session") {
		t.Errorf("a second turn in a session this server runs: %d %s", w.Code, w.Body.String())
	}
	// Any other failure is said, escaped.
	f.turns.startErr = fmt.Errorf("the policy does not load: bad rule \x1b[31m")
	w = f.do(t, req{method: "POST", path: "/api/turn", body: `{"prompt":"hi"}`})
	if w.Code != 400 || !strings.Contains(w.Body.String(), "the policy does not load") || strings.Contains(w.Body.String(), "\x1b") {
		t.Errorf("a start that fails: %d %q", w.Code, w.Body.String())
	}
}

func TestStartTurnWithoutModel(t *testing.T) {
	f := newFixture(t)
	f.turns.model, f.turns.help = "", "choose a model with --model, CUSTOM_AGENT_MODEL"
	w := f.do(t, req{method: "POST", path: "/api/turn", body: `{"prompt":"hi"}`})
	if w.Code != 503 || !strings.Contains(w.Body.String(), "choose a model with --model") {
		t.Errorf("no model: %d %s", w.Code, w.Body.String())
	}
	if f.turns.calls() != 0 {
		t.Error("a turn was started without a model")
	}
	for _, p := range []string{"/", "/session/sess-A"} {
		body := f.do(t, req{path: p}).Body.String()
		if !strings.Contains(body, `id="model-help"`) || !strings.Contains(body, "choose a model with --model") || strings.Contains(body, `id="turn-go"`) {
			t.Errorf("%s without a model: no help, or a form that would fail:\n%s", p, body)
		}
	}
}

func TestTurnsOff(t *testing.T) {
	f := newFixture(t)
	f.srv.opts.Turns = nil
	for _, p := range []string{"/api/turn", "/api/cancel"} {
		w := f.do(t, req{method: "POST", path: p, body: `{"sessionId":"sess-A","prompt":"hi"}`})
		if w.Code != 503 {
			t.Errorf("%s with turns off: %d %s", p, w.Code, w.Body.String())
		}
	}
	if body := f.do(t, req{path: "/"}).Body.String(); strings.Contains(body, "turn-form") {
		t.Error("the sessions page shows a prompt form with turns off")
	}
}

func TestCancelTurn(t *testing.T) {
	f := newFixture(t)
	// A session that ended.
	startSession(t, f.log, "sess-E")
	appendEvent(t, f.log, "sess-E", event.TurnCompletedPayload{StopReason: event.StopFinal})
	f.turns.running["sess-A"] = true
	// This server runs sess-A's turn: its page offers Cancel, and Cancel
	// cancels it.
	if body := f.do(t, req{path: "/session/sess-A"}).Body.String(); !strings.Contains(body, `<p class="running-here" id="running-here">`) {
		t.Errorf("the page of a session this server runs shows no Cancel:\n%s", body)
	}
	w := f.do(t, req{method: "POST", path: "/api/cancel", body: `{"sessionId":"sess-A"}`})
	if w.Code != 200 || len(f.turns.cancels) != 1 || f.turns.cancels[0] != "sess-A" {
		t.Fatalf("cancel: %d %s, cancels %v", w.Code, w.Body.String(), f.turns.cancels)
	}
	// sess-B waits on a question of another process: not cancellable
	// here, and the page and the answer say so.
	w = f.do(t, req{method: "POST", path: "/api/cancel", body: `{"sessionId":"sess-B"}`})
	if w.Code != 409 || !strings.Contains(w.Body.String(), "run by another custom-agent process") {
		t.Errorf("cancel of another process's turn: %d %s", w.Code, w.Body.String())
	}
	body := f.do(t, req{path: "/session/sess-B"}).Body.String()
	if !strings.Contains(body, `id="running-elsewhere"`) || !strings.Contains(body, `<p class="running-here" id="running-here" hidden>`) {
		t.Errorf("the page of another process's turn:\n%s", body)
	}
	// An ended session, and no session at all.
	for _, id := range []string{"sess-E", "sess-Z"} {
		w = f.do(t, req{method: "POST", path: "/api/cancel", body: fmt.Sprintf(`{"sessionId":%q}`, id)})
		if w.Code != 409 || !strings.Contains(w.Body.String(), "no turn is running") {
			t.Errorf("cancel in %s: %d %s", id, w.Code, w.Body.String())
		}
	}
	for _, body := range []string{`{}`, `{"sessionId":"sess-A","force":true}`, `[]`} {
		if w := f.do(t, req{method: "POST", path: "/api/cancel", body: body}); w.Code != 400 {
			t.Errorf("cancel %s: %d", body, w.Code)
		}
	}
	if len(f.turns.cancels) != 1 {
		t.Errorf("cancels %v, want only sess-A's", f.turns.cancels)
	}
	if f.turns.calls() != 4 {
		t.Errorf("%d calls reached the turns, want 4: the bodies that are not one cancel object must not", f.turns.calls())
	}
}

// TestRevokeRule: POST /api/revoke reaches the process's Revoke only for a
// rule the session's log holds, in the directory it was made in, and says
// where to revoke when this process or another runs the session.
func TestRevokeRule(t *testing.T) {
	f := newFixture(t)
	appendEvent(t, f.log, "sess-A", event.PolicyChangedPayload{Level: "session", Op: "add", Cwd: "/work/sess-A",
		Rule: json.RawMessage(`{"id":"s1","level":"session","tool":"shell","command":"go test","decision":"allow"}`)})
	post := func(body string) (int, turnResponse) {
		w := f.do(t, req{method: "POST", path: "/api/revoke", body: body})
		return w.Code, decodeTurn(t, w.Body.String())
	}
	if code, r := post(`{"sessionId":"sess-A","ruleId":"s9"}`); code != 404 || len(f.turns.revokes) != 0 {
		t.Fatalf("an unknown rule: %d %q, revokes %v", code, r.Message, f.turns.revokes)
	}
	if code, r := post(`{"sessionId":"nope","ruleId":"s1"}`); code != 404 {
		t.Fatalf("an unknown session: %d %q", code, r.Message)
	}
	if code, _ := post(`{"sessionId":"sess-A"}`); code != 400 {
		t.Fatalf("no rule id: %d", code)
	}
	f.turns.busy["sess-A"] = true
	if code, r := post(`{"sessionId":"sess-A","ruleId":"s1"}`); code != 409 || !strings.Contains(r.Message, "/permissions revoke s1") {
		t.Fatalf("a session another process runs: %d %q", code, r.Message)
	}
	delete(f.turns.busy, "sess-A")
	f.turns.running["sess-A"] = true
	if code, r := post(`{"sessionId":"sess-A","ruleId":"s1"}`); code != 409 || !strings.Contains(r.Message, "once it has ended") {
		t.Fatalf("a session this server runs a turn in: %d %q", code, r.Message)
	}
	delete(f.turns.running, "sess-A")
	code, r := post(`{"sessionId":"sess-A","ruleId":"s1"}`)
	if code != 200 || !strings.Contains(r.Message, "revoked") {
		t.Fatalf("revoke: %d %q", code, r.Message)
	}
	if want := (RevokeRequest{SessionID: "sess-A", Cwd: "/work/sess-A", RuleID: "s1"}); len(f.turns.revokes) != 1 || f.turns.revokes[0] != want {
		t.Fatalf("revokes %+v, want %+v", f.turns.revokes, want)
	}
	body := f.do(t, req_("/session/sess-A")).Body.String()
	if !strings.Contains(body, `class="revoke deny" data-session="sess-A" data-rule="s1"`) {
		t.Errorf("the session page has no Revoke button for s1")
	}
}

// Issue 25: POST /api/revoke-approval revokes one prior approval, named by
// the seq of the answer that made it; it reaches the process's
// RevokeApproval with that call, in the directory it was made in, and once
// the log records the revoke the page no longer lists it.
func TestRevokeApproval(t *testing.T) {
	f := newFixture(t)
	srv, err := New(Options{Log: f.log, Inbox: f.inbox, Turns: f.turns, Policy: &fakePolicy{}, Token: testToken, UIHost: testHost, AnswerWait: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f.h, f.srv = srv.Handler(), srv
	if w := f.do(t, req{method: "POST", path: "/api/answer", body: f.answerBody("sess-A", "allow_once")}); w.Code != 200 {
		t.Fatalf("answer: %d %s", w.Code, w.Body.String())
	}
	f.srv.refresh(t.Context())
	s, _ := f.srv.index.Session("sess-A")
	if len(s.Priors) != 1 {
		t.Fatalf("%d prior approvals, want 1", len(s.Priors))
	}
	seq := s.Priors[0].Seq
	post := func(body string) (int, turnResponse) {
		w := f.do(t, req{method: "POST", path: "/api/revoke-approval", body: body})
		return w.Code, decodeTurn(t, w.Body.String())
	}
	if code, r := post(fmt.Sprintf(`{"sessionId":"sess-A","seq":%d}`, seq+100)); code != 404 || len(f.turns.approvalRevokes) != 0 {
		t.Fatalf("an unknown approval: %d %q", code, r.Message)
	}
	if code, _ := post(`{"sessionId":"sess-A"}`); code != 400 {
		t.Fatalf("no seq: %d", code)
	}
	body := fmt.Sprintf(`{"sessionId":"sess-A","seq":%d}`, seq)
	f.turns.busy["sess-A"] = true
	if code, r := post(body); code != 409 || !strings.Contains(r.Message, "another custom-agent process") {
		t.Fatalf("a session another process runs: %d %q", code, r.Message)
	}
	delete(f.turns.busy, "sess-A")
	code, r := post(body)
	if code != 200 || len(f.turns.approvalRevokes) != 1 {
		t.Fatalf("revoke: %d %q, %v", code, r.Message, f.turns.approvalRevokes)
	}
	got := f.turns.approvalRevokes[0]
	if got.SessionID != "sess-A" || got.Cwd != "/work/sess-A" || got.Seq != seq {
		t.Fatalf("revoke request %+v", got)
	}
	// The process records it, by seq; the page then lists it no more.
	appendEvent(t, f.log, "sess-A", event.PolicyChangedPayload{Level: "session", Op: event.PolicyOpRevokeApproval, Cwd: "/work/sess-A",
		Rule: json.RawMessage(fmt.Sprintf(`{"seq":%d,"tool":"write_file","args":{"path":"a.txt","content":"hello"}}`, seq))})
	if page := f.do(t, req_("/policy?cwd=/work/sess-A")).Body.String(); strings.Contains(page, `<tr class="prior">`) {
		t.Error("a revoked approval is still listed")
	}
}
