package approval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// Log is what RecoverPending needs of the event log; eventlog.Store
// satisfies it.
type Log interface {
	Sessions(ctx context.Context) ([]eventlog.SessionInfo, error)
	Read(ctx context.Context, sessionID string, fromSeq uint64) iter.Seq2[event.Event, error]
	Append(ctx context.Context, d event.Draft) (event.Event, error)
}

var (
	_ Log    = eventlog.Store(nil)
	_ Reader = eventlog.Store(nil)
)

// RecoverPending closes the asks a dead process left open: for every
// permission.requested in any session with no later permission.resolved for
// the same toolCallId, it appends permission.resolved {decision: deny,
// actor: system, reason: "process restarted"} with the request's turn,
// riskAtDecision, sourcedFrom and findings, timestamped now. It returns how
// many it closed; on error, those closed before it.
//
// Call it once on start-up, before this process asks anything: an ask that
// another live process is waiting on in the same log looks exactly like an
// abandoned one and would be closed too.
func RecoverPending(ctx context.Context, log Log, now time.Time) (int, error) {
	sessions, err := log.Sessions(ctx)
	if err != nil {
		return 0, fmt.Errorf("recovering pending asks: listing sessions: %w", err)
	}
	closed := 0
	for _, s := range sessions {
		open, err := OpenAsks(ctx, log, s.ID)
		if err != nil {
			return closed, fmt.Errorf("recovering pending asks: %w", err)
		}
		for _, o := range open {
			d, err := event.NewDraft(s.ID, o.TurnID, now, event.PermissionResolvedPayload{
				ToolCallID:     o.Request.ToolCallID,
				Decision:       "deny",
				Reason:         ReasonRestarted,
				Actor:          event.ActorSystem,
				RiskAtDecision: o.Request.RiskAtDecision,
				SourcedFrom:    o.Request.SourcedFrom,
				Findings:       o.Request.Findings,
			})
			if err != nil {
				return closed, fmt.Errorf("recovering pending asks: session %s, tool call %s: %w", s.ID, o.Request.ToolCallID, err)
			}
			if _, err := log.Append(ctx, d); err != nil {
				return closed, fmt.Errorf("recovering pending asks: session %s, tool call %s: %w", s.ID, o.Request.ToolCallID, err)
			}
			closed++
		}
	}
	return closed, nil
}

// Reader reads a session's events; eventlog.Store satisfies it.
type Reader interface {
	Read(ctx context.Context, sessionID string, fromSeq uint64) iter.Seq2[event.Event, error]
}

// OpenAsk is a question asked in a session's log (permission.requested)
// with no permission.resolved after it: a person may still answer it.
type OpenAsk struct {
	// Seq is the seq of the permission.requested event: an answer from
	// another process names it (eventlog.Answer.RequestSeq).
	Seq    uint64
	TurnID string
	// Asked is the time of the permission.requested event.
	Asked   time.Time
	Request *event.PermissionRequestedPayload
}

// OpenAsks returns the session's open questions, oldest first: each
// permission.requested with no later permission.resolved for its tool call
// id. It reads the log only, so it sees the questions of every process
// writing to it. A tool call id may recur (a model giving two calls one
// id): each resolution closes the latest open request with its id.
func OpenAsks(ctx context.Context, log Reader, sessionID string) ([]OpenAsk, error) {
	open := map[string][]OpenAsk{} // by tool call id, oldest first
	for e, err := range log.Read(ctx, sessionID, 1) {
		if err != nil {
			return nil, fmt.Errorf("open questions: reading session %s: %w", sessionID, err)
		}
		if e.Type != event.PermissionRequested && e.Type != event.PermissionResolved {
			continue
		}
		p, err := e.Decode()
		if err != nil {
			return nil, fmt.Errorf("open questions: session %s: %w", sessionID, err)
		}
		switch p := p.(type) {
		case *event.PermissionRequestedPayload:
			open[p.ToolCallID] = append(open[p.ToolCallID], OpenAsk{Seq: e.Seq, TurnID: e.TurnID, Asked: e.TS, Request: p})
		case *event.PermissionResolvedPayload:
			if l := open[p.ToolCallID]; len(l) > 0 {
				open[p.ToolCallID] = l[:len(l)-1]
			}
		}
	}
	var out []OpenAsk
	for _, l := range open {
		out = append(out, l...)
	}
	slices.SortFunc(out, func(x, y OpenAsk) int { return cmp.Compare(x.Seq, y.Seq) })
	return out, nil
}

// ErrNotARequest: the seq given to Resolution is not a permission.requested
// of the session.
var ErrNotARequest = errors.New("not a permission.requested event")

// Resolution returns how the question asked at requestSeq (a
// permission.requested of the session) was resolved: the
// permission.resolved that closed it, with the actor and the UI that
// answered, or ok=false while it is open. A UI that offered an answer
// (eventlog.Inbox) reads here whether its answer, or another UI's, the
// timeout or a cancellation, decided the question. It reads the log
// only, from requestSeq on.
func Resolution(ctx context.Context, log Reader, sessionID string, requestSeq uint64) (p *event.PermissionResolvedPayload, ok bool, err error) {
	var id string
	depth := 0
	for e, err := range log.Read(ctx, sessionID, requestSeq) {
		if err != nil {
			return nil, false, fmt.Errorf("resolution of session %s seq %d: %w", sessionID, requestSeq, err)
		}
		if id == "" && (e.Seq != requestSeq || e.Type != event.PermissionRequested) {
			return nil, false, fmt.Errorf("session %s seq %d: %w", sessionID, requestSeq, ErrNotARequest)
		}
		if e.Type != event.PermissionRequested && e.Type != event.PermissionResolved {
			continue
		}
		d, err := e.Decode()
		if err != nil {
			return nil, false, fmt.Errorf("resolution of session %s seq %d: %w", sessionID, requestSeq, err)
		}
		switch d := d.(type) {
		case *event.PermissionRequestedPayload:
			if id == "" {
				id = d.ToolCallID
			}
			if d.ToolCallID == id {
				depth++
			}
		case *event.PermissionResolvedPayload:
			// Each resolution closes the latest open request of its
			// id (as OpenAsks counts them).
			if d.ToolCallID == id {
				if depth--; depth == 0 {
					return d, true, nil
				}
			}
		}
	}
	if id == "" {
		return nil, false, fmt.Errorf("session %s seq %d: %w", sessionID, requestSeq, ErrNotARequest)
	}
	return nil, false, nil
}
