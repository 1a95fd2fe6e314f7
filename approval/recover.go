package approval

import (
	"cmp"
	"context"
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

var _ Log = eventlog.Store(nil)

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
		open, err := openAsks(ctx, log, s.ID)
		if err != nil {
			return closed, err
		}
		for _, o := range open {
			d, err := event.NewDraft(s.ID, o.turnID, now, event.PermissionResolvedPayload{
				ToolCallID:     o.req.ToolCallID,
				Decision:       "deny",
				Reason:         ReasonRestarted,
				Actor:          event.ActorSystem,
				RiskAtDecision: o.req.RiskAtDecision,
				SourcedFrom:    o.req.SourcedFrom,
				Findings:       o.req.Findings,
			})
			if err != nil {
				return closed, fmt.Errorf("recovering pending asks: session %s, tool call %s: %w", s.ID, o.req.ToolCallID, err)
			}
			if _, err := log.Append(ctx, d); err != nil {
				return closed, fmt.Errorf("recovering pending asks: session %s, tool call %s: %w", s.ID, o.req.ToolCallID, err)
			}
			closed++
		}
	}
	return closed, nil
}

type openAsk struct {
	seq    uint64
	turnID string
	req    *event.PermissionRequestedPayload
}

// openAsks returns the session's requests without a later resolution, in
// log order. A tool call id may recur (a scripted model reusing "tc_1"):
// each resolution closes the latest open request with its id.
func openAsks(ctx context.Context, log Log, sessionID string) ([]openAsk, error) {
	open := map[string]openAsk{}
	for e, err := range log.Read(ctx, sessionID, 1) {
		if err != nil {
			return nil, fmt.Errorf("recovering pending asks: reading session %s: %w", sessionID, err)
		}
		if e.Type != event.PermissionRequested && e.Type != event.PermissionResolved {
			continue
		}
		p, err := e.Decode()
		if err != nil {
			return nil, fmt.Errorf("recovering pending asks: session %s: %w", sessionID, err)
		}
		switch p := p.(type) {
		case *event.PermissionRequestedPayload:
			open[p.ToolCallID] = openAsk{seq: e.Seq, turnID: e.TurnID, req: p}
		case *event.PermissionResolvedPayload:
			delete(open, p.ToolCallID)
		}
	}
	out := make([]openAsk, 0, len(open))
	for _, o := range open {
		out = append(out, o)
	}
	slices.SortFunc(out, func(x, y openAsk) int { return cmp.Compare(x.seq, y.seq) })
	return out, nil
}
