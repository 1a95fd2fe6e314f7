package session_test

import (
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tools"
)

// brokenModel streams some text, then fails the way a provider does when
// its stream is malformed or cut.
type brokenModel struct{}

func (brokenModel) Name() string { return "broken" }
func (brokenModel) Stream(context.Context, model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if !yield(model.Chunk{Kind: model.ChunkText, Text: "half of an ans"}, nil) {
			return
		}
		yield(model.Chunk{}, errors.New("openai: stream ended before the model finished: malformed model stream"))
	}
}

// TestMalformedStreamLosesNothing: text streamed before the stream broke is
// recorded, and the turn ends with stopReason error and the reason.
func TestMalformedStreamLosesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	arts, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	s := session.New(session.Config{Log: store, Model: brokenModel{}, Router: tools.NewRouter(), Artifacts: arts},
		session.Info{Cwd: dir, Home: os.TempDir(), Mode: permission.ModeDefault})
	var types []event.Type
	var last event.Event
	for e, err := range s.RunTurn(context.Background(), "hi") {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, e.Type)
		last = e
	}
	p, _ := last.Decode()
	done, ok := p.(*event.TurnCompletedPayload)
	if !ok || done.StopReason != event.StopError || done.Error == "" {
		t.Fatalf("last event %s %+v", last.Type, p)
	}
	var text string
	for e, err := range store.Read(context.Background(), s.ID(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == event.ModelDelta {
			p, _ := e.Decode()
			text += p.(*event.ModelDeltaPayload).Text
		}
	}
	if text != "half of an ans" {
		t.Fatalf("streamed text lost: %q (events %v)", text, types)
	}
}

// TestConsumerThatStopsStillClosesTheTurn: a reader that stops after the
// first event cancels the turn, and the log still gets turn.completed.
func TestConsumerThatStopsStillClosesTheTurn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	arts, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	s := session.New(session.Config{Log: store, Model: brokenModel{}, Router: tools.NewRouter(), Artifacts: arts},
		session.Info{Cwd: dir, Home: os.TempDir(), Mode: permission.ModeDefault})
	for range s.RunTurn(context.Background(), "hi") {
		break
	}
	var last event.Type
	for e, err := range store.Read(context.Background(), s.ID(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		last = e.Type
	}
	if last != event.TurnCompleted {
		t.Fatalf("the turn was left open: last event %s", last)
	}
	if err := store.Verify(context.Background(), s.ID()); err != nil {
		t.Fatal(err)
	}
}
