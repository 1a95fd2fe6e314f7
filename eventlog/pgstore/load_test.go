package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
	"github.com/custom-agent/custom-agent/tool"
)

type noopTool struct{ info permission.ToolInfo }

func (n noopTool) Info() permission.ToolInfo { return n.info }
func (noopTool) Run(context.Context, tool.Call, tool.Output) (tool.Result, error) {
	return tool.Result{}, nil
}

// TestLoad: 100 concurrent sessions × 100 tool calls each, through the
// executor with a no-op tool that is allowed without asking (read_file in
// the working directory), on each store. Every call's three events
// (permission.resolved, tool.started, tool.completed) are stored once, in
// the order of the calls, each session's chain verifies, and no goroutine
// is left behind once the store is closed. The figures are logged (go
// test -v -run TestLoad).
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("30,000 durable events per store; skipped with -short")
	}
	const sessions, calls = 100, 100
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var url string
			if name == "postgres" {
				url = pgtest.Shared(t).CreateDB(t) // the server's own goroutines start before the count
			}
			before := runtime.NumGoroutine()
			var s eventlog.Store
			var err error
			switch name {
			case "sqlite":
				s, err = sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "events.db"), nil)
			case "postgres":
				s, err = pgstore.Open(ctx, url, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			// A follower too, so that the PostgreSQL store's listener runs
			// and must stop with the store.
			sub := s.Subscribe("")
			defer sub.Close()
			arts, err := artifact.Open(filepath.Join(t.TempDir(), "artifacts"))
			if err != nil {
				t.Fatal(err)
			}
			info, _ := permission.Builtin("read_file")
			router := tool.NewRouter()
			router.Register(noopTool{info})
			x := executor.New(router, s, arts, nil, nil)
			cwd := t.TempDir()
			var wg sync.WaitGroup
			errs := make(chan error, sessions)
			start := time.Now()
			for i := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sess := &executor.Session{ID: fmt.Sprintf("load-%03d", i), TurnID: "t", Cwd: cwd, Home: "/home/u"}
					for j := range calls {
						c := executor.Call{ID: fmt.Sprintf("tc-%03d", j), Tool: "read_file", Args: json.RawMessage(`{"path":"README.md"}`)}
						out, err := x.Execute(ctx, sess, c)
						if err != nil || out.Status != executor.Completed {
							errs <- fmt.Errorf("session %s call %d: %v %v", sess.ID, j, out.Status, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			want := []event.Type{event.PermissionResolved, event.ToolStarted, event.ToolCompleted}
			total := 0
			for i := range sessions {
				id := fmt.Sprintf("load-%03d", i)
				n := 0
				for e, err := range s.Read(ctx, id, 1) {
					if err != nil {
						t.Fatal(err)
					}
					if e.Seq != uint64(n+1) {
						t.Fatalf("%s: position %d holds seq %d", id, n+1, e.Seq)
					}
					if e.Type != want[n%3] {
						t.Fatalf("%s seq %d is %s, want %s", id, e.Seq, e.Type, want[n%3])
					}
					var p struct {
						ToolCallID string `json:"toolCallId"`
					}
					if err := json.Unmarshal(e.Payload, &p); err != nil || p.ToolCallID != fmt.Sprintf("tc-%03d", n/3) {
						t.Fatalf("%s seq %d belongs to %q, want tc-%03d (lost, doubled or reordered)", id, e.Seq, p.ToolCallID, n/3)
					}
					n++
				}
				if n != 3*calls {
					t.Fatalf("%s: %d events, want %d", id, n, 3*calls)
				}
				if err := s.Verify(ctx, id); err != nil {
					t.Fatal(err)
				}
				total += n
			}
			var commits uint64
			switch s := s.(type) {
			case *sqlitestore.Store:
				commits = s.Stats().Commits
			case *pgstore.Store:
				commits = s.Stats().Commits
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d sessions × %d calls = %d events in %v: %.0f calls/s, %.0f events/s, %d commits (%.1f events/commit)",
				name, sessions, calls, total, elapsed.Round(time.Millisecond), float64(sessions*calls)/elapsed.Seconds(),
				float64(total)/elapsed.Seconds(), commits, float64(total)/float64(max(commits, 1)))
			// No goroutine left behind: back to the count before, once
			// exiting ones are gone.
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before {
				if time.Now().After(deadline) {
					buf := make([]byte, 1<<20)
					t.Fatalf("%d goroutines before, %d after closing the store:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
