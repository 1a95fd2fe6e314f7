package eventlog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
)

// TestHubMissed: Missed(session) tells that session's subscribers and the
// subscribers of every session, not the others, that they must read the
// store; delivery then resumes.
func TestHubMissed(t *testing.T) {
	var h Hub
	a, b, all := h.Subscribe("a"), h.Subscribe("b"), h.Subscribe("")
	defer a.Close()
	defer b.Close()
	defer all.Close()
	h.Missed("a")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for name, s := range map[string]*Subscription{"a": a, "all": all} {
		if _, err := s.Next(ctx); !errors.Is(err, ErrMissed) {
			t.Fatalf("subscriber %s: %v, want ErrMissed", name, err)
		}
	}
	h.Publish(event.Event{SessionID: "b", Seq: 1})
	if e, err := b.Next(ctx); err != nil || e.Seq != 1 {
		t.Fatalf("subscriber b was told it missed events of a: %+v, %v", e, err)
	}
	h.Publish(event.Event{SessionID: "a", Seq: 7})
	if e, err := a.Next(ctx); err != nil || e.Seq != 7 {
		t.Fatalf("after ErrMissed, delivery did not resume: %+v, %v", e, err)
	}
	h.Missed("")
	if _, err := b.Next(ctx); !errors.Is(err, ErrMissed) {
		t.Fatalf("Missed(\"\") did not reach subscriber b: %v", err)
	}
}
