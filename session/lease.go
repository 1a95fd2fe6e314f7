package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/custom-agent/custom-agent/eventlog"
)

// ErrInUse: another live process runs the session (eventlog.ErrSessionBusy).
var ErrInUse = eventlog.ErrSessionBusy

// hold leases the session for this process when the log can lease
// (eventlog.Leases), once: another process's start-up recovery then leaves
// its open questions and turn alone, and another process cannot continue
// it at the same time. The lease lasts until Close or the process ends.
func (s *Session) hold(ctx context.Context) error {
	if s.release != nil {
		return nil
	}
	l, ok := s.cfg.Log.(eventlog.Leases)
	if !ok {
		return nil
	}
	release, err := l.Lease(ctx, s.id)
	if errors.Is(err, eventlog.ErrSessionBusy) {
		return fmt.Errorf("%w; wait for it to end, or start a new session", err)
	}
	if err != nil {
		return err
	}
	s.release = release
	return nil
}

// Close ends this process's hold on the session: another process may then
// continue it, and a question left open would be closed by the next
// start-up recovery. A Session is not used after Close.
func (s *Session) Close() {
	if s.release != nil {
		s.release()
		s.release = nil
	}
}
