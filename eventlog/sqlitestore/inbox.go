package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

var _ eventlog.Inbox = (*Store)(nil)

// OfferAnswer implements eventlog.Inbox. The answer is written, on the
// writer connection, in a transaction of its own, outside every chain;
// another process's offer to the same question, committed first, makes
// this one fail with eventlog.ErrAnswered.
func (s *Store) OfferAnswer(ctx context.Context, a eventlog.Answer) error {
	if s.opts.ReadOnly {
		return fmt.Errorf("offer answer to %s: %w (opened read-only)", s.path, ErrReadOnly)
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
	res, err := s.w.ExecContext(ctx, `INSERT INTO answers (session_id, tool_call_id, option, confirm, ui, at, request_seq)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, tool_call_id, request_seq) DO NOTHING`,
		a.SessionID, a.ToolCallID, a.Option, a.Confirm, a.UI, at, int64(a.RequestSeq))
	if err != nil {
		return explain(s.path, "offering an answer", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return explain(s.path, "offering an answer", err)
	}
	if n == 0 {
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
	if s.q.answer == "" {
		return eventlog.Answer{}, false, nil
	}
	a := eventlog.Answer{SessionID: sessionID, ToolCallID: toolCallID}
	var at string
	var seq int64
	switch err := s.r.QueryRowContext(ctx, s.q.answer, sessionID, toolCallID, int64(requestSeq)).Scan(&a.Option, &a.Confirm, &a.UI, &at, &seq); {
	case errors.Is(err, sql.ErrNoRows):
		return eventlog.Answer{}, false, nil
	case err != nil:
		return eventlog.Answer{}, false, explain(s.path, "reading an offered answer", err)
	}
	t, err := parseTS(at)
	if err != nil {
		return eventlog.Answer{}, false, fmt.Errorf("event log %s: answer to session %s, tool call %s: bad time %q: %w", s.path, sessionID, toolCallID, at, err)
	}
	if seq < 0 {
		return eventlog.Answer{}, false, fmt.Errorf("event log %s: answer to session %s, tool call %s: negative request seq", s.path, sessionID, toolCallID)
	}
	a.At, a.RequestSeq = t, uint64(seq)
	return a, true, nil
}
