package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// relayEnv is an asking process (its store handle, broker and relay) and a
// web UI's process (its own store handle on the same SQLite file).
type relayEnv struct {
	t     testing.TB
	asker *sqlitestore.Store
	web   *sqlitestore.Store
	b     *approval.Broker
}

func newRelayEnv(t testing.TB) *relayEnv {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	asker, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asker.Close() })
	web, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	return &relayEnv{t: t, asker: asker, web: web, b: approval.New(nil)}
}

// relay runs a relay for session until the test ends.
func (e *relayEnv) relay(session string) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- approval.Relay(ctx, e.asker, e.asker, e.b, session, &approval.RelayOptions{
			Interval: 5 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
		})
	}()
	e.t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			e.t.Errorf("Relay: %v", err)
		}
	})
}

func relayQuestion(session, id string, level risk.Level, timeout time.Duration) executor.Question {
	d := permission.Decision{Decision: permission.Ask, RiskAtDecision: level, SourcedFrom: permission.FromDefault, Reason: "asks"}
	return executor.Question{
		SessionID: session, ToolCallID: id, Tool: permission.ToolInfo{Name: "shell", Risk: risk.Execute},
		Args: json.RawMessage(`{"command":"x"}`), Decision: d, Options: executor.OfferedOptions(d, true, false), Timeout: timeout,
	}
}

// ask does what the executor does: it records permission.requested, asks
// the broker, and records the answer as permission.resolved. It returns
// the request's seq and a channel with the answer.
func (e *relayEnv) ask(q executor.Question) (uint64, <-chan executor.Answer) {
	e.t.Helper()
	ctx := context.Background()
	req, err := event.NewDraft(q.SessionID, "turn-1", time.Now(), event.PermissionRequestedPayload{
		ToolCallID: q.ToolCallID, Tool: q.Tool.Name, Args: q.Args, RiskAtDecision: q.Decision.RiskAtDecision,
		SourcedFrom: "default", SuggestedDecision: "ask", Reason: q.Decision.Reason, Options: q.Options, TimeoutMs: q.Timeout.Milliseconds(),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	ev, err := e.asker.Append(ctx, req)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make(chan executor.Answer, 1)
	go func() {
		a, _ := e.b.Ask(ctx, q)
		decision := "deny"
		if a.Allow {
			decision = "allow"
		}
		d, err := event.NewDraft(q.SessionID, "turn-1", time.Now(), event.PermissionResolvedPayload{
			ToolCallID: q.ToolCallID, Decision: decision, Reason: a.Reason, Actor: a.Actor,
			RiskAtDecision: q.Decision.RiskAtDecision, SourcedFrom: "default", Option: a.Option, UI: a.UI,
		})
		if err == nil {
			_, err = e.asker.Append(ctx, d)
		}
		if err != nil {
			e.t.Error(err)
		}
		out <- a
	}()
	// Wait until the broker holds the ask, as it does before any UI can
	// show it.
	for i := 0; len(e.b.Pending()) == 0; i++ {
		if i > 10000 {
			e.t.Fatal("the ask never reached the broker")
		}
		time.Sleep(time.Millisecond)
	}
	return ev.Seq, out
}

func (e *relayEnv) offer(a eventlog.Answer) {
	e.t.Helper()
	if a.At.IsZero() {
		a.At = time.Now()
	}
	if a.UI == "" {
		a.UI = "web"
	}
	if err := e.web.OfferAnswer(context.Background(), a); err != nil {
		e.t.Fatal(err)
	}
}

func TestRelayAnswerFromAnotherHandle(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	e.relay("s1")
	seq, got := e.ask(relayQuestion("s1", "tc_1", risk.Execute, time.Minute))
	e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: "tc_1", Option: executor.OptionAllowOnce, RequestSeq: seq})
	a := <-got
	want := executor.Answer{Allow: true, Option: executor.OptionAllowOnce, Actor: event.ActorUser, Reason: "user approved (allow_once)", UI: "web"}
	if a != want {
		t.Fatalf("answer %+v, want %+v", a, want)
	}
	open, err := approval.OpenAsks(context.Background(), e.web, "s1")
	if err != nil || len(open) != 0 {
		t.Fatalf("open questions after the answer: %+v, %v", open, err)
	}
	// The web UI reads how its question ended.
	r, ok, err := approval.Resolution(context.Background(), e.web, "s1", seq)
	if err != nil || !ok || r.UI != "web" || r.Actor != event.ActorUser || r.Decision != "allow" {
		t.Fatalf("Resolution = %+v, %v, %v; want the web's allow", r, ok, err)
	}
}

// TestRelayLateAnswerChangesNothing: an answer offered after the ask timed
// out changes nothing, and is not taken by the next ask that reuses the
// tool call id (it names the first request's seq).
func TestRelayLateAnswerChangesNothing(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	e.relay("s1")
	seq, got := e.ask(relayQuestion("s1", "tc_1", risk.Execute, 30*time.Millisecond))
	if a := <-got; a.Actor != event.ActorSystem || a.Allow {
		t.Fatalf("before any answer: %+v, want the system's timeout deny", a)
	}
	e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: "tc_1", Option: executor.OptionAllowOnce, RequestSeq: seq})
	// The same id again (a model reusing "tc_1"): the late answer is
	// not for it.
	_, again := e.ask(relayQuestion("s1", "tc_1", risk.Execute, 300*time.Millisecond))
	if a := <-again; a.Allow || a.Actor != event.ActorSystem {
		t.Fatalf("the second ask of tc_1 got %+v, want the system's timeout deny", a)
	}
	if n := resolutions(t, e.asker, "s1"); n != 2 {
		t.Fatalf("%d permission.resolved, want 2", n)
	}
}

// TestRelayReusedToolCallIDAnsweredTwice (finding 5 of the web review): the
// inbox kept one answer per (session, tool call id), so once a question
// was answered from the web, every later question with that id (a local
// model server's invented call_0) could not be. Each request is answered by
// its own answer now.
func TestRelayReusedToolCallIDAnsweredTwice(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	e.relay("s1")
	seq1, first := e.ask(relayQuestion("s1", "call_0", risk.Execute, time.Minute))
	e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: "call_0", Option: executor.OptionDeny, RequestSeq: seq1})
	if a := <-first; a.Allow || a.Actor != event.ActorUser || a.UI != "web" {
		t.Fatalf("first ask: %+v, want the web's deny", a)
	}
	seq2, second := e.ask(relayQuestion("s1", "call_0", risk.Execute, time.Minute))
	e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: "call_0", Option: executor.OptionAllowOnce, RequestSeq: seq2})
	if a := <-second; !a.Allow || a.Actor != event.ActorUser || a.UI != "web" {
		t.Fatalf("second ask of call_0: %+v, want the web's allow", a)
	}
}

// TestRelayAnswerNamingTheOpenRequest: with the id reused, an answer that
// names the open request's seq is taken.
func TestRelayAnswerNamingTheOpenRequest(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	e.relay("s1")
	_, first := e.ask(relayQuestion("s1", "tc_1", risk.Execute, 20*time.Millisecond))
	<-first
	seq, got := e.ask(relayQuestion("s1", "tc_1", risk.Execute, time.Minute))
	e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: "tc_1", Option: executor.OptionDeny, RequestSeq: seq})
	if a := <-got; a.Allow || a.Actor != event.ActorUser || a.UI != "web" {
		t.Fatalf("answer %+v, want the web's deny", a)
	}
}

// TestRelayAmbiguousRequestsRefused: while the log holds two open requests
// with the ask's tool call id (the second call's request written, its ask
// not yet made), an answer cannot tell which it is for and is ignored,
// even one naming the first request's seq.
func TestRelayAmbiguousRequestsRefused(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	e.relay("s1")
	seq, got := e.ask(relayQuestion("s1", "tc_1", risk.Execute, 300*time.Millisecond))
	d, err := event.NewDraft("s1", "turn-1", time.Now(), requested("tc_1", risk.Execute, "default"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.asker.Append(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: "tc_1", Option: executor.OptionAllowOnce, RequestSeq: seq})
	if a := <-got; a.Allow || a.Actor != event.ActorSystem {
		t.Fatalf("answer %+v, want the system's timeout deny", a)
	}
}

// TestRelayOtherSessionIgnored: an answer to the same tool call id in
// another session does not answer this session's ask, and another
// session's relay does not answer it either.
func TestRelayOtherSessionIgnored(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	e.relay("s2") // the relay of another session in this process
	e.relay("s1")
	seq, got := e.ask(relayQuestion("s1", "tc_1", risk.Execute, 300*time.Millisecond))
	e.offer(eventlog.Answer{SessionID: "s2", ToolCallID: "tc_1", Option: executor.OptionAllowOnce, RequestSeq: seq})
	if a := <-got; a.Allow || a.Actor != event.ActorSystem {
		t.Fatalf("answer %+v, want the system's timeout deny", a)
	}

	// s1's ask answered in the inbox, with only s2's relay running.
	e2 := newRelayEnv(t)
	e2.relay("s2")
	seq, got = e2.ask(relayQuestion("s1", "tc_1", risk.Execute, 300*time.Millisecond))
	e2.offer(eventlog.Answer{SessionID: "s1", ToolCallID: "tc_1", Option: executor.OptionAllowOnce, RequestSeq: seq})
	if a := <-got; a.Allow || a.Actor != event.ActorSystem {
		t.Fatalf("another session's relay answered: %+v", a)
	}
}

// TestRelayDestructive: allowing a destructive call needs the word the
// terminal demands; anything else denies, as at the terminal, and an
// option a destructive ask does not offer denies too.
func TestRelayDestructive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, option, confirm string
		want                  executor.Answer
	}{
		{"confirmed", executor.OptionAllowOnce, "confirm", executor.Answer{Allow: true, Option: executor.OptionAllowOnce, Actor: event.ActorUser, Reason: "user approved (allow_once)", UI: "web"}},
		{"confirmed with spaces", executor.OptionAllowOnce, " confirm ", executor.Answer{Allow: true, Option: executor.OptionAllowOnce, Actor: event.ActorUser, Reason: "user approved (allow_once)", UI: "web"}},
		{"no confirmation", executor.OptionAllowOnce, "", executor.Answer{Option: executor.OptionDeny, Actor: event.ActorUser, Reason: approval.ReasonNotConfirmed, UI: "web"}},
		{"wrong word", executor.OptionAllowOnce, "yes", executor.Answer{Option: executor.OptionDeny, Actor: event.ActorUser, Reason: approval.ReasonNotConfirmed, UI: "web"}},
		{"the option is not the word", executor.OptionAllowOnce, "allow_once", executor.Answer{Option: executor.OptionDeny, Actor: event.ActorUser, Reason: approval.ReasonNotConfirmed, UI: "web"}},
		{"not offered", executor.OptionAllowSession, "confirm", executor.Answer{Option: executor.OptionDeny, Actor: event.ActorSystem, Reason: `the web UI answered "allow_session", which was not offered for this call; denied`, UI: "web"}},
		{"deny needs no word", executor.OptionDeny, "", executor.Answer{Option: executor.OptionDeny, Actor: event.ActorUser, Reason: "user denied", UI: "web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newRelayEnv(t)
			e.relay("s1")
			seq, got := e.ask(relayQuestion("s1", "tc_rm", risk.Destructive, time.Minute))
			e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: "tc_rm", Option: tc.option, Confirm: tc.confirm, RequestSeq: seq})
			if a := <-got; a != tc.want {
				t.Fatalf("answer %+v, want %+v", a, tc.want)
			}
		})
	}
}

// TestRelayUINameIsAWord: the UI's name comes from another process and is
// recorded only as a short word.
func TestRelayUINameIsAWord(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	e.relay("s1")
	seq, got := e.ask(relayQuestion("s1", "tc_1", risk.Execute, time.Minute))
	e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: "tc_1", Option: executor.OptionDeny, UI: "web\x1b[2J<script>", RequestSeq: seq})
	if a := <-got; a.UI != "other" {
		t.Fatalf("ui %q, want other", a.UI)
	}
	for name, want := range map[string]string{"web": "web", "vs-code2": "vs-code2", "Web": "other", "": "other", "a b": "other"} {
		if got := approval.UIName(name); got != want {
			t.Errorf("UIName(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestRelayRacesTheTerminal: the terminal and the inbox answer the same
// ask at once; exactly one answer resolves it, and the log gets exactly
// one permission.resolved.
func TestRelayRacesTheTerminal(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	e.relay("s1")
	webWon, terminalWon := 0, 0
	for i := range 20 {
		id := "tc_" + string(rune('a'+i))
		seq, got := e.ask(relayQuestion("s1", id, risk.Execute, time.Minute))
		p := e.b.Pending()[0]
		var wg sync.WaitGroup
		var terr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: id, Option: executor.OptionAllowOnce, RequestSeq: seq})
		}()
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i%5) * 2 * time.Millisecond)
			terr = e.b.AnswerVia(p.ID, executor.OptionDeny, event.ActorUser, "terminal")
		}()
		wg.Wait()
		a := <-got
		switch {
		case a.UI == "web" && a.Allow && errors.Is(terr, approval.ErrAlreadyAnswered):
			webWon++
		case a.UI == "terminal" && !a.Allow && terr == nil:
			terminalWon++
		default:
			t.Fatalf("race %d: answer %+v, terminal's Answer: %v", i, a, terr)
		}
	}
	if n := resolutions(t, e.asker, "s1"); n != 20 {
		t.Fatalf("%d permission.resolved for 20 asks", n)
	}
	// Give a late relay look the chance to resolve something twice.
	time.Sleep(30 * time.Millisecond)
	if n := resolutions(t, e.asker, "s1"); n != 20 {
		t.Fatalf("%d permission.resolved for 20 asks", n)
	}
	t.Logf("the web won %d races, the terminal %d", webWon, terminalWon)
}

func resolutions(t testing.TB, log *sqlitestore.Store, session string) int {
	t.Helper()
	n := 0
	for e, err := range log.Read(context.Background(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == event.PermissionResolved {
			n++
		}
	}
	return n
}

// TestOpenAsks: the web UI's queue of a session's questions, from the log
// alone: each request without a resolution after it, with its seq and
// time, including both requests of a reused id while both are open; and
// how a question ended (Resolution).
func TestOpenAsks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	add := func(n int, p event.Payload) uint64 {
		d, err := event.NewDraft("s1", "turn-1", t0.Add(time.Duration(n)*time.Second), p)
		if err != nil {
			t.Fatal(err)
		}
		e, err := log.Append(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		return e.Seq
	}
	add(0, requested("a", risk.Execute, "default"))
	add(1, resolved("a", "allow"))
	b := add(2, requested("b", risk.Write, "default"))
	c1 := add(3, requested("c", risk.Execute, "default"))
	c2 := add(4, requested("c", risk.Network, "default"))
	add(5, requested("d", risk.Execute, "default"))
	add(6, resolved("d", "deny"))
	open, err := approval.OpenAsks(ctx, log, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, o := range open {
		got = append(got, o.Seq)
		if o.Request == nil || o.TurnID != "turn-1" || !o.Asked.Equal(t0.Add(time.Duration(o.Seq-1)*time.Second)) {
			t.Errorf("open ask %+v", o)
		}
	}
	if want := []uint64{b, c1, c2}; !slices.Equal(got, want) {
		t.Fatalf("open asks at seqs %v, want %v", got, want)
	}
	if open[2].Request.RiskAtDecision != risk.Network {
		t.Errorf("the second request of c has risk %s", open[2].Request.RiskAtDecision)
	}
	if open, err := approval.OpenAsks(ctx, log, "nobody"); err != nil || len(open) != 0 {
		t.Fatalf("a session without events: %+v, %v", open, err)
	}

	// Resolution: a's request was allowed; b and both of c's are open;
	// a resolution of c closes the latest, c2.
	add(7, resolved("c", "deny"))
	for _, tc := range []struct {
		seq      uint64
		ok       bool
		decision string
	}{{1, true, "allow"}, {b, false, ""}, {c1, false, ""}, {c2, true, "deny"}} {
		r, ok, err := approval.Resolution(ctx, log, "s1", tc.seq)
		if err != nil || ok != tc.ok || ok && r.Decision != tc.decision {
			t.Errorf("Resolution(seq %d) = %+v, %v, %v; want ok %v %s", tc.seq, r, ok, err, tc.ok, tc.decision)
		}
	}
	for _, seq := range []uint64{2, 99} { // a resolution; beyond the log
		if _, _, err := approval.Resolution(ctx, log, "s1", seq); !errors.Is(err, approval.ErrNotARequest) {
			t.Errorf("Resolution(seq %d): %v, want ErrNotARequest", seq, err)
		}
	}
}

// BenchmarkOfferToResolved measures, through one SQLite file shared by two
// handles, the time from a web UI's OfferAnswer to the asking process's
// permission.resolved being durable, with the relay's default interval,
// the answer given at a random moment after the ask. It reports the p50
// and p99 in ms.
func BenchmarkOfferToResolved(b *testing.B) {
	e := newRelayEnv(b)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go approval.Relay(ctx, e.asker, e.asker, e.b, "s1", &approval.RelayOptions{Logger: slog.New(slog.DiscardHandler)})
	lat := make([]time.Duration, 0, b.N)
	offers := make([]time.Duration, 0, b.N) // of lat, the OfferAnswer call
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := "tc_" + time.Now().Format("150405.000000000")
		seq, got := e.ask(relayQuestion("s1", id, risk.Execute, time.Minute))
		// A person answers at any moment of the relay's interval, not
		// right after the ask (which starts its ticker).
		b.StopTimer()
		time.Sleep(time.Duration(rand.Int64N(int64(2 * approval.DefaultRelayInterval))))
		b.StartTimer()
		start := time.Now()
		e.offer(eventlog.Answer{SessionID: "s1", ToolCallID: id, Option: executor.OptionAllowOnce, RequestSeq: seq})
		offers = append(offers, time.Since(start))
		<-got // permission.resolved is appended (durable) before got is sent
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[min(len(d)-1, int(float64(len(d))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.99), "p99-ms")
	b.ReportMetric(pct(offers, 0.99), "offer-p99-ms")
}
