// Package ingest folds the hook journal (package hook/journal) into the
// event log: each record's events are appended to its session, in the
// order the records were written, and the record is removed once they are
// durable. A session seen for the first time is opened with
// session.started naming its source (claude-code, gemini-cli).
//
// Ingest may run in several processes at once: a lock file in the journal
// directory lets one fold at a time, and the store's own locking keeps
// appends from other writers in order. A record whose events were appended
// but which was not removed (the process died in between) is recognised by
// its last event, which is then the session's last, and is not appended
// twice.
package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/journal"
)

// Log is what Ingest needs of the event log.
type Log interface {
	AppendBatch(ctx context.Context, drafts []event.Draft) ([]event.Event, error)
	Read(ctx context.Context, sessionID string, fromSeq uint64) iter.Seq2[event.Event, error]
	Sessions(ctx context.Context) ([]eventlog.SessionInfo, error)
}

// window is how many of a session's last events are looked at for the ask
// a tool.completed answers.
const window = 256

// Pending reports whether the journal in dir holds records to fold.
func Pending(dir string) bool {
	ps, err := journal.List(dir)
	return err == nil && len(ps) > 0
}

// Result says what Ingest did.
type Result struct {
	// Appended counts the records whose events were appended.
	Appended int
	// Broken lists records that could not be read or whose events are
	// not valid; each was renamed to end in .broken and left in dir.
	Broken []error
}

// Ingest appends every record in dir to log and removes it. An error is
// the log's (the record stays and is folded next time); a broken record is
// set aside and reported in Result.Broken.
func Ingest(ctx context.Context, log Log, dir string) (Result, error) {
	var res Result
	unlock, err := lock(dir)
	if err != nil {
		return res, err
	}
	defer unlock()
	paths, err := journal.List(dir)
	if err != nil || len(paths) == 0 {
		return res, err
	}
	list, err := log.Sessions(ctx)
	if err != nil {
		return res, fmt.Errorf("folding the hook journal: %w", err)
	}
	last := make(map[string]uint64, len(list))
	for _, si := range list {
		last[si.ID] = si.Events
	}
	sources := map[string]string{} // the sessionSource of known sessions read so far
	for _, p := range paths {
		r, err := journal.Read(p)
		var ds []event.Draft
		if err == nil {
			ds, err = drafts(r)
		}
		if err == nil {
			if _, known := last[r.SessionID]; known {
				var lerr error
				if err, lerr = sameSource(ctx, log, sources, r); lerr != nil {
					return res, lerr
				}
			}
		}
		if err != nil {
			res.Broken = append(res.Broken, err)
			if rerr := os.Rename(p, p+".broken"); rerr != nil {
				return res, fmt.Errorf("setting aside a broken hook record: %w", rerr)
			}
			continue
		}
		n, known := last[r.SessionID]
		if !known {
			start, err := event.NewDraft(r.SessionID, "", r.TS, &event.SessionStartedPayload{
				Cwd: r.Cwd, Mode: r.Mode, SessionSource: r.Source})
			if err != nil {
				return res, err
			}
			ds = append([]event.Draft{start}, ds...)
		} else {
			tail, err := readTail(ctx, log, r.SessionID, n)
			if err != nil {
				return res, err
			}
			if len(tail) > 0 && same(tail[len(tail)-1], ds[len(ds)-1]) {
				ds = nil // appended before; the record was not removed
			} else if ds, err = resolveAsk(tail, ds, r); err != nil {
				return res, err
			}
		}
		if len(ds) > 0 {
			es, err := log.AppendBatch(ctx, ds)
			if err != nil {
				return res, fmt.Errorf("folding the hook journal: %w", err)
			}
			last[r.SessionID] = es[len(es)-1].Seq
			res.Appended++
		}
		if err := os.Remove(p); err != nil {
			return res, fmt.Errorf("folding the hook journal: %w", err)
		}
	}
	return res, nil
}

// recorded are the event types a hook records; a record with another is
// broken.
var recorded = map[event.Type]bool{
	event.ModelToolCallRequested: true, event.PermissionRequested: true,
	event.PermissionResolved: true, event.ToolCompleted: true,
}

// drafts decodes and validates a record's events. Nothing in a record is
// taken on its word (any process of the user's may write the journal):
// its source must be an agent the hook speaks to, its session id the one
// the hook makes of that source and the agent's session id, and its
// events one of the shapes the hook writes - a call and the policy's
// decision or question, or a call's completion - for one call. A
// person's decision is never read from a record: ingest infers it
// (resolveAsk) from a completion that answers an open ask.
func drafts(r *journal.Record) ([]event.Draft, error) {
	if r.SessionID == "" || len(r.Events) == 0 {
		return nil, errors.New("hook record: no session or no events")
	}
	a, err := hook.ParseAgent(r.Source)
	if err != nil {
		return nil, fmt.Errorf("hook record: source: %w", err)
	}
	if want := hook.SessionID(a, r.AgentSessionID); r.SessionID != want {
		return nil, fmt.Errorf("hook record: session %q is not the one %s's session %q is recorded in (%s)", r.SessionID, r.Source, r.AgentSessionID, want)
	}
	ds := make([]event.Draft, 0, len(r.Events))
	ps := make([]event.Payload, 0, len(r.Events))
	for i, e := range r.Events {
		if !recorded[event.Type(e.Type)] {
			return nil, fmt.Errorf("hook record event %d: a hook records no %q", i+1, e.Type)
		}
		p, err := event.Event{V: event.Version, Type: event.Type(e.Type), Payload: e.Payload}.Decode()
		if err != nil {
			return nil, fmt.Errorf("hook record event %d: %w", i+1, err)
		}
		d, err := event.NewDraft(r.SessionID, "", r.TS, p)
		if err != nil {
			return nil, fmt.Errorf("hook record event %d: %w", i+1, err)
		}
		ds = append(ds, d)
		ps = append(ps, p)
	}
	if err := shape(ps); err != nil {
		return nil, fmt.Errorf("hook record: %w", err)
	}
	return ds, nil
}

// shape checks that ps is what one hook call records: a call and the
// policy's decision (actor policy, no option) or question, or a call's
// completion, all of one tool call.
func shape(ps []event.Payload) error {
	var ids []string
	switch len(ps) {
	case 1:
		p, ok := ps[0].(*event.ToolCompletedPayload)
		if !ok {
			return fmt.Errorf("a record of one event holds a tool.completed, not %T", ps[0])
		}
		ids = append(ids, p.ToolCallID)
	case 2:
		c, ok := ps[0].(*event.ModelToolCallRequestedPayload)
		if !ok {
			return errors.New("a record of two events begins with model.tool_call_requested")
		}
		ids = append(ids, c.ToolCallID)
		switch p := ps[1].(type) {
		case *event.PermissionRequestedPayload:
			ids = append(ids, p.ToolCallID)
		case *event.PermissionResolvedPayload:
			if p.Actor != event.ActorPolicy || p.Option != "" {
				return fmt.Errorf("a hook records the policy's decisions only (actor policy, no option), not actor %q option %q", p.Actor, p.Option)
			}
			ids = append(ids, p.ToolCallID)
		default:
			return errors.New("a call is followed by permission.resolved or permission.requested")
		}
	default:
		return fmt.Errorf("a hook records one or two events per call, not %d", len(ps))
	}
	for _, id := range ids {
		if id == "" || id != ids[0] {
			return errors.New("the events are not of one tool call")
		}
	}
	return nil
}

// sameSource refuses to append r to a session that is not a hook session
// of r's source (custom-agent's own sessions have no sessionSource). The
// second error is the log's.
func sameSource(ctx context.Context, log Log, sources map[string]string, r *journal.Record) (refused, err error) {
	src, ok := sources[r.SessionID]
	if !ok {
		for e, err := range log.Read(ctx, r.SessionID, 1) {
			if err != nil {
				return nil, fmt.Errorf("folding the hook journal: %w", err)
			}
			if p, err := e.Decode(); err == nil {
				if st, ok := p.(*event.SessionStartedPayload); ok {
					src = st.SessionSource
				}
			}
			break
		}
		sources[r.SessionID] = src
	}
	if src != r.Source {
		return fmt.Errorf("hook record: session %s is not a %s hook session (its sessionSource is %q), so nothing of a hook is appended to it", r.SessionID, r.Source, src), nil
	}
	return nil, nil
}

func readTail(ctx context.Context, log Log, id string, n uint64) ([]event.Event, error) {
	from := uint64(1)
	if n > window {
		from = n - window + 1
	}
	var tail []event.Event
	for e, err := range log.Read(ctx, id, from) {
		if err != nil {
			return nil, fmt.Errorf("folding the hook journal: %w", err)
		}
		tail = append(tail, e)
	}
	return tail, nil
}

// same reports whether stored is d as the log stores it.
func same(stored event.Event, d event.Draft) bool {
	p, err := event.Prepare(d)
	if err != nil {
		return false
	}
	pd := p.Draft()
	return stored.Type == pd.Type && stored.TS.Equal(pd.TS) && bytes.Equal(stored.Payload, pd.Payload)
}

// resolveAsk: a tool.completed for a call whose ask is still open in the
// session means the person allowed it in the agent's own prompt (the call
// ran), so the ask is resolved, actor user, before it. An ask is never
// left open by a call that ran.
func resolveAsk(tail []event.Event, ds []event.Draft, r *journal.Record) ([]event.Draft, error) {
	if ds[0].Type != event.ToolCompleted {
		return ds, nil
	}
	var done struct {
		ToolCallID string `json:"toolCallId"`
	}
	if err := json.Unmarshal(ds[0].Payload, &done); err != nil {
		return ds, nil
	}
	var asked *event.PermissionRequestedPayload
	for _, e := range tail {
		p, err := e.Decode()
		if err != nil {
			continue
		}
		switch p := p.(type) {
		case *event.PermissionRequestedPayload:
			if p.ToolCallID == done.ToolCallID {
				asked = p
			}
		case *event.PermissionResolvedPayload:
			if p.ToolCallID == done.ToolCallID {
				asked = nil
			}
		}
	}
	if asked == nil {
		return ds, nil
	}
	d, err := event.NewDraft(r.SessionID, "", r.TS, &event.PermissionResolvedPayload{
		ToolCallID: asked.ToolCallID, Decision: "allow", Actor: event.ActorUser,
		Reason:         "the person allowed it in " + r.Source + "'s own prompt (the call ran)",
		RiskAtDecision: asked.RiskAtDecision, SourcedFrom: asked.SourcedFrom, Option: "allow_once", Cwd: r.Cwd,
	})
	if err != nil {
		return nil, err
	}
	return append([]event.Draft{d}, ds...), nil
}

// lockName is the lock file in the journal directory.
const lockName = ".ingest.lock"

func lockPath(dir string) string { return filepath.Join(dir, lockName) }
