package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/replay"
	"github.com/custom-agent/custom-agent/session"
)

// checkReplay decides every recorded call of the session again, under its
// recorded policy on today's engine (package replay), and fails unless
// each comes out as recorded: every golden flow pins that the log alone
// re-derives its decisions.
func checkReplay(t *testing.T, log replay.Log, id string) {
	t.Helper()
	checkReplayExcept(t, log, id, nil)
}

// checkReplayExcept is checkReplay where the calls named in secretArgs
// held a secret in their arguments: the log masks it, so they are, and
// must be, reported not replayable.
func checkReplayExcept(t *testing.T, log replay.Log, id string, secretArgs []string) {
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
		case slices.Contains(secretArgs, c.ToolCallID):
			if c.NotReplayable == "" {
				t.Errorf("replay: seq %d %s (%s) held a secret, yet was replayed", c.Seq, c.ToolCallID, c.Tool)
			}
		case c.NotReplayable != "":
			t.Errorf("replay: seq %d %s (%s): %s", c.Seq, c.ToolCallID, c.Tool, c.NotReplayable)
		case c.Differs:
			t.Errorf("replay: seq %d %s (%s): recorded %+v, today %+v: %s", c.Seq, c.ToolCallID, c.Tool, c.Recorded, c.Today, c.Change)
		}
	}
}

// TestReplayAfterRevoke: a session rule granted by an answer, used, then
// revoked between turns (chat's /permissions revoke) takes the prior
// approval of its call with it; the replay rebuilds the same history and
// the same policy (a new snapshot), so every call, the one asked again
// after the revoke included, comes out as recorded.
func TestReplayAfterRevoke(t *testing.T) {
	dir, cwd, home, store := newLogDirs(t)
	m, err := script.Parse([]byte(`{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "go doc -short fmt.Println"}}]}
{"toolCalls": [{"id": "tc_2", "name": "shell", "args": {"command": "go doc -short fmt.Println"}}]}
{"text": "ran twice"}
{"toolCalls": [{"id": "tc_3", "name": "shell", "args": {"command": "go doc -short fmt.Println"}}]}
{"text": "asked again"}`))
	if err != nil {
		t.Fatal(err)
	}
	ans := &answers{list: []string{"allow_session", "deny"}}
	cfg := restartConfig(t, dir, store, m, ans, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	rules, err := policy.Open(policy.Options{Cwd: cwd, ConfigHome: filepath.Join(home, ".config"), Home: home, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	s := session.New(cfg, session.Info{Cwd: cwd, Home: home, Mode: permission.ModeDefault, Rules: rules, Env: []string{"PATH=" + os.Getenv("PATH")}})
	ctx := context.Background()
	for _, err := range s.RunTurn(ctx, "twice") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Revoke(ctx, "shell-go-doc"); err != nil {
		t.Fatal(err)
	}
	for _, err := range s.RunTurn(ctx, "again") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(ans.asked) != "[tc_1 tc_3]" {
		t.Fatalf("asked %v, want [tc_1 tc_3]: the revoke did not take the grant and its approval", ans.asked)
	}
	checkReplay(t, store, "sess-1")
}

// Issue 25: one prior approval revoked alone (the web's policy page). A
// call allowed once is allowed again unasked (a prior approval); revoked,
// the same call is asked again, a resumed session does not bring it back,
// and the replay rebuilds the same history, so every call comes out as
// recorded.
func TestRevokeOneApproval(t *testing.T) {
	dir, cwd, home, store := newLogDirs(t)
	m, err := script.Parse([]byte(`{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "go env GOOS"}}]}
{"toolCalls": [{"id": "tc_2", "name": "shell", "args": {"command": "go env GOOS"}}]}
{"text": "ran twice"}
{"toolCalls": [{"id": "tc_3", "name": "shell", "args": {"command": "go env GOOS"}}]}
{"text": "asked again"}`))
	if err != nil {
		t.Fatal(err)
	}
	ans := &answers{list: []string{"allow_once", "deny"}}
	cfg := restartConfig(t, dir, store, m, ans, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	rules, err := policy.Open(policy.Options{Cwd: cwd, ConfigHome: filepath.Join(home, ".config"), Home: home, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	info := session.Info{Cwd: cwd, Home: home, Mode: permission.ModeDefault, Rules: rules, Env: []string{"PATH=" + os.Getenv("PATH")}}
	s := session.New(cfg, info)
	ctx := context.Background()
	for _, err := range s.RunTurn(ctx, "twice") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.Approvals()); n != 1 {
		t.Fatalf("%d prior approvals after the first turn, want 1", n)
	}
	a := s.Approvals()[0]
	if a.Seq == 0 || a.Tool != "shell" || string(a.Args) != `{"command":"go env GOOS"}` {
		t.Fatalf("the approval is %+v, want the seq of its permission.resolved, shell and its arguments", a)
	}
	if err := s.RevokeApproval(ctx, a.Seq); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeApproval(ctx, a.Seq); !errors.Is(err, session.ErrNoApproval) {
		t.Fatalf("revoking it twice: %v, want ErrNoApproval", err)
	}
	if n := len(s.Approvals()); n != 0 {
		t.Fatalf("%d prior approvals after the revoke, want 0", n)
	}
	// Resumed from the log (as another process would), it is still gone.
	s.Close()
	s, err = session.Resume(ctx, cfg, "sess-1", info)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := len(s.Approvals()); n != 0 {
		t.Fatalf("%d prior approvals after resuming, want 0: the revoke was not replayed", n)
	}
	for _, err := range s.RunTurn(ctx, "again") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(ans.asked) != "[tc_1 tc_3]" {
		t.Fatalf("asked %v, want [tc_1 tc_3]: tc_2 by the prior approval, tc_3 asked again after its revoke", ans.asked)
	}
	checkReplay(t, store, "sess-1")
}
