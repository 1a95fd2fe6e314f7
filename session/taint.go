package session

import (
	"context"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/injection"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/replay/record"
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
func TaintOf(e event.Event) *permission.Taint { return record.TaintOf(e) }

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

// scanReply records what the injection scanner finds in the text of one
// model response (model.reply_flagged), or nothing. The model's reply is
// not a tool result: it does not taint the session (TaintOf ignores the
// event), for three reasons. Its words come from the model's context,
// where any injected text from a tool is already flagged and already
// taints; the engine's decisions depend on recorded facts, never on what
// the model says, and a reply that quotes a marker (explaining an attack
// the user asked about) would otherwise end auto-allows for the session
// at the model's word; and what the reply can do by itself (a
// data-carrying image a client renders, a spoofed closer shown to a
// person) is not a tool call the engine decides. The flag is there for
// the person and the audit: log names it, and a client may refuse to
// render the reply's images.
func (t *turn) scanReply(ctx context.Context, reply string) error {
	if reply == "" {
		return nil
	}
	r := injection.ScanString(reply)
	if !r.Flagged() {
		return nil
	}
	p := event.ModelReplyFlaggedPayload{Spans: []event.ReplySpan{}, Truncated: r.Truncated, Bytes: len(reply)}
	for _, c := range r.Classes() {
		p.Classes = append(p.Classes, string(c))
	}
	for _, sp := range r.Spans {
		p.Spans = append(p.Spans, event.ReplySpan{Class: string(sp.Class), Start: sp.Start, End: sp.End})
	}
	return t.emit(context.WithoutCancel(ctx), p)
}
