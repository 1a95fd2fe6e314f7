package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tools"
)

// callsModel asks for one call per model step, calls times, then answers:
// read_file of f-1.txt, f-2.txt … or, when tool is set, that tool with no
// arguments.
type callsModel struct {
	calls int
	tool  string
}

func callsOf(tool string, n int) callsModel { return callsModel{calls: n, tool: tool} }

func (callsModel) Name() string { return "calls" }
func (m callsModel) Stream(_ context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	results := 0
	for _, msg := range req.Messages {
		if msg.Role == model.RoleTool {
			results++
		}
	}
	return func(yield func(model.Chunk, error) bool) {
		if results < m.calls {
			if !yield(model.Chunk{Kind: model.ChunkText, Text: "reading"}, nil) {
				return
			}
			name, args := m.tool, json.RawMessage(`{}`)
			if name == "" {
				name = "read_file"
				args, _ = json.Marshal(map[string]string{"path": fmt.Sprintf("f-%d.txt", results+1)})
			}
			if !yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: model.ToolCall{ID: fmt.Sprintf("call-%d", results+1), Name: name, Args: args}}, nil) {
				return
			}
			yield(model.Chunk{Kind: model.ChunkDone, StopReason: "tool_use"}, nil)
			return
		}
		if yield(model.Chunk{Kind: model.ChunkText, Text: "done"}, nil) {
			yield(model.Chunk{Kind: model.ChunkDone, StopReason: "end_turn"}, nil)
		}
	}
}

// BenchmarkTurnToolCalls runs turns of 20 read_file calls (each allowed by
// policy, each printing a small file no call printed before, so each stores
// a new artifact) against
// the SQLite log and artifact store in DIR (CUSTOM_AGENT_BENCH_DIR, default
// a temporary directory: point it at tmpfs and at a disk to compare).
// µs/call is the wall time per tool call. To count fsyncs per tool call:
//
//	go test -c -o /tmp/session.test ./session
//	strace -f -c -e trace=fsync,fdatasync /tmp/session.test -test.run='^$' -test.bench=TurnToolCalls/output=short -test.benchtime=10x
//
// and divide the count by 220 (the benchmark runs once with b.N = 1 and
// then 10 times: 11 turns × 20 calls; a few belong to opening the store).
// benchStores opens the SQLite log and the artifact store of a benchmark in
// DIR (CUSTOM_AGENT_BENCH_DIR, default a temporary directory), removed when
// the benchmark ends.
func benchStores(b *testing.B) (string, *sqlitestore.Store, *artifact.Store) {
	dir := os.Getenv("CUSTOM_AGENT_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "bench-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	arts, err := artifact.Open(filepath.Join(dir, "artifacts"))
	if err != nil {
		b.Fatal(err)
	}
	return dir, store, arts
}

func BenchmarkTurnToolCalls(b *testing.B) {
	// short: each file is a line, which its tool.completed holds whole
	// (inEvent), so no artifact is written; long: each is over the
	// preview, so each call stores an artifact (in the pack).
	for _, c := range []struct {
		name   string
		repeat int
	}{{"output=short", 1}, {"output=long", 80}} {
		b.Run(c.name, func(b *testing.B) { benchTurnToolCalls(b, c.repeat) })
	}
}

func benchTurnToolCalls(b *testing.B, repeat int) {
	const calls = 20
	dir, store, arts := benchStores(b)
	cwd := filepath.Join(dir, "project")
	if err := os.MkdirAll(cwd, 0o700); err != nil {
		b.Fatal(err)
	}
	commits0 := store.Stats().Commits
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for k := 1; k <= calls; k++ {
			line := fmt.Appendf(nil, "turn %d, file %d: a small file that read_file prints\n", i, k)
			if err := os.WriteFile(filepath.Join(cwd, fmt.Sprintf("f-%d.txt", k)), bytes.Repeat(line, repeat), 0o600); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		// A new session each time, so that context building does not
		// grow with b.N.
		s := session.New(session.Config{Log: store, Model: callsModel{calls: calls}, Router: tools.NewRouter(), Artifacts: arts},
			session.Info{Cwd: cwd, Home: os.TempDir(), Mode: permission.ModeDefault})
		n := 0
		for e, err := range s.RunTurn(context.Background(), fmt.Sprintf("turn %d", i)) {
			if err != nil {
				b.Fatal(err)
			}
			if e.Type == "tool.completed" {
				n++
			}
		}
		if n != calls {
			b.Fatalf("%d tool calls completed, want %d", n, calls)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*calls), "µs/call")
	st := store.Stats()
	b.ReportMetric(float64(st.Commits-commits0)/float64(b.N*calls), "commits/call")
}
