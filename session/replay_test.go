package session_test

import (
	"context"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/replay"
)

// checkReplay decides every recorded call of the session again, under its
// recorded policy on today's engine (package replay), and fails unless
// each comes out as recorded: every golden flow pins that the log alone
// re-derives its decisions.
func checkReplay(t *testing.T, log replay.Log, id string) {
	t.Helper()
	ctx := context.Background()
	res, err := replay.Replay(ctx, log, id, replay.Options{})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	resolved := 0
	for e, err := range log.Read(ctx, id, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == event.PermissionResolved {
			resolved++
		}
	}
	if len(res.Calls) != resolved {
		t.Errorf("replay decided %d calls; the log resolves %d", len(res.Calls), resolved)
	}
	for _, c := range res.Calls {
		switch {
		case c.NotReplayable != "":
			t.Errorf("replay: seq %d %s (%s): %s", c.Seq, c.ToolCallID, c.Tool, c.NotReplayable)
		case c.Differs:
			t.Errorf("replay: seq %d %s (%s): recorded %+v, today %+v: %s", c.Seq, c.ToolCallID, c.Tool, c.Recorded, c.Today, c.Change)
		}
	}
}
