package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/permission/risk"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func requested(id string, level risk.Level, source string) event.Payload {
	var findings []risk.Finding
	if level == risk.Destructive {
		findings = []risk.Finding{{Risk: risk.Destructive, Arg: "command", Span: risk.Span{Start: 0, End: 8}, Text: "rm -rf /", Why: "deletes everything"}}
	}
	return event.PermissionRequestedPayload{
		ToolCallID: id, Tool: "shell", Args: json.RawMessage(`{"command":"x"}`), RiskAtDecision: level,
		SourcedFrom: source, SuggestedDecision: "ask", Reason: "asks", Findings: findings,
		Options: []string{"allow_once", "deny"}, TimeoutMs: 30000,
	}
}

func resolved(id string, decision string) event.Payload {
	return event.PermissionResolvedPayload{
		ToolCallID: id, Decision: decision, Reason: "user said so", Actor: event.ActorUser,
		RiskAtDecision: risk.Execute, SourcedFrom: "default",
	}
}

func TestRecoverPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	log, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	appendAll := func(session, turn string, ps ...event.Payload) {
		t.Helper()
		for _, p := range ps {
			d, err := event.NewDraft(session, turn, t0, p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := log.Append(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	// s1: tc_1 answered; tc_2 pending; tc_1 reused later and pending again.
	appendAll("s1", "t1", event.TurnStartedPayload{}, requested("tc_1", risk.Execute, "default"), resolved("tc_1", "allow"))
	appendAll("s1", "t2", requested("tc_2", risk.Destructive, "override"), requested("tc_1", risk.Network, "prior"))
	// s2: nothing pending. s3: one pending, in turn t9.
	appendAll("s2", "t1", requested("tc_1", risk.Write, "default"), resolved("tc_1", "deny"))
	appendAll("s3", "t9", requested("tc_7", risk.Credential, "default"))
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}

	// The process restarts.
	log, err = sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	now := t0.Add(time.Hour)
	n, err := approval.RecoverPending(ctx, log, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("RecoverPending closed %d asks, want 3", n)
	}

	type closing struct {
		Session, Turn string
		TS            time.Time
		Payload       event.PermissionResolvedPayload
	}
	tail := func(session string, from uint64) []closing {
		var out []closing
		for e, err := range log.Read(ctx, session, from) {
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.Decode()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, closing{e.SessionID, e.TurnID, e.TS.UTC(), *p.(*event.PermissionResolvedPayload)})
		}
		return out
	}
	deny := func(id string, level risk.Level, source string, f []risk.Finding) event.PermissionResolvedPayload {
		return event.PermissionResolvedPayload{ToolCallID: id, Decision: "deny", Reason: "process restarted",
			Actor: event.ActorSystem, RiskAtDecision: level, SourcedFrom: source, Findings: f}
	}
	destructive := requested("tc_2", risk.Destructive, "").(event.PermissionRequestedPayload).Findings
	want := map[string][]closing{
		"s1": {
			{"s1", "t2", now, deny("tc_2", risk.Destructive, "override", destructive)},
			{"s1", "t2", now, deny("tc_1", risk.Network, "prior", nil)},
		},
		"s2": nil,
		"s3": {{"s3", "t9", now, deny("tc_7", risk.Credential, "default", nil)}},
	}
	from := map[string]uint64{"s1": 6, "s2": 3, "s3": 2}
	for s, w := range want {
		if diff := cmp.Diff(w, tail(s, from[s])); diff != "" {
			t.Errorf("%s: appended events (-want +got):\n%s", s, diff)
		}
		if err := log.Verify(ctx, s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}

	// Running it again finds nothing open.
	if n, err := approval.RecoverPending(ctx, log, now); n != 0 || err != nil {
		t.Errorf("second RecoverPending = %d, %v; want 0, nil", n, err)
	}
}

func TestRecoverPendingEmptyLog(t *testing.T) {
	t.Parallel()
	log, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if n, err := approval.RecoverPending(context.Background(), log, t0); n != 0 || err != nil {
		t.Errorf("RecoverPending = %d, %v; want 0, nil", n, err)
	}
}

// failingLog is a log whose appends fail after the first.
type failingLog struct {
	approval.Log
	appends int
}

func (f *failingLog) Append(ctx context.Context, d event.Draft) (event.Event, error) {
	f.appends++
	if f.appends > 1 {
		return event.Event{}, errors.New("disk full")
	}
	return f.Log.Append(ctx, d)
}

func TestRecoverPendingAppendFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, id := range []string{"tc_1", "tc_2"} {
		d, err := event.NewDraft("s1", "t1", t0, requested(id, risk.Execute, "default"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Append(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	n, err := approval.RecoverPending(ctx, &failingLog{Log: store}, t0)
	if n != 1 || err == nil || !strings.Contains(err.Error(), "tc_2: disk full") {
		t.Errorf("RecoverPending = %d, %v; want 1 and an error naming tc_2", n, err)
	}
	// A second start-up finishes the job.
	if n, err := approval.RecoverPending(ctx, store, t0); n != 1 || err != nil {
		t.Errorf("second RecoverPending = %d, %v; want 1, nil", n, err)
	}
}
