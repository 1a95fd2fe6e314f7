package session

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// maxDeferral bounds how long a deferred event waits in memory while the
// turn keeps appending others (the model.delta of a long answer): the next
// event after it commits them all, so a reader sees streamed text within
// about this much time.
const maxDeferral = 50 * time.Millisecond

// durability is how a turn writes the log (DESIGN §3 "Durability"): an
// event that gates something (eventlog.MayDefer false: permission.resolved,
// permission.requested, turn.completed, policy.changed, any type not known
// to be harmless …) is durable before Append returns, and takes with it, in
// the same commit, the events deferred since the last one. A deferred event
// is not in the store, nor yielded to the turn's reader, until that commit.
// The artifacts the turn's executors write are synced just before it, so
// every blob an event names is durable before the event is.
type durability struct {
	ready   bool
	batch   eventlog.BatchAppender // nil: the log cannot batch, every event is durable on its own
	arts    *artifact.Store        // the Deferred view the turn's executors write to; nil without a store
	pending []event.Draft
	since   time.Time // when the oldest pending draft was deferred
}

func (t *turn) durable() *durability {
	d := &t.dur
	if !d.ready {
		d.ready = true
		d.batch, _ = t.s.cfg.Log.(eventlog.BatchAppender)
		if t.s.cfg.Artifacts != nil {
			d.arts = t.s.cfg.Artifacts
			if d.batch != nil {
				d.arts = t.s.cfg.Artifacts.Deferred()
			}
		}
	}
	return d
}

// artifacts is the artifact store the turn's executors write to.
func (t *turn) artifacts() *artifact.Store { return t.durable().arts }

// record is the turn's Append: it defers d when it may wait (and has not
// waited too long), else commits what is pending with d, durably, and
// yields the committed events in order. A deferred event is returned
// unsealed (Seq 0, no hashes): nothing in the turn reads those fields of
// what Append returns.
func (t *turn) record(ctx context.Context, d event.Draft) (event.Event, error) {
	dur := t.durable()
	if dur.batch != nil && eventlog.MayDefer(d.Type) {
		if len(dur.pending) == 0 {
			dur.since = time.Now()
		}
		dur.pending = append(dur.pending, d)
		if time.Since(dur.since) < maxDeferral {
			return unsealed(d), nil
		}
		// The commit is only early: when it cannot be made now (a
		// cancelled turn), d stays pending for the next durable one.
		if es, err := t.commit(ctx, nil); err == nil {
			return es[len(es)-1], nil
		}
		return unsealed(d), nil
	}
	es, err := t.commit(ctx, &d)
	if err != nil {
		return event.Event{}, err
	}
	return es[len(es)-1], nil
}

// commit writes the pending drafts and then d (when not nil) in one durable
// commit and yields them. When it fails nothing is written, and the pending
// drafts stay pending for the next commit (turn.completed is written even
// after a cancellation).
func (t *turn) commit(ctx context.Context, d *event.Draft) ([]event.Event, error) {
	dur := t.durable()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	drafts := dur.pending
	if d != nil {
		drafts = append(slices.Clip(drafts), *d)
	}
	if dur.arts != nil {
		if err := dur.arts.Sync(); err != nil {
			return nil, err
		}
	}
	var es []event.Event
	if dur.batch != nil {
		var err error
		if es, err = dur.batch.AppendBatch(ctx, drafts); err != nil {
			return nil, err
		}
	} else {
		for _, d := range drafts {
			e, err := t.s.cfg.Log.Append(ctx, d)
			if err != nil {
				return nil, err
			}
			es = append(es, e)
		}
	}
	if len(es) != len(drafts) {
		return nil, fmt.Errorf("event log wrote %d events of %d", len(es), len(drafts))
	}
	dur.pending = nil
	for _, e := range es {
		if !t.stopped && !t.yield(e, nil) {
			t.stopped = true
		}
	}
	return es, nil
}

// withPending is events followed by the turn's deferred ones (unsealed), so
// that the context built for the model holds what the log will hold once
// they are committed, without a commit just to read them back.
func (t *turn) withPending(events []event.Event) []event.Event {
	dur := t.durable()
	if len(dur.pending) == 0 {
		return events
	}
	out := slices.Grow(slices.Clip(events), len(dur.pending))
	for _, d := range dur.pending {
		out = append(out, unsealed(d))
	}
	return out
}

func unsealed(d event.Draft) event.Event {
	return event.Event{V: event.Version, SessionID: d.SessionID, TurnID: d.TurnID, Type: d.Type, TS: d.TS, Payload: d.Payload}
}
