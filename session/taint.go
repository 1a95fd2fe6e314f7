package session

import (
	"encoding/json"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
)

// TaintOf returns the taint a recorded event sets on the rest of its
// session: a tool.completed or tool.failed whose output the injection
// scanner flagged (its payload carries injection). Nil for any other event.
//
// The taint holds for every call decided while the flagged result is in
// the context the model was given, and contextbuild.Build keeps every
// recorded tool result (it never drops or summarises one), so from the
// flagged event on that is every later call of the session, in this turn
// and in the turns after it, in this process or one that resumes the
// session. A person ends it by starting a new session. It is a pure
// function of the event, so the taint of every request is the first
// flagged event before it in the log, and a replay re-derives it.
func TaintOf(e event.Event) *permission.Taint {
	if e.Type != event.ToolCompleted && e.Type != event.ToolFailed {
		return nil
	}
	var p struct {
		ToolCallID string           `json:"toolCallId"`
		Injection  *event.Injection `json:"injection"`
	}
	if err := json.Unmarshal(e.Payload, &p); err != nil || p.Injection == nil {
		return nil
	}
	return &permission.Taint{Seq: e.Seq, ToolCallID: p.ToolCallID, Classes: p.Injection.Classes}
}

// flagged reports whether a draft is a tool result the scanner flagged:
// it gates the decisions after it in the turn, so it is made durable (and
// gets its seq) before the next call is decided, never deferred.
func flagged(d event.Draft) bool {
	return (d.Type == event.ToolCompleted || d.Type == event.ToolFailed) && TaintOf(event.Event{Type: d.Type, Payload: d.Payload}) != nil
}

// observe keeps the first taint of the session, from each event of the
// turn as it is committed (Resume takes it from the events of earlier
// processes).
//
// It runs under the turn's commit lock, on the turn's goroutine or the
// timer's; only a flagged event sets the taint, and a flagged event is
// never deferred (flagged), so the taint is only ever written on the
// turn's goroutine, which reads it.
func (t *turn) observe(e event.Event) {
	if t.s.taint != nil {
		return
	}
	if tn := TaintOf(e); tn != nil {
		t.s.taint = tn
	}
}
