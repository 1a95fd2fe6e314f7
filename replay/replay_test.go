package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/replay"
)

// sliceLog is a log whose Verify passes whatever it holds: a session
// edited after it was verified (or still being written).
type sliceLog []event.Event

func (l sliceLog) Read(_ context.Context, _ string, from uint64) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		for _, e := range l {
			if e.Seq >= from && !yield(e, nil) {
				return
			}
		}
	}
}

func (sliceLog) Verify(context.Context, string) error { return nil }

func seal(t *testing.T, ps ...event.Payload) sliceLog {
	t.Helper()
	var out sliceLog
	prev := event.GenesisHash
	for i, p := range ps {
		d, err := event.NewDraft("s", "turn-1", time.Date(2026, 12, 1, 9, 0, i, 0, time.UTC), p)
		if err != nil {
			t.Fatal(err)
		}
		e, err := event.Seal(d, uint64(i+1), prev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
		prev = e.Hash
	}
	return out
}

// TestReplayChecksWhatItReads: the events a replay decides from are
// checked as they are read, beyond Verify: an event edited after the
// check is an error naming its seq, and nothing is decided.
func TestReplayChecksWhatItReads(t *testing.T) {
	log := seal(t,
		event.SessionStartedPayload{Cwd: "/p", Mode: "default", Model: "m"},
		event.TurnStartedPayload{},
		event.UserMessagePayload{Content: "go"},
	)
	if _, err := replay.Replay(context.Background(), log, "s", replay.Options{}); err != nil {
		t.Fatalf("intact: %v", err)
	}
	log[2].Payload = json.RawMessage(`{"content":"something else"}`)
	res, err := replay.Replay(context.Background(), log, "s", replay.Options{})
	var ce *eventlog.ChainError
	if !errors.Is(err, replay.ErrChain) || !errors.As(err, &ce) || ce.Seq != 3 || !strings.Contains(err.Error(), "first bad seq 3") || res != nil {
		t.Fatalf("edited: %v, %v", res, err)
	}
}
