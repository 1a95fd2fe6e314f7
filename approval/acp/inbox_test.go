package acp_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/support/datadir"
)

// TestAnsweredInAnotherUI: with the relay running, as `custom-agent acp`
// runs it, a question the editor has open is answered in the web UI of
// another process (through its own handle on the store): the tool runs,
// permission.resolved names the web UI, and the agent withdraws the
// editor's request ($/cancel_request), as after a timeout.
func TestAnsweredInAnotherUI(t *testing.T) {
	e := newEnv(t)
	a := e.start(e.script(echoHi, finalOK))
	rctx, stopRelay := context.WithCancel(context.Background())
	wait := a.rt.Relay(rctx, "", testLogger(t))
	defer func() { stopRelay(); wait() }()
	web, err := sqlitestore.Open(context.Background(), filepath.Join(e.dataDir, datadir.LogFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	c := e.connect(a, func(ctx context.Context, p acpsdk.RequestPermissionRequest) (string, error) {
		// The web names the question by the seq of its permission.requested.
		var seq uint64
		for e, err := range web.Read(context.Background(), string(p.SessionId), 1) {
			if err != nil {
				t.Error(err)
				break
			}
			if e.Type == event.PermissionRequested {
				if d, err := e.Decode(); err == nil && d.(*event.PermissionRequestedPayload).ToolCallID == string(p.ToolCall.ToolCallId) {
					seq = e.Seq
				}
			}
		}
		err := web.OfferAnswer(context.Background(), eventlog.Answer{
			SessionID: string(p.SessionId), ToolCallID: string(p.ToolCall.ToolCallId), Option: "allow_once", UI: "web", At: time.Now(), RequestSeq: seq,
		})
		if err != nil {
			t.Error(err)
		}
		<-ctx.Done() // the editor's person never answers; the agent withdraws the request
		return "", ctx.Err()
	})
	c.init(t)
	id := c.newSession(t, e.cwd)
	if got := c.prompt(t, id, "say hi"); got != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason %q, want end_turn", got)
	}
	r := resolved(t, a.events(t, string(id)))
	if len(r) != 1 || r[0].Actor != event.ActorUser || r[0].UI != "web" || r[0].Decision != "allow" {
		t.Fatalf("permission.resolved = %+v, want one allow by the user in the web UI", r)
	}
	if len(c.tr.withdrawn) != 1 {
		t.Errorf("%d requests withdrawn, want the permission request", len(c.tr.withdrawn))
	}
}
