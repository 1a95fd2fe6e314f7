package eventlog

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/custom-agent/custom-agent/event"
)

// subscriberBuffer is how many events a subscriber may fall behind before it
// is told it missed some.
const subscriberBuffer = 256

// Hub fans committed events out to in-process subscribers. Publish never
// blocks: a subscriber whose buffer is full is marked as having missed
// events. Backends embed one and call Publish after each commit.
type Hub struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// Subscription is one follower's live feed. Use Next to receive; Close when
// done. A Subscription is used by one goroutine.
type Subscription struct {
	hub     *Hub
	session string
	ch      chan event.Event
	missed  atomic.Bool
	wake    chan struct{} // signalled when missed is set
	closed  chan struct{}
	once    sync.Once
}

// Subscribe registers a follower of sessionID ("" for every session).
func (h *Hub) Subscribe(sessionID string) *Subscription {
	s := &Subscription{
		hub: h, session: sessionID,
		ch:     make(chan event.Event, subscriberBuffer),
		wake:   make(chan struct{}, 1),
		closed: make(chan struct{}),
	}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = make(map[*Subscription]struct{})
	}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

// Publish delivers committed events, in order, without blocking.
func (h *Hub) Publish(events ...event.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		for _, e := range events {
			if s.session != "" && s.session != e.SessionID {
				continue
			}
			if s.missed.Load() {
				break // it will re-read from the store anyway
			}
			select {
			case s.ch <- e:
			default:
				s.missed.Store(true)
				select {
				case s.wake <- struct{}{}:
				default:
				}
			}
		}
	}
}

// CloseAll ends every subscription (the store is closing).
func (h *Hub) CloseAll() {
	h.mu.Lock()
	subs := h.subs
	h.subs = nil
	h.mu.Unlock()
	for s := range subs {
		s.once.Do(func() { close(s.closed) })
	}
}

// Next returns the next live event. It returns ErrMissed (once) when events
// were dropped because the follower fell behind — the caller re-reads from
// the store after the last seq it saw — ErrClosed when the subscription or
// store is closed, and ctx.Err() when ctx is done.
func (s *Subscription) Next(ctx context.Context) (event.Event, error) {
	if s.missed.Load() {
		return event.Event{}, s.takeMissed()
	}
	select {
	case e := <-s.ch:
		return e, nil
	case <-s.wake:
		return event.Event{}, s.takeMissed()
	case <-s.closed:
		return event.Event{}, ErrClosed
	case <-ctx.Done():
		return event.Event{}, ctx.Err()
	}
}

// takeMissed drains what is buffered (the store has all of it) and clears
// the flag, so delivery resumes with the next append.
func (s *Subscription) takeMissed() error {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	for {
		select {
		case <-s.ch:
		case <-s.wake:
		default:
			s.missed.Store(false)
			return ErrMissed
		}
	}
}

// Close unregisters the subscription.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	delete(s.hub.subs, s)
	s.hub.mu.Unlock()
	s.once.Do(func() { close(s.closed) })
}

// Missed tells the subscribers of sessionID (every subscriber when "")
// that events were appended which the hub did not carry — by another
// process sharing the store — so that they read them from the store: their
// Next returns ErrMissed. A subscriber of every session is told whatever
// the session.
func (h *Hub) Missed(sessionID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if sessionID != "" && s.session != "" && s.session != sessionID {
			continue
		}
		s.missed.Store(true)
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}
