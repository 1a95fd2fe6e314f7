package session

import (
	"encoding/json"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
)

// TaintOf returns the taint a recorded event sets on the rest of its turn:
// a tool.completed or tool.failed whose output the injection scanner
// flagged (its payload carries injection). Nil for any other event. It is
// a pure function of the event, so a replay re-derives the taint of every
// request from the log alone.
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

// observe keeps the first taint of the turn, from each event as it is
// committed.
//
// It runs under the turn's commit lock, on the turn's goroutine or the
// timer's; only a flagged event sets the taint, and a flagged event is
// never deferred (flagged), so the taint is only ever written on the
// turn's goroutine, which reads it.
func (t *turn) observe(e event.Event) {
	if t.taint != nil || e.TurnID != t.id {
		return
	}
	if tn := TaintOf(e); tn != nil {
		t.taint = tn
	}
}
