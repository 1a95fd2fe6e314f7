// Package eventlog is the append-only, hash-chained log every decision and
// tool call of custom-agent is written to before anything runs.
//
// Store is the port; sqlitestore is the embedded default backend and
// storetest the conformance suite every backend must pass.
//
// Tamper evidence: each event's hash covers its canonical bytes and the hash
// of the event before it, and each session's head (last seq and hash) is kept
// beside the events. Verify detects an edited, deleted, reordered or inserted
// row. It does not detect a rewrite of the whole chain by someone who can
// also recompute every hash: that needs a key the writer holds, which is out
// of scope for the log itself.
package eventlog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/custom-agent/custom-agent/event"
)

// Store is a durable, per-session, hash-chained event log.
//
// All methods may be called concurrently.
type Store interface {
	// Append assigns the session's next seq (1, 2, 3 … without gaps),
	// links the hash chain and returns the sealed event only once the
	// commit is durable. If d.Seq is non-zero it is the seq the caller
	// expects: when that seq is already stored with the same content,
	// Append returns the stored event (a retry after a crash between
	// commit and acknowledgement never duplicates); when it is stored with
	// other content, the error wraps ErrSeqConflict; when it is beyond the
	// next seq, ErrSeqGap. An append that fails returns an error and
	// leaves nothing written. Once an append is queued, Append waits for
	// its outcome even if ctx is cancelled, so that its result is never
	// unknown to the caller.
	Append(ctx context.Context, d event.Draft) (event.Event, error)

	// Read yields the session's events with seq ≥ fromSeq in seq order.
	// A read error is yielded once as the last pair.
	Read(ctx context.Context, sessionID string, fromSeq uint64) iter.Seq2[event.Event, error]

	// Sessions lists every session, most recently updated first.
	Sessions(ctx context.Context) ([]SessionInfo, error)

	// Subscribe returns a live feed of events appended by this process to
	// the session (all sessions when sessionID is ""). An event is offered
	// to subscribers before its Append returns. Delivery never blocks an
	// append: a follower that falls behind is told so by ErrMissed and
	// re-reads from the store.
	Subscribe(sessionID string) *Subscription

	// Verify walks the session's chain. It returns nil when the chain is
	// intact, an error wrapping *ChainError naming the first bad seq when
	// it is not, and other errors when the store could not be read.
	Verify(ctx context.Context, sessionID string) error

	// Close stops accepting appends, waits for those in flight and
	// releases the store.
	Close() error
}

// SessionInfo describes one session in the log.
type SessionInfo struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Events    uint64    `json:"events"` // the last seq
	HeadHash  string    `json:"headHash"`
}

var (
	// ErrSeqConflict: the expected seq is stored with different content.
	ErrSeqConflict = errors.New("seq already holds a different event")
	// ErrSeqGap: the expected seq is beyond the session's next seq.
	ErrSeqGap = errors.New("seq would leave a gap")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("event log is closed")
	// ErrNoSession: the session has no events.
	ErrNoSession = errors.New("no such session")
	// ErrMissed: a subscriber fell behind and events were not delivered to
	// it; re-read from the store.
	ErrMissed = errors.New("subscriber missed events")
)

// ChainError names the first event at which a session's chain is broken.
type ChainError struct {
	SessionID string
	Seq       uint64 // the first bad seq
	Problem   string
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("session %s: chain broken at seq %d: %s", e.SessionID, e.Seq, e.Problem)
}
