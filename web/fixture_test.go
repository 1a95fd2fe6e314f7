package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission/risk"
)

const (
	testToken       = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	testScriptToken = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	testLabel       = "00112233445566778899aabbccddeeff"
	testHost        = testLabel + ".localhost:7717" // the UI host: cookies work here only
	testIPHost      = "127.0.0.1:7717"              // scripts (Bearer) may use it
	testOrig        = "http://" + testHost
)

// fakeInbox stands for the store's inbox and, when relay is set, for the
// asking process: it records permission.resolved for the first answer to
// each ask, as the relay does.
type fakeInbox struct {
	t     *testing.T
	log   eventlog.Store
	relay bool

	mu     sync.Mutex
	offers []Answer
	taken  map[string]bool
}

func (f *fakeInbox) OfferAnswer(ctx context.Context, a Answer) error {
	f.mu.Lock()
	key := fmt.Sprintf("%s/%s/%d", a.SessionID, a.ToolCallID, a.RequestSeq)
	if f.taken[key] {
		f.mu.Unlock()
		return fmt.Errorf("offer %s: %w", key, eventlog.ErrAnswered)
	}
	f.taken[key] = true
	f.offers = append(f.offers, a)
	f.mu.Unlock()
	if !f.relay {
		return nil
	}
	decision := "allow"
	if a.Option == executor.OptionDeny {
		decision = "deny"
	}
	appendEvent(f.t, f.log, a.SessionID, event.PermissionResolvedPayload{ToolCallID: a.ToolCallID, Decision: decision,
		Reason: "user answered", Actor: event.ActorUser, RiskAtDecision: risk.Write, SourcedFrom: "default", Option: a.Option, UI: a.UI})
	return nil
}

func (f *fakeInbox) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.offers)
}

func appendEvent(t testing.TB, log eventlog.Store, session string, p event.Payload) event.Event {
	t.Helper()
	d, err := event.NewDraft(session, "turn_1", time.Now(), p)
	if err != nil {
		t.Fatal(err)
	}
	e, err := log.Append(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// fixture is a log with two sessions, each waiting on a question, and a
// server over it.
type fixture struct {
	log   *sqlitestore.Store
	inbox *fakeInbox
	turns *fakeTurns
	srv   *Server
	h     http.Handler
	// asks: "A" (write, tc_1), "B" (write, tc_1 too), "D" (destructive)
	seq map[string]uint64
	// the cookie and tab key of the one token exchange (the token is
	// single-use)
	c   *http.Cookie
	key string
}

func askPayload(tc, tool string, l risk.Level, args string) event.PermissionRequestedPayload {
	opts := []string{executor.OptionAllowOnce, executor.OptionAllowSession, executor.OptionDeny}
	if l >= risk.Destructive {
		opts = []string{executor.OptionAllowOnce, executor.OptionDeny}
	}
	return event.PermissionRequestedPayload{ToolCallID: tc, Tool: tool, Args: json.RawMessage(args), RiskAtDecision: l,
		SourcedFrom: "default", SuggestedDecision: "ask", Reason: "the default for " + l.String() + " is ask",
		Options: opts, TimeoutMs: 600000}
}

func startSession(t testing.TB, log eventlog.Store, id string) {
	appendEvent(t, log, id, event.SessionStartedPayload{Cwd: "/work/" + id, Mode: "default", Model: "script"})
	appendEvent(t, log, id, event.TurnStartedPayload{Cwd: "/work/" + id, Mode: "default", Model: "script"})
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	log, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "log.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	f := &fixture{log: log, seq: map[string]uint64{}}
	f.inbox = &fakeInbox{t: t, log: log, relay: true, taken: map[string]bool{}}
	for _, s := range []struct {
		id, tc, tool string
		l            risk.Level
		args         string
	}{
		{"sess-A", "tc_1", "write_file", risk.Write, `{"path":"a.txt","content":"hello"}`},
		{"sess-B", "tc_1", "write_file", risk.Write, `{"path":"b.txt","content":"<script>alert(1)</script>"}`},
		{"sess-D", "tc_9", "shell", risk.Destructive, `{"command":"rm -rf /tmp/x"}`},
	} {
		startSession(t, log, s.id)
		e := appendEvent(t, log, s.id, askPayload(s.tc, s.tool, s.l, s.args))
		f.seq[s.id] = e.Seq
	}
	f.turns = newFakeTurns()
	f.srv, err = New(Options{Log: log, Inbox: f.inbox, Turns: f.turns, Token: testToken, ScriptToken: testScriptToken, UIHost: testHost,
		Hosts: []string{testIPHost, "localhost:7717", "[::1]:7717"}, Poll: 20 * time.Millisecond, AnswerWait: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f.h = f.srv.Handler()
	return f
}

// req builds a request as a browser on our own page would send it, which
// each test then spoils in one way.
type req struct {
	method, path, body string
	host               string
	origin             *string // nil: our origin on a POST, none on a GET
	ctype              *string
	csrf               *string
	auth               string // "bearer", "cookie" (with the tab key), "cookie-only", "none", or a literal Authorization
	cookie             string
	key                string // a tab key in place of the real one
}

func str(s string) *string { return &s }

func (f *fixture) cookie(t *testing.T) *http.Cookie {
	t.Helper()
	if f.c != nil {
		c := *f.c
		return &c
	}
	r := httptest.NewRequest("GET", "/?token="+testToken, nil)
	r.Host = testHost
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	cs := w.Result().Cookies()
	if len(cs) != 1 {
		t.Fatalf("the token URL set %d cookies, want 1", len(cs))
	}
	f.c = cs[0]
	f.key = pageKey(t, w.Body.String())
	c := *f.c
	return &c
}

var keyAttr = regexp.MustCompile(`<div id="ca-exchange" data-key="([0-9a-f]{64})" data-next="([^"]*)">`)

// pageKey is the tab key in the login link's answer.
func pageKey(t testing.TB, body string) string {
	t.Helper()
	m := keyAttr.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the login answer holds no tab key: %q", body)
	}
	return m[1]
}

func (f *fixture) do(t *testing.T, q req) *httptest.ResponseRecorder {
	t.Helper()
	if q.method == "" {
		q.method = "GET"
	}
	// A stream the guard wrongly lets through ends with the context.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, q.method, q.path, strings.NewReader(q.body))
	r.Host = testHost
	if q.host != "" {
		r.Host = q.host
	}
	post := q.method != "GET" && q.method != "HEAD"
	switch {
	case q.origin != nil:
		if *q.origin != "<none>" {
			r.Header.Set("Origin", *q.origin)
		}
	case post:
		r.Header.Set("Origin", testOrig)
	}
	switch {
	case q.ctype != nil:
		if *q.ctype != "<none>" {
			r.Header.Set("Content-Type", *q.ctype)
		}
	case post:
		r.Header.Set("Content-Type", "application/json")
	}
	switch {
	case q.csrf != nil:
		if *q.csrf != "<none>" {
			r.Header.Set(HeaderCSRF, *q.csrf)
		}
	case post:
		r.Header.Set(HeaderCSRF, "1")
	}
	switch q.auth {
	case "", "cookie", "cookie-only":
		c := f.cookie(t)
		if q.cookie != "" {
			c.Value = q.cookie
		}
		r.AddCookie(c)
		if q.auth != "cookie-only" {
			r.Header.Set(HeaderKey, f.key)
		}
		switch q.key {
		case "":
		case "<cookie>":
			r.Header.Set(HeaderKey, c.Value)
		default:
			r.Header.Set(HeaderKey, q.key)
		}
	case "key-only":
		f.cookie(t)
		r.Header.Set(HeaderKey, f.key)
	case "bearer":
		r.Header.Set("Authorization", "Bearer "+testScriptToken)
	case "none":
	default:
		r.Header.Set("Authorization", q.auth)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

func (f *fixture) answerBody(session string, option string) string {
	tc := "tc_1"
	if session == "sess-D" {
		tc = "tc_9"
	}
	return fmt.Sprintf(`{"sessionId":%q,"seq":%d,"toolCallId":%q,"option":%q}`, session, f.seq[session], tc, option)
}

func modelText(s string) event.Payload { return event.ModelDeltaPayload{Text: s} }

func toolOutput(tc, out string) event.Payload {
	code := 0
	return event.ToolCompletedPayload{ToolCallID: tc, ExitCode: &code, StdoutBytes: int64(len(out)), StdoutPreview: out, Artifacts: []event.Artifact{}}
}
