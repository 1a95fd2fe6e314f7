package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/custom-agent/custom-agent/eventlog"
)

var _ eventlog.Leases = (*Store)(nil)

// leaseKey is the advisory lock key of a session's lease: 64 bits of a
// digest of the session id under a prefix of ours, so that it neither
// depends on what the id holds nor meets another application's keys
// but by chance.
func leaseKey(sessionID string) int64 {
	sum := sha256.Sum256([]byte("custom-agent session lease\x00" + sessionID))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// Lease implements eventlog.Leases with a session-level advisory lock
// (pg_try_advisory_lock) held on a connection of its own for as long as
// the lease lasts. The server drops the lock when that connection ends:
// on release, on the process's exit or crash, and, for a host that
// vanished, once TCP keepalive gives up on it (set here to about a
// minute, instead of the system's two hours), so that another host's
// start-up recovery can then close what the dead process left open.
func (s *Store) Lease(ctx context.Context, sessionID string) (func(), error) {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return nil, eventlog.ErrClosed
	}
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return nil, s.explain("leasing session "+sessionID, err)
	}
	fail := func(err error) (func(), error) {
		conn.Close(context.Background())
		return nil, err
	}
	// Best effort: a server that refuses these still drops the lock when
	// the connection closes, later.
	for _, set := range []string{"SET tcp_keepalives_idle = 30", "SET tcp_keepalives_interval = 10", "SET tcp_keepalives_count = 3"} {
		if _, err := conn.Exec(ctx, set); err != nil {
			break
		}
	}
	var got bool
	key := leaseKey(sessionID)
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil {
		return fail(s.explain("leasing session "+sessionID, err))
	}
	if !got {
		return fail(fmt.Errorf("session %s: %w", sessionID, eventlog.ErrSessionBusy))
	}
	return func() {
		// Unlocked before the connection closes: the server drops a
		// closed connection's locks only once its backend has exited,
		// a moment later, and a lease taken again at once must not see
		// this one still held. Closing drops it anyway if this fails.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", key)
		conn.Close(ctx)
	}, nil
}
