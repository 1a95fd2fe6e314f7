package web

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Web review 4, finding 3: the index drops a revoked prior approval by the
// seq of the permission.resolved that made it, whatever arguments the
// revoke shows (masked, for display); an event written before seq existed
// still drops it by tool and canonical arguments in its directory.
func TestIndexRevokesApprovalBySeq(t *testing.T) {
	mk := func(t *testing.T, seq uint64, p event.Payload) event.Event {
		d, err := event.NewDraft("s", "turn_1", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), p)
		if err != nil {
			t.Fatal(err)
		}
		return event.Event{V: event.Version, Seq: seq, SessionID: "s", Type: d.Type, Payload: d.Payload}
	}
	approve := func(t *testing.T, s *Session, seq uint64, id, args string) {
		s.apply(mk(t, seq, event.PermissionRequestedPayload{ToolCallID: id, Tool: "shell", Args: json.RawMessage(args), RiskAtDecision: risk.Execute, Reason: "asked", SourcedFrom: "default", SuggestedDecision: "ask", Options: []string{"allow_once", "deny"}}))
		s.apply(mk(t, seq+1, event.PermissionResolvedPayload{ToolCallID: id, Decision: "allow", Actor: event.ActorUser, RiskAtDecision: risk.Execute, Reason: "allowed", SourcedFrom: "default", Option: "allow_once", Cwd: "/w"}))
	}
	revoke := func(t *testing.T, s *Session, seq uint64, rule string) {
		s.apply(mk(t, seq, event.PolicyChangedPayload{Level: "session", Op: event.PolicyOpRevokeApproval, Cwd: "/w", Rule: json.RawMessage(rule)}))
	}
	for _, tc := range []struct {
		name, rule string
		left       []uint64
	}{
		{"by seq", `{"seq":3,"tool":"shell","args":{"command":"GH_TOKEN=[REDACTED] go env"}}`, []uint64{5}},
		{"another seq, same args", `{"seq":4,"tool":"shell","args":{"command":"go env"}}`, []uint64{3, 5}},
		{"legacy: by args", `{"tool":"shell","args":{"command":"go env"}}`, []uint64{5}},
		{"legacy: by canonical args", `{"tool":"shell","args":{"command":"ls"}}`, []uint64{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Session{Outcomes: map[Outcome]int{}, Asks: map[string]*Ask{}, next: 1, Cwd: "/w"}
			approve(t, s, 2, "a", `{"command":"go env"}`)
			approve(t, s, 4, "b", `{ "command" : "ls" }`)
			revoke(t, s, 6, tc.rule)
			var left []uint64
			for _, p := range s.Priors {
				left = append(left, p.Seq)
			}
			if !slices.Equal(left, tc.left) {
				t.Errorf("left %v, want %v", left, tc.left)
			}
		})
	}
}
