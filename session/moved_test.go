package session_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tools"
)

// TestResumeOldLogBindsGrantsToSessionCwd: a log written before cwd was
// recorded with each grant (turn.started {}, policy.changed and
// permission.resolved without cwd) is still read, and its grants are taken
// to be made in session.started's cwd: restored there, not elsewhere.
func TestResumeOldLogBindsGrantsToSessionCwd(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	a, _ := filepath.EvalSymlinks(t.TempDir())
	b, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := filepath.EvalSymlinks(t.TempDir())
	store, err := sqlitestore.Open(ctx, filepath.Join(data, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	rule := json.RawMessage(`{"command":"go env","decision":"allow","id":"shell-go-env","level":"session","tool":"shell"}`)
	for _, p := range []event.Payload{
		event.SessionStartedPayload{Cwd: a, Mode: "default", Model: "script"},
		event.TurnStartedPayload{},
		event.UserMessagePayload{Content: "old"},
		event.ModelToolCallRequestedPayload{ToolCallID: "tc_1", Tool: "write_file", Args: json.RawMessage(`{"content":"x","path":"n.txt"}`)},
		event.PermissionRequestedPayload{ToolCallID: "tc_1", Tool: "write_file", Args: json.RawMessage(`{"content":"x","path":"n.txt"}`), RiskAtDecision: 2, SourcedFrom: "default", SuggestedDecision: "ask", Reason: "writes a file", Options: []string{"allow_once", "deny"}},
		event.PermissionResolvedPayload{ToolCallID: "tc_1", Decision: "allow", Reason: "user approved (allow_once)", Actor: event.ActorUser, RiskAtDecision: 2, SourcedFrom: "default", Option: "allow_once"},
		event.PolicyChangedPayload{Level: "session", Op: "add", Rule: rule},
		event.TurnCompletedPayload{StopReason: event.StopFinal},
	} {
		d, err := event.NewDraft("old-1", "turn-1", now, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Append(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := script.Parse([]byte(`{"text":"ok"}`))
	cfg := session.Config{Log: store, Model: m, Router: tools.NewRouter()}
	for _, tc := range []struct {
		dir       string
		moved     bool
		sessRules int
	}{{b, true, 0}, {a, false, 1}} {
		rules, err := policy.Open(policy.Options{Cwd: tc.dir, ConfigHome: filepath.Join(home, ".config"), Home: home})
		if err != nil {
			t.Fatal(err)
		}
		s, err := session.Resume(ctx, cfg, "old-1", session.Info{Cwd: tc.dir, Home: home, Mode: permission.ModeDefault, Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		s.Close() // each resume is a process of its own
		mv := s.Moved()
		if (mv != nil) != tc.moved {
			t.Fatalf("resumed in %s: Moved() = %+v, want moved=%v", tc.dir, mv, tc.moved)
		}
		if mv != nil && (mv.From != a || mv.Rules != 1 || mv.Approvals != 1) {
			t.Fatalf("Moved() = %+v, want from %s with 1 rule and 1 approval left behind", mv, a)
		}
		if n := len(rules.Entries(permission.LevelSession)); n != tc.sessRules {
			t.Fatalf("resumed in %s: %d session rules restored, want %d", tc.dir, n, tc.sessRules)
		}
	}
}
