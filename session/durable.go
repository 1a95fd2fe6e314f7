package session

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// maxDeferral bounds, in wall time, how long a deferred event waits in
// memory: the next event appended after it commits it once it has waited
// this long (the model.delta of a long answer), and when nothing is
// appended (a tool runs, the model has not started answering) a timer
// commits it. So a reader sees a tool's tool.completed, or streamed text,
// within about this much time. 50 ms is below what a person notices and,
// with a fast model, longer than a whole tool call, so the timer rarely
// fires and the events still join the next durable commit.
const maxDeferral = 50 * time.Millisecond

// durability is how a turn writes the log (DESIGN §3 "Durability"): an
// event that gates something (eventlog.MayDefer false: permission.resolved,
// permission.requested, turn.completed, policy.changed, any type not known
// to be harmless …) is durable before Append returns, and takes with it, in
// the same commit, the events deferred since the last one. A deferred event
// is not in the store, nor yielded to the turn's reader, until that commit,
// or until the timer commits it maxDeferral after it was deferred. The
// artifacts the turn's executors write are synced just before each commit,
// so every blob an event names is durable before the event is.
//
// The timer calls the turn's yield from its own goroutine, which Go allows
// for an iter.Seq2 while the iterator function has not returned and as
// long as no two calls overlap. mu makes that so: every commit, and the
// yields of what it committed, run holding mu, on the turn's goroutine or
// the timer's; and stopTimer, which the turn calls once its loop has
// ended (before it yields an error, before RunTurn returns, also on a
// panic), takes mu and closes the timer, so a timer callback still waiting
// for mu yields nothing. The
// reader's loop body may thus run on the timer's goroutine while the
// turn's goroutine waits for the model or a tool: it is never run twice at
// once, and it happens before anything the reader does after the loop.
type durability struct {
	ready bool
	batch eventlog.BatchAppender // nil: the log cannot batch, every event is durable on its own
	blobs eventlog.BlobAppender  // batch, when the log also keeps small outputs in its commits
	arts  *artifact.Store        // the Carrying or Deferred view the turn's executors write to; nil without a store

	// cancel cancels the turn; the timer calls it when the reader stops
	// reading (or its loop body panics) under a timer's yield.
	cancel context.CancelFunc

	mu      sync.Mutex
	pending []event.Draft
	since   time.Time   // when the oldest pending draft was deferred
	timer   *time.Timer // commits the pending drafts maxDeferral after since; nil until first needed
	ctx     context.Context
	closed  bool // the timer commits and yields no more
	inTimer bool // the commit running is the timer's
	// gone is set once the reader stopped reading (its yield returned
	// false, or panicked under the timer): nothing is yielded after.
	gone bool
	// panicked is what the reader's loop body panicked with under the
	// timer's yield, raised again on the turn's goroutine by endTimer.
	panicked any
	// flushed are the events the timer committed since the model's
	// context was last built (withPending): the turn may have read the
	// log just before that commit.
	flushed []event.Event
}

func (t *turn) durable() *durability {
	d := &t.dur
	if !d.ready {
		d.ready = true
		d.batch, _ = t.s.cfg.Log.(eventlog.BatchAppender)
		d.blobs, _ = t.s.cfg.Log.(eventlog.BlobAppender)
		switch arts := t.s.cfg.Artifacts; {
		case arts == nil:
		case d.blobs != nil:
			// A small output rides in the commit of the event that
			// names it: no fsync of its own.
			d.arts = arts.WithSource(d.blobs).Carrying()
		case d.batch != nil:
			d.arts = arts.Deferred()
		default:
			d.arts = arts
		}
	}
	return d
}

// artifacts is the artifact store the turn's executors write to.
func (t *turn) artifacts() *artifact.Store { return t.durable().arts }

// readArtifacts is the artifact store read_output reads: it finds the
// outputs the log keeps too.
func (t *turn) readArtifacts() *artifact.Store {
	if d := t.durable(); d.blobs != nil {
		return t.s.cfg.Artifacts.WithSource(d.blobs)
	}
	return t.s.cfg.Artifacts
}

// record is the turn's Append: it defers d when it may wait (and has not
// waited too long), else commits what is pending with d, durably, and
// yields the committed events in order. A deferred event is returned
// unsealed (Seq 0, no hashes): nothing in the turn reads those fields of
// what Append returns.
func (t *turn) record(ctx context.Context, d event.Draft) (event.Event, error) {
	dur := t.durable()
	dur.mu.Lock()
	defer t.unlock()
	if dur.batch != nil && eventlog.MayDefer(d.Type) && !flagged(d) {
		if len(dur.pending) == 0 {
			dur.since = time.Now()
			t.arm(ctx)
		}
		dur.pending = append(dur.pending, d)
		if dur.arts != nil {
			dur.arts.SyncAhead() // the output d may name, durable by the commit that takes d
		}
		if time.Since(dur.since) < maxDeferral {
			return unsealed(d), nil
		}
		// The commit is only early: when it cannot be made now (a
		// cancelled turn), d stays pending for the next durable one.
		if es, err := t.commit(ctx); err == nil {
			return es[len(es)-1], nil
		}
		return unsealed(d), nil
	}
	es, err := t.commit(ctx, d)
	if err != nil {
		return event.Event{}, err
	}
	return es[len(es)-1], nil
}

// recordAll is the turn's AppendBatch (executor.BatchAppender): ds are
// committed together, durably, with what is pending, all or none, and
// yielded in order: the executor's permission.resolved with the
// policy.changed it made and the tool.started after it, one commit and
// one fsync. Without a log that batches, each is recorded on its own.
func (t *turn) recordAll(ctx context.Context, ds []event.Draft) ([]event.Event, error) {
	dur := t.durable()
	if dur.batch == nil {
		var out []event.Event
		for _, d := range ds {
			e, err := t.record(ctx, d)
			if err != nil {
				return out, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	dur.mu.Lock()
	defer t.unlock()
	es, err := t.commit(ctx, ds...)
	if err != nil {
		return nil, err
	}
	return es[len(es)-len(ds):], nil
}

// unlock releases mu on the turn's goroutine, and tells the turn when the
// reader stopped reading under the timer (t.stopped is the turn
// goroutine's own).
func (t *turn) unlock() {
	if t.dur.gone {
		t.stopped = true
	}
	t.dur.mu.Unlock()
}

// arm starts the timer for the pending drafts (mu held). Its commits are
// made without ctx's cancellation, as turn.completed is: a cancelled turn
// does not lose what it deferred.
func (t *turn) arm(ctx context.Context) {
	dur := &t.dur
	if dur.closed {
		return
	}
	dur.ctx = context.WithoutCancel(ctx)
	if dur.timer == nil {
		dur.timer = time.AfterFunc(maxDeferral, t.late)
		return
	}
	dur.timer.Reset(maxDeferral)
}

// late runs on the timer's goroutine: it commits the pending drafts when
// the oldest has waited maxDeferral and nothing committed them. A callback
// of an earlier arming, which started before the commit that stopped it,
// finds nothing pending or nothing due yet and leaves it to the timer as
// armed now. When the commit fails the drafts stay pending for the turn's
// next commit, which reports the error.
func (t *turn) late() {
	dur := &t.dur
	dur.mu.Lock()
	defer dur.mu.Unlock()
	if dur.closed || len(dur.pending) == 0 || time.Since(dur.since) < maxDeferral {
		return
	}
	dur.inTimer = true
	es, err := t.commit(dur.ctx)
	dur.inTimer = false
	if err == nil {
		dur.flushed = append(dur.flushed, es...)
	}
}

// stopTimer ends the timer's part: once it returns, only the turn's
// goroutine commits and yields.
func (t *turn) stopTimer() {
	dur := &t.dur
	dur.mu.Lock()
	dur.closed = true
	if dur.timer != nil {
		dur.timer.Stop()
	}
	t.unlock()
}

// endTimer stops the timer, when the turn has not yet, and raises again on
// the turn's goroutine a panic of the reader's loop body under the timer:
// RunTurn defers it, so the panic comes out of the reader's loop once the
// turn is closed in the log, as a panic in a loop body does.
func (t *turn) endTimer() {
	t.stopTimer()
	if p := t.dur.panicked; p != nil {
		t.dur.panicked = nil
		panic(p)
	}
}

// commit writes the pending drafts and then ds in one durable commit and
// yields them (mu held). When it fails nothing is written, and the pending
// drafts stay pending for the next commit (turn.completed is written even
// after a cancellation).
func (t *turn) commit(ctx context.Context, ds ...event.Draft) ([]event.Event, error) {
	dur := t.durable()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	drafts := dur.pending
	if len(ds) > 0 {
		drafts = append(slices.Clip(drafts), ds...)
	}
	var carried []artifact.Carried
	if dur.arts != nil {
		carried = dur.arts.Take() // the small outputs the drafts name: into the same commit
		if err := dur.arts.Sync(); err != nil {
			dur.arts.Settle(carried, false)
			return nil, err
		}
	}
	var es []event.Event
	if dur.batch != nil {
		var err error
		if len(carried) > 0 {
			blobs := make([]eventlog.Blob, len(carried))
			for i, c := range carried {
				blobs[i] = eventlog.Blob(c)
			}
			es, err = dur.blobs.AppendBatchBlobs(ctx, drafts, blobs)
		} else {
			es, err = dur.batch.AppendBatch(ctx, drafts)
		}
		dur.arts.Settle(carried, err == nil)
		if err != nil {
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
	if dur.timer != nil {
		dur.timer.Stop()
	}
	for _, e := range es {
		t.observe(e)
		if !dur.gone && !t.show(e) {
			dur.gone = true
		}
	}
	return es, nil
}

// show yields e. On the timer's goroutine a panic of the reader's loop
// body is kept for endTimer to raise on the turn's, and the turn is
// cancelled, as when the reader stops.
func (t *turn) show(e event.Event) (more bool) {
	dur := &t.dur
	if !dur.inTimer {
		return t.yield(e, nil) // the turn's goroutine: a panic goes up as it would
	}
	defer func() {
		if p := recover(); p != nil {
			dur.panicked, more = p, false
		}
		if !more && dur.cancel != nil {
			dur.cancel()
		}
	}()
	return t.yield(e, nil)
}

// withPending is events followed by the events the timer committed after
// them and by the turn's deferred ones (unsealed), so that the context
// built for the model holds what the log will hold once they are
// committed, without a commit just to read them back.
func (t *turn) withPending(events []event.Event) []event.Event {
	dur := t.durable()
	dur.mu.Lock()
	defer t.unlock()
	var last uint64
	if n := len(events); n > 0 {
		last = events[n-1].Seq
	}
	out := slices.Clip(events)
	for _, e := range dur.flushed {
		if e.Seq > last {
			out = append(out, e)
		}
	}
	dur.flushed = nil
	for _, d := range dur.pending {
		out = append(out, unsealed(d))
	}
	return out
}

func unsealed(d event.Draft) event.Event {
	return event.Event{V: event.Version, SessionID: d.SessionID, TurnID: d.TurnID, Type: d.Type, TS: d.TS, Payload: d.Payload}
}
