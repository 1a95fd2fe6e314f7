package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

var _ eventlog.Inbox = (*Store)(nil)

// OfferAnswer implements eventlog.Inbox: the answer is inserted in a
// transaction of its own, outside every chain. The primary key (session,
// tool call id, request seq) makes the first offer win whichever host made it: a later
// one, from this host or another, fails with eventlog.ErrAnswered.
func (s *Store) OfferAnswer(ctx context.Context, a eventlog.Answer) error {
	if s.opts.ReadOnly {
		return fmt.Errorf("offer answer to %s: %w (opened read-only)", s.where, ErrReadOnly)
	}
	if err := eventlog.CheckAnswer(a); err != nil {
		return err
	}
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return eventlog.ErrClosed
	}
	at := event.NormalizeTime(a.At).Format(event.TimeFormat)
	tag, err := s.pool.Exec(ctx, `INSERT INTO custom_agent.answers (session_id, tool_call_id, option, confirm, ui, at, request_seq)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (session_id, tool_call_id, request_seq) DO NOTHING`,
		a.SessionID, a.ToolCallID, a.Option, a.Confirm, a.UI, at, int64(a.RequestSeq))
	if err != nil {
		return s.explain("offering an answer", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("session %s, tool call %s, request seq %d: %w", a.SessionID, a.ToolCallID, a.RequestSeq, eventlog.ErrAnswered)
	}
	return nil
}

// TakeAnswer implements eventlog.Inbox. A log opened read-only at a schema
// without the answers table holds no answers.
func (s *Store) TakeAnswer(ctx context.Context, sessionID, toolCallID string, requestSeq uint64) (eventlog.Answer, bool, error) {
	if requestSeq == 0 || requestSeq > math.MaxInt64 {
		return eventlog.Answer{}, false, nil // no offer names such a seq
	}
	if s.schema < inboxSchema {
		return eventlog.Answer{}, false, nil
	}
	a := eventlog.Answer{SessionID: sessionID, ToolCallID: toolCallID}
	var at string
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT option, confirm, ui, at, request_seq FROM custom_agent.answers WHERE session_id = $1 AND tool_call_id = $2 AND request_seq = $3`,
		sessionID, toolCallID, int64(requestSeq)).Scan(&a.Option, &a.Confirm, &a.UI, &at, &seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return eventlog.Answer{}, false, nil
	case err != nil:
		return eventlog.Answer{}, false, s.explain("reading an offered answer", err)
	}
	t, err := time.Parse(event.TimeFormat, at)
	if err != nil {
		return eventlog.Answer{}, false, fmt.Errorf("event log %s: answer to session %s, tool call %s: bad time %q: %w", s.where, sessionID, toolCallID, at, err)
	}
	if seq < 0 {
		return eventlog.Answer{}, false, fmt.Errorf("event log %s: answer to session %s, tool call %s: negative request seq", s.where, sessionID, toolCallID)
	}
	a.At, a.RequestSeq = t, uint64(seq)
	return a, true, nil
}
