package executor_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
)

// batching is the fixture's recorder as a BatchAppender: each AppendBatch
// is one AppendBatch of the store, and what each commit held is kept.
type batching struct {
	*recorder
	commits *[][]event.Type
	during  func() // called inside each AppendBatch, before it returns
}

func (b batching) Append(ctx context.Context, d event.Draft) (event.Event, error) {
	e, err := b.recorder.Append(ctx, d)
	if err == nil {
		*b.commits = append(*b.commits, []event.Type{e.Type})
	}
	return e, err
}

func (b batching) AppendBatch(ctx context.Context, ds []event.Draft) ([]event.Event, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	es, err := b.store.AppendBatch(ctx, ds)
	if err != nil {
		return nil, err
	}
	var types []event.Type
	for _, e := range es {
		types = append(types, e.Type)
	}
	b.types = append(b.types, types...)
	*b.commits = append(*b.commits, types)
	if b.during != nil {
		b.during()
	}
	return es, nil
}

// TestDecisionAndStartShareACommit: with a log that batches, what the
// executor records between a decision and the tool's start (the
// permission.resolved, the rule an answer made, the tool.started) is one
// commit, made before the tool runs (the fixture's tools check that
// tool.started is durable when they run); a denial and a cancelled turn
// record no tool.started in it.
func TestDecisionAndStartShareACommit(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name   string
		answer string
		call   executor.Call
		ctx    context.Context
		want   string // the commits, in order
	}{
		{"allowed by policy", executor.OptionAllowOnce, call("read_file", `{"path":"README.md"}`), context.Background(),
			"[permission.resolved tool.started] [tool.completed]"},
		{"asked, allowed for the session", executor.OptionAllowSession, call("shell", `{"command":"npm test"}`), context.Background(),
			"[permission.requested] [permission.resolved policy.changed tool.started] [tool.completed]"},
		{"asked, denied", executor.OptionDeny, call("shell", `{"command":"npm test"}`), context.Background(),
			"[permission.requested] [permission.resolved]"},
		{"allowed, the turn cancelled", executor.OptionAllowOnce, call("read_file", `{"path":"README.md"}`), cancelled,
			"[permission.resolved] [tool.failed]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, answer(c.answer), nil)
			f.sess.Rules = &fakeRules{}
			var commits [][]event.Type
			x := executor.New(f.router, batching{f.rec, &commits, nil}, f.arts, answer(c.answer), f.opts)
			if _, err := x.Execute(c.ctx, f.sess, c.call); err != nil && c.ctx.Err() == nil {
				t.Fatal(err)
			}
			got := ""
			for i, cm := range commits {
				if i > 0 {
					got += " "
				}
				got += fmt.Sprint(cm)
			}
			if got != c.want {
				t.Fatalf("commits %s, want %s", got, c.want)
			}
			if n := f.ran["shell"] + f.ran["read_file"]; slices.Contains(f.rec.seen(), event.ToolStarted) != (n == 1) {
				t.Fatalf("tool.started recorded %v, tool ran %d times", f.rec.seen(), n)
			}
		})
	}
}

// TestCancelledDuringTheGateCommitDoesNotRun: a turn cancelled while the
// decision and tool.started are being made durable does not run the tool:
// tool.failed follows.
func TestCancelledDuringTheGateCommitDoesNotRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, answer(executor.OptionAllowOnce), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var commits [][]event.Type
	x := executor.New(f.router, batching{f.rec, &commits, cancel}, f.arts, nil, f.opts)
	out, _ := x.Execute(ctx, f.sess, call("read_file", `{"path":"README.md"}`))
	if f.ran["read_file"] != 0 || out.Status != executor.Failed {
		t.Fatalf("the tool ran %d times after the turn was cancelled (status %v)", f.ran["read_file"], out.Status)
	}
	if got := fmt.Sprint(commits); got != "[[permission.resolved tool.started] [tool.failed]]" {
		t.Fatalf("commits %s", got)
	}
}
