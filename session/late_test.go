package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tool"
)

// The tests here prove that a deferred event reaches the turn's reader and
// the log's followers when nothing appended after it would commit it: the
// model or a tool waits for the reader to have seen an event that only the
// timer can commit (nothing else is appended while it waits). Without the
// timer the test would hang; it fails after a generous wait instead, so
// nothing depends on how fast the machine is.

// failAfter is how long a test waits for what must come before it fails.
const failAfter = 10 * time.Second

// scriptModel streams what its step func yields; step n is the n-th model
// call of the turn (from 0).
type scriptModel struct {
	mu   sync.Mutex
	n    int
	step func(ctx context.Context, n int, yield func(model.Chunk, error) bool)
}

func (*scriptModel) Name() string { return "script" }
func (m *scriptModel) Stream(ctx context.Context, _ model.Request) iter.Seq2[model.Chunk, error] {
	m.mu.Lock()
	n := m.n
	m.n++
	m.mu.Unlock()
	return func(yield func(model.Chunk, error) bool) { m.step(ctx, n, yield) }
}

// askProbe yields a call of probe and the end of the response.
func askProbe(n int, yield func(model.Chunk, error) bool) {
	if yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: model.ToolCall{ID: fmt.Sprintf("call-%d", n+1), Name: "probe", Args: json.RawMessage(`{}`)}}, nil) {
		yield(model.Chunk{Kind: model.ChunkDone, StopReason: "tool_use"}, nil)
	}
}

func answer(text string, yield func(model.Chunk, error) bool) {
	if yield(model.Chunk{Kind: model.ChunkText, Text: text}, nil) {
		yield(model.Chunk{Kind: model.ChunkDone, StopReason: "end_turn"}, nil)
	}
}

// probeTool prints a line; run, when set, runs first.
type probeTool struct {
	run func(ctx context.Context) error
}

func (probeTool) Info() permission.ToolInfo {
	return permission.ToolInfo{Name: "probe", Risk: risk.Read, Schema: `{"type":"object"}`}
}

func (p probeTool) Run(ctx context.Context, c tool.Call, out tool.Output) (tool.Result, error) {
	if p.run != nil {
		if err := p.run(ctx); err != nil {
			return tool.Result{}, err
		}
	}
	_, _ = io.WriteString(out.Stdout, "output of "+c.ID+"\n")
	return tool.Result{}, nil
}

// signal is closed once, when an event of a type is seen.
type signal struct {
	once sync.Once
	ch   chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }
func (s *signal) fire()  { s.once.Do(func() { close(s.ch) }) }

// wait waits for s, or for ctx, or fails the test after failAfter; it
// reports whether s came. It may be called on any goroutine (t.Error).
func (s *signal) wait(ctx context.Context, t *testing.T, what string) bool {
	select {
	case <-s.ch:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(failAfter):
		t.Errorf("%s did not come within %v: nothing committed the deferred events", what, failAfter)
		return false
	}
}

type lateRig struct {
	store *sqlitestore.Store
	s     *session.Session
}

func newLateRig(t *testing.T, m model.Gateway, tl tool.Tool) *lateRig {
	t.Helper()
	dir := t.TempDir()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	arts, err := artifact.Open(filepath.Join(dir, "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	router := tool.NewRouter()
	if tl != nil {
		router.Register(tl)
	}
	s := session.New(session.Config{Log: store, Model: m, Router: router, Artifacts: arts},
		session.Info{Cwd: dir, Home: os.TempDir(), Mode: permission.ModeDefault})
	return &lateRig{store: store, s: s}
}

// checkLog fails unless the log verifies and holds exactly the events
// seen, byte for byte, in seq order, ending with turn.completed of reason
// stop.
func (r *lateRig) checkLog(t *testing.T, seen []event.Event, stop string) {
	t.Helper()
	var stored []event.Event
	for e, err := range r.store.Read(context.Background(), r.s.ID(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, e)
	}
	if len(stored) != len(seen) {
		t.Fatalf("the reader saw %d events, the log holds %d", len(seen), len(stored))
	}
	for i, e := range seen {
		if e.Seq != uint64(i+1) || e.Hash != stored[i].Hash || string(e.Payload) != string(stored[i].Payload) {
			t.Fatalf("event %d the reader saw (seq %d, %s) is not the log's seq %d (%s)", i, e.Seq, e.Type, stored[i].Seq, stored[i].Type)
		}
	}
	last := stored[len(stored)-1]
	if last.Type != event.TurnCompleted {
		t.Fatalf("the log ends with %s, want turn.completed", last.Type)
	}
	p, _ := last.Decode()
	if got := p.(*event.TurnCompletedPayload).StopReason; got != stop {
		t.Fatalf("turn.completed stopReason %q, want %q", got, stop)
	}
	if err := r.store.Verify(context.Background(), r.s.ID()); err != nil {
		t.Fatal(err)
	}
}

// TestToolCompletedShownWithoutNextEvent: the model's second call waits
// until the turn's reader and a follower of the log have both seen the
// first call's tool.completed. While it waits nothing is appended, so only
// the timer can commit it.
func TestToolCompletedShownWithoutNextEvent(t *testing.T) {
	t.Parallel()
	byReader, byFollower := newSignal(), newSignal()
	m := &scriptModel{}
	r := newLateRig(t, m, probeTool{})
	m.step = func(ctx context.Context, n int, yield func(model.Chunk, error) bool) {
		if n == 0 {
			askProbe(n, yield)
			return
		}
		if byReader.wait(ctx, t, "the reader's tool.completed") && byFollower.wait(ctx, t, "the follower's tool.completed") {
			answer("seen", yield)
		}
	}
	fctx, stopFollow := context.WithCancel(context.Background())
	followed := make(chan error, 1)
	go func() {
		for e, err := range eventlog.Follow(fctx, r.store, r.s.ID(), 1, time.Hour) {
			if err != nil {
				followed <- err
				return
			}
			if e.Type == event.ToolCompleted {
				byFollower.fire()
			}
		}
		followed <- nil
	}()
	var seen []event.Event
	for e, err := range r.s.RunTurn(context.Background(), "probe once") {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e)
		if e.Type == event.ToolCompleted {
			byReader.fire()
		}
	}
	stopFollow()
	if err := <-followed; err != nil {
		t.Fatal(err)
	}
	r.checkLog(t, seen, event.StopFinal)
}

// TestTimerInterleavesWithTurnCommits: under -race, a model streams
// deltas in bursts of three, each burst waiting until the reader has seen
// its last delta (which only the timer can show), around tool calls whose
// tool.started only the timer can show (the tool waits for it), while the
// turn's goroutine commits the calls' permission.resolved itself. The
// reader sees every event once, in seq order, as the log holds it, and the
// log verifies.
func TestTimerInterleavesWithTurnCommits(t *testing.T) {
	t.Parallel()
	const steps, deltas = 3, 12
	var (
		mu      sync.Mutex
		shown   = map[string]*signal{} // by delta text or tool call id
		started = 0
	)
	sig := func(key string) *signal {
		mu.Lock()
		defer mu.Unlock()
		if shown[key] == nil {
			shown[key] = newSignal()
		}
		return shown[key]
	}
	m := &scriptModel{}
	tl := probeTool{run: func(ctx context.Context) error {
		mu.Lock()
		started++
		id := fmt.Sprintf("call-%d", started)
		mu.Unlock()
		sig("started "+id).wait(ctx, t, "tool.started of "+id)
		return nil
	}}
	r := newLateRig(t, m, tl)
	m.step = func(ctx context.Context, n int, yield func(model.Chunk, error) bool) {
		for i := range deltas {
			// Over 512 bytes, so each chunk is a model.delta of its own.
			text := fmt.Sprintf("step %d delta %d %s|", n, i, strings.Repeat("x", 512))
			if !yield(model.Chunk{Kind: model.ChunkText, Text: text}, nil) {
				return
			}
			if i%3 == 2 && !sig(text).wait(ctx, t, "delta "+text[:20]) {
				return
			}
		}
		if n < steps {
			askProbe(n, yield)
			return
		}
		yield(model.Chunk{Kind: model.ChunkDone, StopReason: "end_turn"}, nil)
	}
	var seen []event.Event
	for e, err := range r.s.RunTurn(context.Background(), "stream slowly") {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e)
		p, err := e.Decode()
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *event.ModelDeltaPayload:
			sig(p.Text).fire()
		case *event.ToolStartedPayload:
			sig("started " + p.ToolCallID).fire()
		}
	}
	r.checkLog(t, seen, event.StopFinal)
	n := 0
	for _, e := range seen {
		if e.Type == event.ModelDelta {
			n++
		}
	}
	if want := (steps + 1) * deltas; n != want {
		t.Fatalf("the reader saw %d model.delta, want %d", n, want)
	}
}

// TestReaderStopsUnderTimer: a reader that stops reading at an event the
// timer shows it (the model is waiting) cancels the turn at once, and the
// turn is still closed in the log, cancelled.
func TestReaderStopsUnderTimer(t *testing.T) {
	t.Parallel()
	m := &scriptModel{}
	r := newLateRig(t, m, probeTool{})
	m.step = func(ctx context.Context, n int, yield func(model.Chunk, error) bool) {
		if n == 0 {
			askProbe(n, yield)
			return
		}
		select { // until the turn is cancelled
		case <-ctx.Done():
			yield(model.Chunk{}, ctx.Err())
		case <-time.After(failAfter):
			t.Errorf("the turn was not cancelled within %v of its reader stopping", failAfter)
		}
	}
	var seen []event.Event
	for e, err := range r.s.RunTurn(context.Background(), "probe, then stop reading") {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e)
		if e.Type == event.ToolCompleted {
			break
		}
	}
	var stored []event.Event
	for e, err := range r.store.Read(context.Background(), r.s.ID(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, e)
	}
	r.checkLog(t, stored, event.StopCancelled)
	for i, e := range seen {
		if e.Hash != stored[i].Hash {
			t.Fatalf("the reader saw seq %d (%s), the log holds %s there", e.Seq, e.Type, stored[i].Type)
		}
	}
}

// TestTimerCommitsAfterCancel: a tool cancels the turn and then waits for
// the reader to have seen its tool.started; the timer still commits it,
// with the cancelled turn's events kept, not lost.
func TestTimerCommitsAfterCancel(t *testing.T) {
	t.Parallel()
	shown := newSignal()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &scriptModel{step: func(_ context.Context, n int, yield func(model.Chunk, error) bool) {
		if n == 0 {
			askProbe(n, yield)
			return
		}
		answer("unexpected", yield)
	}}
	r := newLateRig(t, m, probeTool{run: func(context.Context) error {
		cancel()
		shown.wait(context.Background(), t, "tool.started after the cancel")
		return nil
	}})
	var seen []event.Event
	for e, err := range r.s.RunTurn(ctx, "probe and cancel") {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e)
		if e.Type == event.ToolStarted {
			shown.fire()
		}
	}
	r.checkLog(t, seen, event.StopCancelled)
}

// TestReaderPanicUnderTimer: a panic of the reader's loop body while the
// timer shows it an event comes out of RunTurn's loop on the reader's own
// goroutine, as a panic in a loop body does, after the turn was cancelled
// and closed in the log.
func TestReaderPanicUnderTimer(t *testing.T) {
	t.Parallel()
	m := &scriptModel{}
	r := newLateRig(t, m, probeTool{})
	m.step = func(ctx context.Context, n int, yield func(model.Chunk, error) bool) {
		if n == 0 {
			askProbe(n, yield)
			return
		}
		select {
		case <-ctx.Done():
			yield(model.Chunk{}, ctx.Err())
		case <-time.After(failAfter):
			t.Errorf("the turn was not cancelled within %v of its reader panicking", failAfter)
		}
	}
	boom := errors.New("the reader's loop body panicked")
	got := func() (p any) {
		defer func() { p = recover() }()
		for e, err := range r.s.RunTurn(context.Background(), "probe, then panic") {
			if err != nil {
				t.Error(err)
				return nil
			}
			if e.Type == event.ToolCompleted {
				panic(boom)
			}
		}
		return nil
	}()
	if got != boom {
		t.Fatalf("RunTurn's loop ended with %v, want the reader's panic", got)
	}
	var stored []event.Event
	for e, err := range r.store.Read(context.Background(), r.s.ID(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, e)
	}
	r.checkLog(t, stored, event.StopCancelled)
}
