package eventlog

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/custom-agent/custom-agent/event"
)

// DefaultPollInterval is how often Follow looks at the store for events
// appended by other processes, which no in-process subscription sees.
const DefaultPollInterval = 250 * time.Millisecond

// Follow yields the session's events from fromSeq on, then every new event
// as it is appended, until ctx is done (which ends the sequence without an
// error). Events come from the store, so a follower that falls behind loses
// nothing: live notifications only wake it up. Appends by other processes
// are seen within poll (DefaultPollInterval when zero).
func Follow(ctx context.Context, s Store, sessionID string, fromSeq uint64, poll time.Duration) iter.Seq2[event.Event, error] {
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	if fromSeq == 0 {
		fromSeq = 1
	}
	return func(yield func(event.Event, error) bool) {
		sub := s.Subscribe(sessionID)
		defer sub.Close()
		next := fromSeq
		wake := make(chan struct{}, 1)
		subCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			for {
				_, err := sub.Next(subCtx)
				if err != nil && !errors.Is(err, ErrMissed) {
					return
				}
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}()
		ticker := time.NewTicker(poll)
		defer ticker.Stop()
		for {
			for e, err := range s.Read(ctx, sessionID, next) {
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					yield(event.Event{}, err)
					return
				}
				if !yield(e, nil) {
					return
				}
				next = e.Seq + 1
			}
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-ticker.C:
			}
		}
	}
}
