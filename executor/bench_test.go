package executor_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/memwatch"
	"github.com/custom-agent/custom-agent/tool"
)

// memLog is an Appender that keeps nothing: the executor's own overhead.
type memLog struct{ seq atomic.Uint64 }

func (m *memLog) Append(_ context.Context, d event.Draft) (event.Event, error) {
	p, err := event.Prepare(d)
	if err != nil {
		return event.Event{}, err
	}
	return p.Seal(m.seq.Add(1), event.GenesisHash), nil
}

func noopRouter() *tool.Router {
	r := tool.NewRouter()
	info, _ := permission.Builtin("read_file")
	r.Register(&fakeTool{info: info, fn: func(context.Context, tool.Call, tool.Output) (tool.Result, error) {
		return tool.Result{}, nil
	}})
	return r
}

// BenchmarkExecute measures the executor around a no-op tool whose call is
// allowed without asking (read_file in cwd): resolve, validate, symlink
// resolution, Check, permission.resolved, tool.started, tool.completed.
func BenchmarkExecute(b *testing.B) {
	sess := &executor.Session{ID: "s", TurnID: "t", Cwd: b.TempDir(), Home: "/home/u"}
	c := executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"README.md"}`)}
	run := func(b *testing.B, log executor.Appender) {
		arts, _ := artifact.Open(filepath.Join(b.TempDir(), "artifacts"))
		x := executor.New(noopRouter(), log, arts, nil, nil)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			out, err := x.Execute(context.Background(), sess, c)
			if err != nil || out.Status != executor.Completed {
				b.Fatal(out, err)
			}
		}
	}
	b.Run("log=memory", func(b *testing.B) { run(b, &memLog{}) })
	b.Run("log=sqlite", func(b *testing.B) {
		s, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "events.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		run(b, s)
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/3, "µs/append")
	})
}

// BenchmarkOutput1GiB measures the heap while a tool prints 1 GiB: output
// streams to the artifact store (all of it: the default cap is 2 GiB) and
// memory must stay flat.
func BenchmarkOutput1GiB(b *testing.B) {
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = 'x'
	}
	r := tool.NewRouter()
	info, _ := permission.Builtin("read_file")
	r.Register(&fakeTool{info: info, fn: func(_ context.Context, _ tool.Call, out tool.Output) (tool.Result, error) {
		for written := 0; written < 1<<30; written += len(chunk) {
			if _, err := out.Stdout.Write(chunk); err != nil {
				return tool.Result{}, err
			}
		}
		return tool.Result{}, nil
	}})
	arts, _ := artifact.Open(filepath.Join(b.TempDir(), "artifacts"))
	x := executor.New(r, &memLog{}, arts, nil, nil)
	sess := &executor.Session{ID: "s", TurnID: "t", Cwd: b.TempDir(), Home: "/home/u"}
	for range b.N {
		stop := memwatch.Start(5 * time.Millisecond)
		out, err := x.Execute(context.Background(), sess, executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"big"}`)})
		growth := stop()
		if err != nil || out.Status != executor.Completed {
			b.Fatal(out, err)
		}
		b.ReportMetric(float64(growth)/(1<<20), "peak-heap-growth-MiB")
	}
	b.SetBytes(1 << 30)
}
