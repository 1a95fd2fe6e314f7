package acp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/contextbuild"
	"github.com/custom-agent/custom-agent/event"
)

const (
	echoHi   = `{"text":"Running it.","toolCalls":[{"id":"tc_1","name":"shell","args":{"command":"touch hi.txt"}}]}`
	echoHi2  = `{"text":"Again.","toolCalls":[{"id":"tc_2","name":"shell","args":{"command":"touch hi.txt"}}]}`
	finalOK  = `{"text":"Done."}`
	rmBuild  = `{"text":"Cleaning.","toolCalls":[{"id":"tc_1","name":"shell","args":{"command":"rm -rf build"}}]}`
	rmBuild2 = `{"text":"Cleaning again.","toolCalls":[{"id":"tc_2","name":"shell","args":{"command":"rm -rf build"}}]}`
)

func optionIDs(req acpsdk.RequestPermissionRequest) []string {
	var ids []string
	for _, o := range req.Options {
		ids = append(ids, string(o.OptionId)+"="+string(o.Kind))
	}
	return ids
}

func TestGoldenAllowOnce(t *testing.T) {
	e := newEnv(t)
	a := e.start(e.script(echoHi, finalOK))
	c := e.connect(a, pick("allow_once"))
	c.init(t)
	id := c.newSession(t, e.cwd)
	if got := c.prompt(t, id, "say hi"); got != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason %q, want end_turn", got)
	}
	e.golden(c, "allow_once")
	r := resolved(t, a.events(t, string(id)))
	if len(r) != 1 || r[0].Decision != "allow" || r[0].Actor != event.ActorUser || r[0].Option != "allow_once" {
		t.Errorf("permission.resolved = %+v, want one allow by the user (allow_once)", r)
	}
}

func TestGoldenReject(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.cwd, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := e.start(e.script(`{"text":"Editing.","toolCalls":[{"id":"tc_1","name":"write_file","args":{"path":"a.txt","content":"new\n"}}]}`, finalOK))
	c := e.connect(a, pick("deny"))
	c.init(t)
	id := c.newSession(t, e.cwd)
	if got := c.prompt(t, id, "edit a.txt"); got != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason %q", got)
	}
	e.golden(c, "reject")
	if b, _ := os.ReadFile(filepath.Join(e.cwd, "a.txt")); string(b) != "old\n" {
		t.Errorf("a.txt = %q after a denied write", b)
	}
	evs := a.events(t, string(id))
	if n := count(evs, event.ToolStarted); n != 0 {
		t.Errorf("%d tool.started after a deny", n)
	}
}

func TestGoldenEditDiff(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.cwd, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := e.start(e.script(`{"text":"Editing.","toolCalls":[{"id":"tc_1","name":"write_file","args":{"path":"a.txt","content":"new\n"}}]}`, finalOK))
	c := e.connect(a, pick("allow_once"))
	c.init(t)
	id := c.newSession(t, e.cwd)
	c.prompt(t, id, "edit a.txt")
	e.golden(c, "edit_diff")
	c.tr.mu.Lock()
	defer c.tr.mu.Unlock()
	found := false
	for _, l := range c.tr.toClient {
		if strings.Contains(l, `"type":"diff"`) && strings.Contains(l, `"oldText":"old\n"`) && strings.Contains(l, `"newText":"new\n"`) {
			found = true
		}
	}
	if !found {
		t.Error("no diff content (oldText old, newText new) for the edit")
	}
}

func TestGoldenAllowAlwaysTwoTurns(t *testing.T) {
	e := newEnv(t)
	a := e.start(e.script(echoHi, finalOK, echoHi2, finalOK))
	c := e.connect(a, pick("allow_session"))
	c.init(t)
	id := c.newSession(t, e.cwd)
	c.prompt(t, id, "say hi")
	c.prompt(t, id, "say hi again")
	e.golden(c, "allow_always_two_turns")
	if c.c.asked != 1 {
		t.Errorf("asked %d times, want once", c.c.asked)
	}
	r := resolved(t, a.events(t, string(id)))
	if len(r) != 2 || r[1].Decision != "allow" || r[1].Actor != event.ActorPolicy || r[1].SourcedFrom != "override" {
		t.Errorf("second permission.resolved = %+v, want allow by the session rule", r)
	}
}

func TestGoldenRejectAlwaysTwoTurns(t *testing.T) {
	e := newEnv(t)
	a := e.start(e.script(echoHi, finalOK, echoHi2, finalOK))
	c := e.connect(a, func(_ context.Context, req acpsdk.RequestPermissionRequest) (string, error) {
		if !strings.Contains(strings.Join(optionIDs(req), " "), "deny_session=reject_always") {
			t.Errorf("options %v offer no reject_always", optionIDs(req))
		}
		return "deny_session", nil
	})
	c.init(t)
	id := c.newSession(t, e.cwd)
	c.prompt(t, id, "say hi")
	c.prompt(t, id, "say hi again")
	e.golden(c, "reject_always_two_turns")
	if c.c.asked != 1 {
		t.Errorf("asked %d times, want once", c.c.asked)
	}
	evs := a.events(t, string(id))
	r := resolved(t, evs)
	if len(r) != 2 || r[0].Actor != event.ActorUser || r[1].Decision != "deny" || r[1].Actor != event.ActorPolicy {
		t.Errorf("permission.resolved = %+v, want a user deny, then a deny by the session rule", r)
	}
	var rule struct{ Decision, Level string }
	for _, ev := range evs {
		if ev.Type == event.PolicyChanged {
			var p event.PolicyChangedPayload
			_ = json.Unmarshal(ev.Payload, &p)
			_ = json.Unmarshal(p.Rule, &rule)
		}
	}
	if rule.Decision != "deny" {
		t.Errorf("no session deny rule recorded in policy.changed (got %+v)", rule)
	}
}

func TestGoldenDestructiveBothTurns(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.cwd, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := e.start(e.script(rmBuild, finalOK, rmBuild2, finalOK))
	check := func(want string) answerFunc {
		return func(_ context.Context, req acpsdk.RequestPermissionRequest) (string, error) {
			if got := strings.Join(optionIDs(req), " "); got != "allow_once=allow_once deny=reject_once" {
				t.Errorf("destructive options = %s, want allow_once and reject_once only", got)
			}
			return want, nil
		}
	}
	c := e.connect(a, check("allow_once"), check("deny"))
	c.init(t)
	id := c.newSession(t, e.cwd)
	c.prompt(t, id, "clean")
	c.prompt(t, id, "clean again")
	e.golden(c, "destructive_both_turns")
	if c.c.asked != 2 {
		t.Errorf("asked %d times, want on both turns", c.c.asked)
	}
}

func TestGoldenCancelWhileAsking(t *testing.T) {
	e := newEnv(t)
	a := e.start(e.script(echoHi, finalOK))
	var c *conn
	var id acpsdk.SessionId
	c = e.connect(a, func(ctx context.Context, _ acpsdk.RequestPermissionRequest) (string, error) {
		if err := c.Cancel(context.Background(), acpsdk.CancelNotification{SessionId: id}); err != nil {
			t.Error(err)
		}
		<-ctx.Done() // the agent withdraws the request
		return "", ctx.Err()
	})
	c.init(t)
	id = c.newSession(t, e.cwd)
	if got := c.prompt(t, id, "say hi"); got != acpsdk.StopReasonCancelled {
		t.Fatalf("stopReason %q, want cancelled", got)
	}
	e.golden(c, "cancel_while_asking")
	evs := a.events(t, string(id))
	r := resolved(t, evs)
	if len(r) != 1 || r[0].Actor != event.ActorSystem || r[0].Reason != approval.ReasonCancelled {
		t.Errorf("permission.resolved = %+v, want deny by the system (%s)", r, approval.ReasonCancelled)
	}
	last := evs[len(evs)-1]
	if last.Type != event.TurnCompleted || !strings.Contains(string(last.Payload), `"cancelled"`) {
		t.Errorf("the chain ends with %s %s, want turn.completed cancelled", last.Type, last.Payload)
	}
}

func TestGoldenTimeout(t *testing.T) {
	e := newEnv(t)
	e.timeout = 300 * time.Millisecond
	a := e.start(e.script(echoHi, finalOK))
	c := e.connect(a, func(ctx context.Context, _ acpsdk.RequestPermissionRequest) (string, error) {
		<-ctx.Done() // nobody answers; the agent withdraws the request
		return "", ctx.Err()
	})
	c.init(t)
	id := c.newSession(t, e.cwd)
	if got := c.prompt(t, id, "say hi"); got != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason %q, want end_turn: the turn goes on after a timeout", got)
	}
	e.golden(c, "timeout")
	r := resolved(t, a.events(t, string(id)))
	if len(r) != 1 || r[0].Actor != event.ActorSystem || !strings.HasPrefix(r[0].Reason, "timeout") {
		t.Errorf("permission.resolved = %+v, want deny by the system on timeout", r)
	}
	if len(c.tr.withdrawn) != 1 {
		t.Errorf("%d requests withdrawn, want the permission request", len(c.tr.withdrawn))
	}
}

func TestGoldenUserDenyModelSees(t *testing.T) {
	e := newEnv(t)
	a := e.start(e.script(echoHi, finalOK))
	c := e.connect(a, pick("deny"))
	c.init(t)
	id := c.newSession(t, e.cwd)
	c.prompt(t, id, "say hi")
	e.golden(c, "user_deny_model_sees")
	// The model's context is built from the log: the denial is in it.
	ctx, err := contextbuild.Build(a.events(t, string(id)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ctx.Messages)
	if !strings.Contains(string(b), "Permission denied: user denied") {
		t.Errorf("the model's context does not hold the user's denial: %s", b)
	}
}

func TestGoldenSetModePlan(t *testing.T) {
	e := newEnv(t)
	a := e.start(e.script(
		`{"text":"Reading.","toolCalls":[{"id":"tc_1","name":"list_files","args":{}}]}`, finalOK,
		`{"text":"Editing.","toolCalls":[{"id":"tc_2","name":"write_file","args":{"path":"b.txt","content":"x"}}]}`, finalOK))
	c := e.connect(a)
	c.init(t)
	id := c.newSession(t, e.cwd)
	c.prompt(t, id, "look")
	if _, err := c.SetSessionMode(context.Background(), acpsdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	c.prompt(t, id, "now edit")
	e.golden(c, "set_mode_plan")
	evs := a.events(t, string(id))
	var changes []string
	for _, ev := range evs {
		if ev.Type == event.ModeChanged {
			changes = append(changes, "turn="+ev.TurnID+" "+string(ev.Payload))
		}
		if ev.Type == event.PolicyChanged {
			t.Errorf("a mode change recorded as policy.changed: %s", ev.Payload)
		}
	}
	if want := `turn= {"by":"user","from":"default","to":"plan"}`; len(changes) != 1 || changes[0] != want {
		t.Errorf("session.mode_changed events %q, want one %s", changes, want)
	}
	r := resolved(t, evs)
	if len(r) != 2 || r[1].Decision != "deny" || r[1].SourcedFrom != "mode" {
		t.Errorf("the write in plan mode: %+v, want denied by the mode without asking", r)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "b.txt")); err == nil {
		t.Error("b.txt was written in plan mode")
	}
}

func TestGoldenLoadAfterRestart(t *testing.T) {
	e := newEnv(t)
	a := e.start(e.script(
		`{"text":"Two calls.","toolCalls":[{"id":"tc_1","name":"shell","args":{"command":"touch hi.txt"}},{"id":"tc_2","name":"shell","args":{"command":"touch bye.txt"}}]}`,
		finalOK))
	c := e.connect(a, pick("allow_once"), pick("deny_session"))
	c.init(t)
	id := c.newSession(t, e.cwd)
	c.prompt(t, id, "hi and bye")
	a.stop() // the process ends; the editor starts a new one

	a2 := e.start(e.script(
		`{"text":"Again.","toolCalls":[{"id":"tc_3","name":"shell","args":{"command":"touch hi.txt"}},{"id":"tc_4","name":"shell","args":{"command":"touch bye.txt"}}]}`,
		finalOK))
	c2 := e.connect(a2) // no answers: nothing may be asked
	c2.init(t)
	if _, err := c2.LoadSession(context.Background(), acpsdk.LoadSessionRequest{SessionId: id, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	c2.prompt(t, id, "hi and bye again")
	e.golden(c2, "load_after_restart")
	r := resolved(t, a2.events(t, string(id)))
	if len(r) != 4 || r[2].SourcedFrom != "prior" || r[2].Decision != "allow" || r[3].Decision != "deny" || r[3].Actor != event.ActorPolicy {
		t.Errorf("after load: %+v, want echo hi allowed by the prior approval and echo bye denied by the restored session rule", r)
	}
}

// TestSetModeEachMode: session/new offers the four modes; session/set_mode
// accepts each and records session.mode_changed for each change, refuses an
// unknown one with the modes listed, and session/load continues in the
// last. accept-edits runs an edit without asking; dont-ask denies a
// command at once.
func TestSetModeEachMode(t *testing.T) {
	e := newEnv(t)
	a := e.start(e.script(
		`{"text":"Editing.","toolCalls":[{"id":"tc_1","name":"write_file","args":{"path":"a.txt","content":"x"}}]}`, finalOK,
		`{"text":"Running.","toolCalls":[{"id":"tc_2","name":"shell","args":{"command":"touch hi.txt"}}]}`, finalOK))
	c := e.connect(a) // no answers: nothing may be asked
	c.init(t)
	r, err := c.NewSession(context.Background(), acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := r.SessionId
	var offered []string
	for _, m := range r.Modes.AvailableModes {
		offered = append(offered, string(m.Id))
	}
	if got := strings.Join(offered, " "); got != "default plan accept-edits dont-ask" || r.Modes.CurrentModeId != "default" {
		t.Fatalf("modes offered %q, current %q", got, r.Modes.CurrentModeId)
	}
	set := func(m string) error {
		_, err := c.SetSessionMode(context.Background(), acpsdk.SetSessionModeRequest{SessionId: id, ModeId: acpsdk.SessionModeId(m)})
		return err
	}
	// Before the first turn the mode goes into session.started.
	if err := set("accept-edits"); err != nil {
		t.Fatal(err)
	}
	c.prompt(t, id, "edit")
	for _, m := range []string{"plan", "default", "dont-ask"} {
		if err := set(m); err != nil {
			t.Fatalf("set_mode %s: %v", m, err)
		}
	}
	if err := set("yolo"); err == nil || !strings.Contains(err.Error(), `unknown mode \"yolo\" (want default, plan, accept-edits or dont-ask)`) && !strings.Contains(err.Error(), `unknown mode "yolo" (want default, plan, accept-edits or dont-ask)`) {
		t.Errorf("set_mode yolo: %v", err)
	}
	c.prompt(t, id, "run")
	evs := a.events(t, string(id))
	var changes []string
	for _, ev := range evs {
		if ev.Type == event.ModeChanged {
			changes = append(changes, string(ev.Payload))
		}
	}
	want := []string{`{"by":"user","from":"accept-edits","to":"plan"}`, `{"by":"user","from":"plan","to":"default"}`, `{"by":"user","from":"default","to":"dont-ask"}`}
	if strings.Join(changes, "\n") != strings.Join(want, "\n") {
		t.Errorf("session.mode_changed:\n%s\nwant\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}
	res := resolved(t, evs)
	if len(res) != 2 || res[0].Decision != "allow" || res[0].SourcedFrom != "mode" || res[1].Decision != "deny" || res[1].SourcedFrom != "mode" {
		t.Errorf("decisions %+v, want the edit allowed and the command denied by the mode", res)
	}
	if n := count(evs, event.PermissionRequested); n != 0 {
		t.Errorf("%d questions asked", n)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "hi.txt")); err == nil {
		t.Error("hi.txt was made in dont-ask mode")
	}
	a.stop()

	a2 := e.start(e.script(finalOK))
	c2 := e.connect(a2)
	c2.init(t)
	l, err := c2.LoadSession(context.Background(), acpsdk.LoadSessionRequest{SessionId: id, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if l.Modes == nil || l.Modes.CurrentModeId != "dont-ask" {
		t.Errorf("loaded in %+v, want dont-ask", l.Modes)
	}
}
