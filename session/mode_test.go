package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tools"
)

func modeStore(t *testing.T) *sqlitestore.Store {
	t.Helper()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// modeEvents lists the session's events of the given type as
// "turn=ID payload".
func modeEvents(t *testing.T, store *sqlitestore.Store, id string, typ event.Type) []string {
	t.Helper()
	var out []string
	for e, err := range store.Read(context.Background(), id, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == typ {
			out = append(out, "turn="+e.TurnID+" "+string(e.Payload))
		}
	}
	return out
}

func modeTurn(t *testing.T, s *session.Session, input string) {
	t.Helper()
	for _, err := range s.RunTurn(context.Background(), input) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestChangeModeRecordsAndResumeRestores: a mode change between turns is
// one session.mode_changed outside any turn; none when the mode is
// unchanged or unknown; the next turn and a resumed session run in it.
func TestChangeModeRecordsAndResumeRestores(t *testing.T) {
	ctx := context.Background()
	store := modeStore(t)
	cwd := t.TempDir()
	m, _ := script.Parse([]byte(`{"text":"one"}` + "\n" + `{"text":"two"}` + "\n" + `{"text":"three"}`))
	cfg := session.Config{Log: store, Model: m, Router: tools.NewRouter(), NewID: func() string { return "sess-m" }}
	s := session.New(cfg, session.Info{Cwd: cwd})

	// Before the first turn nothing is recorded: session.started says it.
	if err := s.ChangeMode(ctx, permission.ModeAcceptEdits, event.ActorUser); err != nil {
		t.Fatal(err)
	}
	modeTurn(t, s, "first")
	if got := modeEvents(t, store, "sess-m", event.ModeChanged); len(got) != 0 {
		t.Fatalf("mode_changed before the first turn: %v", got)
	}
	if got := modeEvents(t, store, "sess-m", event.SessionStarted); len(got) != 1 || !strings.Contains(got[0], `"mode":"accept-edits"`) {
		t.Fatalf("session.started = %v, want mode accept-edits", got)
	}

	if err := s.ChangeMode(ctx, permission.ModeDontAsk, event.ActorUser); err != nil {
		t.Fatal(err)
	}
	if err := s.ChangeMode(ctx, permission.ModeDontAsk, event.ActorUser); err != nil {
		t.Fatal(err)
	}
	err := s.ChangeMode(ctx, "yolo", event.ActorUser)
	if !errors.Is(err, permission.ErrUnknownMode) || !strings.Contains(err.Error(), `unknown mode "yolo" (want default, plan, accept-edits or dont-ask)`) {
		t.Fatalf("ChangeMode(yolo) = %v", err)
	}
	if s.Mode() != permission.ModeDontAsk {
		t.Fatalf("mode = %q after a refused change, want dont-ask", s.Mode())
	}
	want := []string{`turn= {"by":"user","from":"accept-edits","to":"dont-ask"}`}
	if got := modeEvents(t, store, "sess-m", event.ModeChanged); !slices.Equal(got, want) {
		t.Fatalf("mode_changed events = %v, want %v", got, want)
	}
	modeTurn(t, s, "second")
	if got := modeEvents(t, store, "sess-m", event.TurnStarted); len(got) != 2 || !strings.Contains(got[1], `"mode":"dont-ask"`) {
		t.Fatalf("turn.started = %v, want the second in dont-ask", got)
	}
	if err := s.ChangeMode(ctx, permission.ModePlan, event.ActorSystem); err != nil {
		t.Fatal(err)
	}

	// A new process resumes in the mode last changed to, whatever it was
	// started with; asked for another, it records the change.
	s.Close()
	r, err := session.Resume(ctx, cfg, "sess-m", session.Info{Cwd: cwd, Mode: permission.ModeDefault})
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode() != permission.ModePlan {
		t.Fatalf("resumed in %q, want plan", r.Mode())
	}
	if err := r.ChangeMode(ctx, permission.ModeDefault, event.ActorUser); err != nil {
		t.Fatal(err)
	}
	modeTurn(t, r, "third")
	want = append(want, `turn= {"by":"system","from":"dont-ask","to":"plan"}`, `turn= {"by":"user","from":"plan","to":"default"}`)
	if got := modeEvents(t, store, "sess-m", event.ModeChanged); !slices.Equal(got, want) {
		t.Fatalf("mode_changed events = %v, want %v", got, want)
	}
	if err := store.Verify(ctx, "sess-m"); err != nil {
		t.Fatal(err)
	}
}

// TestResumeReadsOlderModeRecords: a log written before
// session.mode_changed existed records the editor's change as policy.changed
// op set_mode (custom-agent acp); the turn's own mode otherwise.
func TestResumeReadsOlderModeRecords(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		extra []event.Payload
		want  permission.Mode
	}{
		{"turn mode", nil, permission.ModePlan},
		{"set_mode", []event.Payload{event.PolicyChangedPayload{Level: "session", Op: "set_mode", Rule: json.RawMessage(`{"mode":"default","from":"plan"}`)}}, permission.ModeDefault},
		{"unknown recorded mode ignored", []event.Payload{event.PolicyChangedPayload{Level: "session", Op: "set_mode", Rule: json.RawMessage(`{"mode":"yolo","from":"plan"}`)}}, permission.ModePlan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := modeStore(t)
			cwd := t.TempDir()
			payloads := append([]event.Payload{
				event.SessionStartedPayload{Cwd: cwd, Mode: "plan", Model: "script"},
				event.TurnStartedPayload{Cwd: cwd, Mode: "plan"},
				event.UserMessagePayload{Content: "old"},
				event.TurnCompletedPayload{StopReason: event.StopFinal},
			}, tc.extra...)
			for i, p := range payloads {
				turn := "turn-1"
				if i >= 4 {
					turn = ""
				}
				d, err := event.NewDraft("old-m", turn, now, p)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := store.Append(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			m, _ := script.Parse([]byte(`{"text":"ok"}`))
			s, err := session.Resume(ctx, session.Config{Log: store, Model: m, Router: tools.NewRouter()}, "old-m", session.Info{Cwd: cwd, Mode: permission.ModeAcceptEdits})
			if err != nil {
				t.Fatal(err)
			}
			if s.Mode() != tc.want {
				t.Fatalf("resumed in %q, want %q", s.Mode(), tc.want)
			}
		})
	}
}
