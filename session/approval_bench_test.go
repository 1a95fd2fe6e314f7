package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tools"
)

// askedModel asks for one write_file per model step (asked by default),
// calls times, and notes when it handed each call over.
type askedModel struct {
	calls int
	mu    *sync.Mutex
	sent  map[string]time.Time
}

func (askedModel) Name() string { return "asked" }

func (m askedModel) Stream(_ context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	results := 0
	for _, msg := range req.Messages {
		if msg.Role == model.RoleTool {
			results++
		}
	}
	return func(yield func(model.Chunk, error) bool) {
		if results >= m.calls {
			if yield(model.Chunk{Kind: model.ChunkText, Text: "done"}, nil) {
				yield(model.Chunk{Kind: model.ChunkDone, StopReason: "end_turn"}, nil)
			}
			return
		}
		id := fmt.Sprintf("call-%d", results+1)
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("w-%d.txt", results+1), "content": "x\n"})
		m.mu.Lock()
		m.sent[id] = time.Now()
		m.mu.Unlock()
		if yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: model.ToolCall{ID: id, Name: "write_file", Args: args}}, nil) {
			yield(model.Chunk{Kind: model.ChunkDone, StopReason: "tool_use"}, nil)
		}
	}
}

// answerer allows every question at once and notes how long after the
// model handed the call over the question reached it.
type answerer struct {
	m    askedModel
	lats []time.Duration
}

func (a *answerer) Ask(_ context.Context, q executor.Question) (executor.Answer, error) {
	a.m.mu.Lock()
	a.lats = append(a.lats, time.Since(a.m.sent[q.ToolCallID]))
	a.m.mu.Unlock()
	return executor.Answer{Allow: true, Option: executor.OptionAllowOnce, Actor: event.ActorUser, Reason: "user approved (allow_once)"}, nil
}

// BenchmarkApprovalLatency runs turns of 20 write_file calls, each asked and
// allowed at once by the approver, against the SQLite log and artifact store
// in DIR (CUSTOM_AGENT_BENCH_DIR, default a temporary directory). ask-p50/p99
// is the time from the model handing a call over to the question reaching
// the approver: what a person waits for before a question is drawn (the
// permission.requested before it is durable). µs/call is the wall time per
// asked call.
func BenchmarkApprovalLatency(b *testing.B) {
	const calls = 20
	dir, store, arts := benchStores(b)
	m := askedModel{calls: calls, mu: &sync.Mutex{}, sent: map[string]time.Time{}}
	a := &answerer{m: m}
	b.ResetTimer()
	for i := range b.N {
		cwd := filepath.Join(dir, fmt.Sprintf("project-%d", i))
		if err := os.MkdirAll(cwd, 0o700); err != nil {
			b.Fatal(err)
		}
		s := session.New(session.Config{Log: store, Model: m, Router: tools.NewRouter(), Artifacts: arts, Approver: a},
			session.Info{Cwd: cwd, Home: os.TempDir(), Mode: permission.ModeDefault})
		n := 0
		for e, err := range s.RunTurn(context.Background(), fmt.Sprintf("turn %d", i)) {
			if err != nil {
				b.Fatal(err)
			}
			if e.Type == event.ToolCompleted {
				n++
			}
		}
		if n != calls {
			b.Fatalf("%d tool calls completed, want %d", n, calls)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*calls), "µs/call")
	slices.Sort(a.lats)
	if len(a.lats) > 0 {
		b.ReportMetric(float64(a.lats[len(a.lats)/2].Microseconds()), "ask-p50-µs")
		b.ReportMetric(float64(a.lats[len(a.lats)*99/100].Microseconds()), "ask-p99-µs")
	}
}
