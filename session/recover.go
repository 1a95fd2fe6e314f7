package session

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// RecoverLog is what CloseAbandoned needs of the event log.
type RecoverLog interface {
	Log
	Sessions(ctx context.Context) ([]eventlog.SessionInfo, error)
}

// ReasonRestarted closes a turn a dead process left open.
const ReasonRestarted = "process restarted"

// CloseAbandoned ends every turn a dead process left open with
// turn.completed {stopReason: error, error: "process restarted"}, so that no
// chain is left open. Run it at start-up, after approval.RecoverPending has
// closed the pending asks and before this process starts a turn. A session a
// live process holds (eventlog.Leases) is left alone. It returns how many
// turns it closed.
func CloseAbandoned(ctx context.Context, log RecoverLog, now time.Time) (int, error) {
	sessions, err := log.Sessions(ctx)
	if err != nil {
		return 0, fmt.Errorf("closing abandoned turns: %w", err)
	}
	closed := 0
	for _, si := range sessions {
		turn, err := openTurn(log.Read(ctx, si.ID, 1))
		if err != nil {
			return closed, fmt.Errorf("closing abandoned turns of %s: %w", si.ID, err)
		}
		if turn == "" {
			continue
		}
		// A turn a live process is running is not abandoned: only a
		// session no live process holds (eventlog.Leases) is closed,
		// looked at again under its lease.
		_, err = eventlog.IfIdle(ctx, log, si.ID, func() error {
			turn, err := openTurn(log.Read(ctx, si.ID, 1))
			if err != nil || turn == "" {
				return err
			}
			d, err := event.NewDraft(si.ID, turn, now, event.TurnCompletedPayload{StopReason: event.StopError, Error: ReasonRestarted})
			if err != nil {
				return err
			}
			if _, err := log.Append(ctx, d); err != nil {
				return fmt.Errorf("closing turn %s of %s: %w", turn, si.ID, err)
			}
			closed++
			return nil
		})
		if err != nil {
			return closed, err
		}
	}
	return closed, nil
}

// openTurn returns the id of the session's last turn if it has no
// turn.completed.
func openTurn(events iter.Seq2[event.Event, error]) (string, error) {
	open := ""
	for e, err := range events {
		if err != nil {
			return "", err
		}
		switch e.Type {
		case event.TurnStarted:
			open = e.TurnID
		case event.TurnCompleted:
			open = ""
		}
	}
	return open, nil
}
