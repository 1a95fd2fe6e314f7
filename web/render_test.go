package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// hostile is text a model, a tool or a repository may produce.
const hostile = "<script>alert('x')</script> <img src=http://evil.example/p.png> ![i](http://evil.example/m.png) " +
	"[link](javascript:alert(1)) \x1b]0;title\x07 \x1b[31mred \u202eevil\u202c sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

func TestHostileTextIsInert(t *testing.T) {
	f := newFixture(t)
	argsJSON, _ := json.Marshal(map[string]string{"command": hostile})
	appendEvent(t, f.log, "sess-X", event.SessionStartedPayload{Cwd: "/w/" + hostile, Mode: "default", Model: hostile})
	appendEvent(t, f.log, "sess-X", event.UserMessagePayload{Content: hostile})
	appendEvent(t, f.log, "sess-X", event.ModelDeltaPayload{Text: hostile})
	req := askPayload("tc_x", "shell", risk.Execute, string(argsJSON))
	req.Reason = hostile
	req.Findings = []risk.Finding{{Risk: risk.Execute, Arg: "command", Span: risk.Span{Start: 0, End: 8}, Text: "<script>", Why: hostile}}
	e := appendEvent(t, f.log, "sess-X", req)

	pages := map[string]string{}
	for _, p := range []string{"/", "/queue", "/session/sess-X", "/session/sess-X/ask/" + itoa(e.Seq)} {
		w := f.do(t, req_(p))
		if w.Code != 200 {
			t.Fatalf("%s: %d", p, w.Code)
		}
		pages[p] = w.Body.String()
	}
	pages["timeline"] = streamBody(t, f, "/session/sess-X/events", "", has("id: "+itoa(e.Seq)+"\n"))
	bad := regexp.MustCompile(`<script>|<img|href="[^"]*(?:evil|javascript)|\x1b|\x07|\x{202e}|sk-proj-A{10}`)
	for p, body := range pages {
		// Our own one script tag is allowed.
		body = strings.ReplaceAll(body, `<script src="/assets/app.js" defer></script>`, "")
		if m := bad.FindString(body); m != "" {
			t.Errorf("%s shows %q live", p, m)
		}
	}
	dialog := pages["/session/sess-X/ask/"+itoa(e.Seq)]
	for _, want := range []string{"&lt;script&gt;", `\x1b`, `\u202e`, "<mark>&lt;script&gt;</mark>"} {
		if !strings.Contains(dialog, want) {
			t.Errorf("the dialog does not show %q as text", want)
		}
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func req_(path string) req { return req{path: path} }

// streamBody reads an SSE stream until enough returns true of what has
// come (or 30 s pass), then ends the request. It waits for content, not
// for a time, so a slow machine only makes it slower.
func streamBody(t *testing.T, f *fixture, path, lastID string, enough func(string) bool) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, "GET", path, nil)
	r.Host = testHost
	r.AddCookie(f.cookie(t))
	r.Header.Set(HeaderKey, f.key)
	if lastID != "" {
		r.Header.Set("Last-Event-ID", lastID)
	}
	w := &streamRecorder{header: http.Header{}}
	done := make(chan struct{})
	go func() { defer close(done); f.h.ServeHTTP(w, r) }()
	deadline := time.Now().Add(30 * time.Second)
	for !enough(w.body()) && time.Now().Before(deadline) {
		select {
		case <-done:
			deadline = time.Now() // the stream ended
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	<-done
	if code := w.status(); code != 200 || !strings.HasPrefix(w.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%s: %d %s", path, code, w.header.Get("Content-Type"))
	}
	return w.body()
}

// streamRecorder is an http.ResponseWriter and Flusher a test may read
// while the handler still writes.
type streamRecorder struct {
	header http.Header
	mu     sync.Mutex
	code   int
	buf    strings.Builder
}

func (w *streamRecorder) Header() http.Header { return w.header }
func (w *streamRecorder) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = code
	}
}
func (w *streamRecorder) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = 200
	}
	return w.buf.Write(b)
}
func (w *streamRecorder) Flush() {}
func (w *streamRecorder) body() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
func (w *streamRecorder) status() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.code
}

// ids returns a streamBody condition: at least n SSE ids have come.
func ids(n int) func(string) bool {
	return func(b string) bool { return len(sseID.FindAllStringSubmatch(b, -1)) >= n }
}

func has(s string) func(string) bool { return func(b string) bool { return strings.Contains(b, s) } }

var sseID = regexp.MustCompile(`(?m)^id: (\d+)$`)

func TestTimelineResumesFromLastEventID(t *testing.T) {
	f := newFixture(t)
	all := sseID.FindAllStringSubmatch(streamBody(t, f, "/session/sess-A/events", "", ids(3)), -1)
	if len(all) != 3 {
		t.Fatalf("%d events streamed, want 3", len(all))
	}
	rest := sseID.FindAllStringSubmatch(streamBody(t, f, "/session/sess-A/events", "2", ids(1)), -1)
	if len(rest) != 1 || rest[0][1] != "3" {
		t.Fatalf("after Last-Event-ID 2: %v, want only 3", rest)
	}
	body := streamBody(t, f, "/session/sess-A/events", "", has(`"askUrl"`))
	if !strings.Contains(body, `"type":"permission.requested"`) || !strings.Contains(body, `"askUrl":"/session/sess-A/ask/3"`) {
		t.Errorf("the ask is not in the timeline with its link: %s", body)
	}
}

func TestQueueStreamHoldsNoArgs(t *testing.T) {
	f := newFixture(t)
	f.srv.refresh(t.Context())
	body := streamBody(t, f, "/queue/events", "", has("event: queue"))
	if !strings.Contains(body, "event: queue") || !strings.Contains(body, `"tool":"shell"`) {
		t.Fatalf("queue stream: %s", body)
	}
	for _, secret := range []string{"rm -rf", "hello", "alert", "a.txt", "reason"} {
		if strings.Contains(body, secret) {
			t.Errorf("the queue stream (what notifications are made from) holds %q", secret)
		}
	}
}

// A rule proposed for one exact command (web-review-5 finding 2: curl
// gets no prefix rule) says so in the dialog, not as a bare `curl`.
func TestDialogShowsAnExactCommandRule(t *testing.T) {
	f := newFixture(t)
	req := askPayload("tc_x", "shell", risk.Network, `{"command":"curl -s https://api.github.com/x"}`)
	req.SessionRule = json.RawMessage(`{"id":"s1","level":"session","tool":"shell","command":"curl -s https://api.github.com/x","args":{"command":"curl -s https://api.github.com/x"},"decision":"allow"}`)
	e := appendEvent(t, f.log, "sess-A", req)
	body := f.do(t, req_("/session/sess-A/ask/"+itoa(e.Seq))).Body.String()
	if want := "allow_session adds the session rule: shell `curl -s https://api.github.com/x` (this exact command only) → allow"; !strings.Contains(body, want) {
		t.Errorf("the dialog lacks %q", want)
	}
}

func TestDialogShowsWhatTheTerminalShows(t *testing.T) {
	f := newFixture(t)
	req := askPayload("tc_r", "shell", risk.Execute, `{"command":"go test ./..."}`)
	req.SessionRule = json.RawMessage(`{"id":"s1","level":"session","tool":"shell","command":"go test","decision":"allow"}`)
	e := appendEvent(t, f.log, "sess-A", req)
	body := f.do(t, req_("/session/sess-A/ask/"+itoa(e.Seq))).Body.String()
	for _, want := range []string{
		"allow_session adds the session rule: shell `go test` → allow",
		`class="risk risk-execute"`, "EXECUTE", "runs a program",
		"allow once (and identical calls again in this session)", "workspace sandbox (for the processes it starts)",
		`data-deadline=`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the dialog lacks %q", want)
		}
	}
	// A destructive ask: allow once behind the typed word, and deny.
	body = f.do(t, req_("/session/sess-D/ask/3")).Body.String()
	if n := strings.Count(body, `class="answer`); n != 2 {
		t.Errorf("a destructive dialog offers %d answers, want 2", n)
	}
	for _, want := range []string{"DESTRUCTIVE", "cannot be undone", `data-needs-confirm="1" disabled`, "<kbd>confirm</kbd>", "allow once (asked again every time)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the destructive dialog lacks %q", want)
		}
	}
	// An edit shows its diff.
	edit := askPayload("tc_e", "apply_patch", risk.Write, `{"patch":"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n"}`)
	e = appendEvent(t, f.log, "sess-B", edit)
	body = f.do(t, req_("/session/sess-B/ask/"+itoa(e.Seq))).Body.String()
	if !strings.Contains(body, `<span class="d d-&#43;">&#43;new</span>`) && !strings.Contains(body, `d-+`) {
		t.Errorf("the edit's diff is not shown: %s", body)
	}
	// A closed ask says how it ended.
	appendEvent(t, f.log, "sess-B", event.PermissionResolvedPayload{ToolCallID: "tc_e", Decision: "deny", Reason: "no", Actor: event.ActorUser,
		RiskAtDecision: risk.Write, SourcedFrom: "default", UI: "terminal"})
	body = f.do(t, req_("/session/sess-B/ask/"+itoa(e.Seq))).Body.String()
	if !strings.Contains(body, "denied by user via terminal: no") {
		t.Errorf("a closed ask does not say how it ended: %s", body)
	}
}

func TestSessionsPage(t *testing.T) {
	f := newFixture(t)
	appendEvent(t, f.log, "sess-A", event.PermissionResolvedPayload{ToolCallID: "tc_1", Decision: "allow", Reason: "ok", Actor: event.ActorUser,
		RiskAtDecision: risk.Write, SourcedFrom: "default", Option: "allow_once"})
	appendEvent(t, f.log, "sess-A", event.TurnCompletedPayload{StopReason: "final"})
	body := f.do(t, req_("/")).Body.String()
	iA, iD := strings.Index(body, "sess-A"), strings.Index(body, "sess-D")
	if iA < 0 || iD < 0 || iA > iD {
		t.Errorf("sessions are not newest first (A at %d, D at %d)", iA, iD)
	}
	for _, want := range []string{"1 allow by user", "verifies", ">ended<", ">waiting for an answer<", "/work/sess-A"} {
		if !strings.Contains(body, want) {
			t.Errorf("the sessions page lacks %q", want)
		}
	}
}

func TestSessionPageListsSessionRules(t *testing.T) {
	f := newFixture(t)
	add := func(op, id, cmd string) {
		appendEvent(t, f.log, "sess-A", event.PolicyChangedPayload{Level: "session", Op: op, Cwd: "/work/sess-A",
			Rule: json.RawMessage(`{"id":"` + id + `","level":"session","tool":"shell","command":"` + cmd + `","decision":"allow"}`)})
	}
	add("add", "s1", "go test")
	add("add", "s2", "make lint")
	add("remove", "s1", "go test")
	body := f.do(t, req_("/session/sess-A")).Body.String()
	if !strings.Contains(body, "shell `make lint` → allow") || strings.Contains(body, "shell `go test` → allow") {
		t.Errorf("session rules: want s2 only:\n%s", body)
	}
}

type fakePolicy struct{ explained []string }

func (p *fakePolicy) Rules(cwd string) (PolicyView, error) {
	return PolicyView{Project: cwd, Trusted: false, Rules: []PolicyRule{
		{Level: "project", ID: "p1", Decision: "allow", Tool: "shell", Matches: `command "<b>make</b>"`, File: cwd + "/.custom-agent/policy.json:3", Note: "untrusted: ignored"},
		{Level: "user", ID: "u1", Decision: "deny", Tool: "http_post", Matches: "url *", File: "/home/u/.config/custom-agent/policy.json:7"},
	}}, nil
}

func (p *fakePolicy) Trusted() (TrustView, error) {
	return TrustView{File: "/home/u/.config/custom-agent/trusted.json",
		Projects: []string{"/home/u/src/app", "/home/u/src/<script>x</script>"},
		Rules:    []TrustedRule{{Root: "/home/u/src/lib", ID: "npm-test"}}}, nil
}

func (p *fakePolicy) Explain(_ context.Context, cwd, tool string, args json.RawMessage) (string, error) {
	p.explained = append(p.explained, cwd+" "+tool+" "+string(args))
	return "1. risk: execute\n\x1b[31m<script>", nil
}

func TestPolicyPageAndExplain(t *testing.T) {
	f := newFixture(t)
	pol := &fakePolicy{}
	f.srv.opts.Policy = pol
	body := f.do(t, req_("/policy")).Body.String()
	for _, want := range []string{"/work/sess-", ".custom-agent/policy.json:3", "untrusted: ignored", "not trusted", "&lt;b&gt;make&lt;/b&gt;", `id="explain"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the policy page lacks %q", want)
		}
	}
	w := f.do(t, req{method: "POST", path: "/api/explain", body: `{"cwd":"/work/sess-A","tool":"shell","args":{"command":"make"}}`})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `\\x1b[31m`) || len(pol.explained) != 1 {
		t.Fatalf("explain: %d %s %v", w.Code, w.Body.String(), pol.explained)
	}
	if w := f.do(t, req{method: "POST", path: "/api/explain", body: `{"cwd":"relative","tool":"shell"}`}); w.Code != 400 {
		t.Errorf("a relative cwd: %d", w.Code)
	}
}

// Issue 25: every trusted project is listed on the policy page, not only
// the shown directory's, read-only, with the single rules trusted in
// untrusted projects.
func TestPolicyPageListsEveryTrustedProject(t *testing.T) {
	f := newFixture(t)
	srv, err := New(Options{Log: f.log, Policy: &fakePolicy{}, Token: testToken, UIHost: testHost})
	if err != nil {
		t.Fatal(err)
	}
	f.h, f.srv = srv.Handler(), srv
	body := f.do(t, req_("/policy")).Body.String()
	for _, want := range []string{
		`<li class="trusted-project mono">/home/u/src/app</li>`,
		`<li class="trusted-project mono">/home/u/src/&lt;script&gt;x&lt;/script&gt;</li>`,
		`<span class="mono">npm-test</span> in <span class="mono">/home/u/src/lib</span>`,
		"/home/u/.config/custom-agent/trusted.json",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the policy page lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script>x") {
		t.Error("a project's name is markup")
	}
}

// Issue 25: the policy page lists the prior approvals made in the shown
// directory, by session, with when, the call (masked) and its risk; a
// destructive allow is never one, and revoking a session rule drops its
// tool's.
func TestPolicyPageListsPriorApprovals(t *testing.T) {
	f := newFixture(t)
	srv, err := New(Options{Log: f.log, Inbox: f.inbox, Policy: &fakePolicy{}, Token: testToken, UIHost: testHost, AnswerWait: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f.h, f.srv = srv.Handler(), srv
	// A write with a secret in its arguments, allowed by a person.
	seq := appendEvent(t, f.log, "sess-A", askPayload("tc_k", "write_file", risk.Write,
		`{"path":"k.txt","content":"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`)).Seq
	for _, b := range []string{
		fmt.Sprintf(`{"sessionId":"sess-A","seq":%d,"toolCallId":"tc_k","option":"allow_once"}`, seq),
		f.answerBody("sess-A", "allow_session"),
	} {
		if w := f.do(t, req{method: "POST", path: "/api/answer", body: b}); w.Code != 200 {
			t.Fatalf("answer %s: %d %s", b, w.Code, w.Body.String())
		}
	}
	// A destructive call a person allowed (the fake relay records every
	// answer as a write, so this one is written here as the relay would).
	appendEvent(t, f.log, "sess-D", event.PermissionResolvedPayload{ToolCallID: "tc_9", Decision: "allow", Reason: "user answered",
		Actor: event.ActorUser, RiskAtDecision: risk.Destructive, SourcedFrom: "default", Option: "allow_once", UI: UIName})
	page := func(cwd string) string { return f.do(t, req_("/policy?cwd="+cwd)).Body.String() }
	body := page("/work/sess-A")
	if n := strings.Count(body, `<tr class="prior">`); n != 2 {
		t.Fatalf("%d prior approvals listed in /work/sess-A, want 2:\n%s", n, body)
	}
	for _, want := range []string{`href="/session/sess-A"`, "k.txt", "a.txt", "allow_session", "allow_once"} {
		if !strings.Contains(body, want) {
			t.Errorf("the prior approvals lack %q", want)
		}
	}
	if strings.Contains(body, "wJalrXUtnFEMI") {
		t.Error("a secret of a prior approval's arguments is shown")
	}
	if d := page("/work/sess-D"); strings.Contains(d, `<tr class="prior">`) {
		t.Error("a destructive allow is listed as a prior approval")
	}
	// Revoking a session rule for write_file drops both.
	appendEvent(t, f.log, "sess-A", event.PolicyChangedPayload{Level: "session", Op: "remove", Rule: json.RawMessage(`{"id":"s1","tool":"write_file","decision":"allow"}`), Cwd: "/work/sess-A"})
	if n := strings.Count(page("/work/sess-A"), `<tr class="prior">`); n != 0 {
		t.Errorf("%d prior approvals after their tool's rule was revoked, want 0", n)
	}
}

// Web review 5: the answered page and the answer's JSON show how a
// question ended, whose reason may quote a call's arguments; bidi and
// terminal control characters in it are shown escaped, as everywhere else.
func TestAnsweredWordsAreClean(t *testing.T) {
	f := newFixture(t)
	e := appendEvent(t, f.log, "sess-A", askPayload("tc_b", "shell", risk.Execute, `{"command":"cat x"}`))
	appendEvent(t, f.log, "sess-A", event.PermissionResolvedPayload{ToolCallID: "tc_b", Decision: "deny",
		Reason: "reads cat .env\u202e\x1b[2J exe.gpj", Actor: event.ActorUser, RiskAtDecision: risk.Execute, SourcedFrom: "default", Option: "deny\u2066"})
	page := f.do(t, req_("/session/sess-A/ask/"+itoa(e.Seq))).Body.String()
	w := f.do(t, req{method: "POST", path: "/api/answer", body: fmt.Sprintf(`{"sessionId":"sess-A","seq":%d,"toolCallId":"tc_b","option":"allow_once"}`, e.Seq)})
	var res struct{ Outcome, Message string }
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatalf("answer: %d %s: %v", w.Code, w.Body.String(), err)
	}
	for name, text := range map[string]string{"the answered page": page, "the answer's outcome": res.Outcome, "the answer's message": res.Message} {
		if !strings.Contains(text, "exe.gpj") {
			t.Errorf("%s does not show the reason: %q", name, text)
		}
		if strings.ContainsAny(text, "\u202e\u2066\x1b") {
			t.Errorf("%s holds a raw bidi or control character: %q", name, text)
		}
	}
}
