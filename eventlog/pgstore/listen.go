package pgstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// The listener: one connection per store, made on the first Subscribe,
// that LISTENs on notifyChannel. Each commit (in any process sharing the
// database) sends at most one NOTIFY, delivered only once it has
// committed, whose payload is the (session, last seq) of each session it
// appended to, as a JSON array of pairs, or "*" when they do not fit.
// Events themselves are never sent: a follower woken by a notice reads
// them from the table, from the seq after the last it saw, so a notice
// lost or coalesced loses nothing.
//
// A notice sent by this store's own writer is skipped (its events were
// published in-process before Append returned). A notice of another
// process makes the subscriptions of its sessions report
// eventlog.ErrMissed, which tells their followers to read the store.
// When the connection is lost, the listener reconnects (with backoff) and
// then wakes every subscription, since notices may have been sent in
// between: followers resume from their last seq.

func (s *Store) startListener() {
	s.listenOnce.Do(func() {
		s.mu.RLock()
		closed := s.closed
		s.mu.RUnlock()
		if closed {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.listenStop = cancel
		s.listenDone = make(chan struct{})
		go s.listen(ctx)
	})
}

func (s *Store) stopListener() {
	s.listenOnce.Do(func() {}) // no listener starts after Close
	if s.listenStop != nil {
		s.listenStop()
		<-s.listenDone
	}
}

// Listening reports whether the listener's connection is up (tests).
func (s *Store) Listening() bool { return s.listening.Load() }

func (s *Store) listen(ctx context.Context) {
	defer close(s.listenDone)
	wait := 50 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, s.cfg)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
				conn.Close(context.Background())
			}
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, 5*time.Second)
			continue
		}
		wait = 50 * time.Millisecond
		s.listening.Store(true)
		if !first {
			s.listenReconnects.Add(1)
			s.hub.Missed("") // notices may have been sent while we were away
		}
		first = false
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				break
			}
			if _, own := s.ownPIDs.Load(n.PID); own {
				continue
			}
			s.wake(n.Payload)
		}
		s.listening.Store(false)
		conn.Close(context.Background())
	}
}

// wake tells the subscriptions of the sessions a notice names that they
// missed events.
func (s *Store) wake(payload string) {
	var pairs [][2]json.RawMessage
	if payload == "*" || json.Unmarshal([]byte(payload), &pairs) != nil {
		s.hub.Missed("")
		return
	}
	for _, p := range pairs {
		var id string
		if json.Unmarshal(p[0], &id) != nil {
			s.hub.Missed("")
			return
		}
		s.hub.Missed(id)
	}
}
