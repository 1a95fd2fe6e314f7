// Package ingest folds the hook journal (package hook/journal) into the
// event log: each record's events are appended to its session, in the
// order the records were written, and the record is removed once they are
// durable. A session seen for the first time is opened with
// session.started naming its source (claude-code, gemini-cli).
//
// Ingest may run in several processes at once: a lock file in the journal
// directory lets one fold at a time, and the store's own locking keeps
// appends from other writers in order. A journal file is removed once all
// its records are appended; when the process died before (or in between),
// the records already appended are recognised, for each session, as the
// leading run of the file's records of that session whose events are, in
// order, the last events of the session in the log, and are not appended
// twice. A record whose events the log already holds anywhere else (a
// replayed line) is reported as broken and set aside, never dropped
// silently, and never makes ingest skip the records before it.
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
	"strings"

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

// Pending reports whether the journal in dir holds records to fold, or
// cannot be listed (a journal directory that is a symlink): then Ingest
// says why, rather than nobody.
func Pending(dir string) bool {
	ps, err := journal.List(dir)
	return err != nil || len(ps) > 0
}

// Result says what Ingest did.
type Result struct {
	// Appended counts the records whose events were appended.
	Appended int
	// Broken lists records that could not be read or whose events are
	// not valid, records the log already holds (replayed lines), lines
	// torn by a crash (journal.ErrTorn), and entries under a journal
	// file's name that are not journal files (journal.ErrNotRegular);
	// each was set aside in a file ending in .broken in dir.
	Broken []error
}

// Ingest appends every record in dir to log and removes it. An error is
// the log's (the record stays and is folded next time); a broken record is
// set aside and reported in Result.Broken.
func Ingest(ctx context.Context, log Log, dir string) (Result, error) {
	var res Result
	if _, err := journal.List(dir); err != nil {
		return res, err // a symlink in its place: not even its lock is taken
	}
	unlock, err := lock(dir)
	if err != nil {
		return res, err
	}
	defer unlock()
	paths, err := journal.Take(dir)
	if err != nil || len(paths) == 0 {
		return res, err
	}
	list, err := log.Sessions(ctx)
	if err != nil {
		return res, fmt.Errorf("folding the hook journal: %w", err)
	}
	f := &folder{log: log, res: &res, last: make(map[string]uint64, len(list)), sources: map[string]string{}}
	for _, si := range list {
		f.last[si.ID] = si.Events
	}
	for _, p := range paths {
		if err := f.file(ctx, p); err != nil {
			return res, err
		}
	}
	return res, nil
}

// folder folds the journal's files, one after another.
type folder struct {
	log Log
	res *Result
	// last is each known session's last seq; sources the sessionSource
	// of the known sessions read so far.
	last    map[string]uint64
	sources map[string]string
}

// candidate is a record of a file and its events as drafts, or why it is
// broken.
type candidate struct {
	r   *journal.Record
	ds  []event.Draft
	err error
	raw []byte
}

// file folds the records of the journal file p and removes it; its broken
// lines are set aside.
func (f *folder) file(ctx context.Context, p string) error {
	lines, err := journal.ReadFile(p)
	if errors.Is(err, journal.ErrNotRegular) {
		// A symlink, FIFO, hard link or another user's file under a
		// journal name: never read; renamed aside (the name itself, not
		// what it points to) for a person to look at.
		f.res.Broken = append(f.res.Broken, err)
		if err := os.Rename(p, p+".broken"); err != nil {
			return fmt.Errorf("setting aside a hook journal entry that is not a journal file: %w", err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	cs := make([]candidate, len(lines))
	for i, l := range lines {
		c := candidate{r: l.Record, err: l.Err, raw: l.Raw}
		if c.err == nil {
			c.ds, c.err = drafts(c.r)
		}
		if c.err == nil {
			if _, known := f.last[c.r.SessionID]; known {
				var lerr error
				if c.err, lerr = sameSource(ctx, f.log, f.sources, c.r); lerr != nil {
					return lerr
				}
			}
		}
		cs[i] = c
	}
	done, err := f.appended(ctx, cs)
	if err != nil {
		return err
	}
	var broken [][]byte
	for i, c := range cs {
		if c.err != nil {
			f.res.Broken = append(f.res.Broken, c.err)
			broken = append(broken, c.raw)
			continue
		}
		if done[i] {
			continue // appended by a fold that did not finish
		}
		dup, err := f.record(ctx, c)
		if err != nil {
			return err
		}
		if dup != nil {
			f.res.Broken = append(f.res.Broken, dup)
			broken = append(broken, c.raw)
		}
	}
	if len(broken) > 0 {
		if !strings.HasSuffix(p, ".jsonl") { // a one-record file is renamed whole
			if err := os.Rename(p, p+".broken"); err != nil {
				return fmt.Errorf("setting aside a broken hook record: %w", err)
			}
			return nil
		}
		if err := journal.SetAside(p, broken); err != nil {
			return err
		}
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("folding the hook journal: %w", err)
	}
	return nil
}

// appended returns the records of cs whose events were appended already,
// by a fold that died before it removed the file. For each known session
// they are a leading run of its records in cs: the longest one (c1..ck)
// whose events are, in order, the session's last events in the log
// (leaving out the asks ingest resolved, actor user, which no record
// holds). Records are appended in file order, so a fold that died
// appended such a run and nothing after it. No other record is taken as
// appended: a record equal to the log's last events that does not begin
// such a run (a replayed line) is left to record, which reports it.
func (f *folder) appended(ctx context.Context, cs []candidate) (map[int]bool, error) {
	bySession := map[string][]int{}
	var order []string
	for i, c := range cs {
		if c.err != nil {
			continue
		}
		id := c.r.SessionID
		if _, known := f.last[id]; !known {
			continue
		}
		if _, ok := bySession[id]; !ok {
			order = append(order, id)
		}
		bySession[id] = append(bySession[id], i)
	}
	done := map[int]bool{}
	for _, id := range order {
		idx := bySession[id]
		n := f.last[id]
		last, err := readTail(ctx, f.log, id, n, 1)
		if err != nil {
			return nil, err
		}
		if len(last) == 0 {
			continue
		}
		// Only a run ending in a record whose last event is the log's
		// last can have been appended; most folds find none and read no
		// more of the log.
		k := 0
		var tail []event.Event
		for j := len(idx); j > 0 && k == 0; j-- {
			ds := cs[idx[j-1]].ds
			if !same(last[len(last)-1], ds[len(ds)-1]) {
				continue
			}
			if tail == nil {
				// Each record is at most one resolved ask more in the log.
				want := uint64(0)
				for _, i := range idx[:j] {
					want += uint64(len(cs[i].ds)) + 1
				}
				if tail, err = readTail(ctx, f.log, id, n, want); err != nil {
					return nil, err
				}
				tail = withoutResolvedAsks(tail)
			}
			if endsWith(tail, cs, idx[:j]) {
				k = j
			}
		}
		for _, i := range idx[:k] {
			done[i] = true
		}
	}
	return done, nil
}

// withoutResolvedAsks leaves out the permission.resolved events of actor
// user: ingest adds them (resolveAsk); no hook record holds one.
func withoutResolvedAsks(es []event.Event) []event.Event {
	out := es[:0:0]
	for _, e := range es {
		if e.Type == event.PermissionResolved {
			if p, err := e.Decode(); err == nil {
				if r, ok := p.(*event.PermissionResolvedPayload); ok && r.Actor == event.ActorUser {
					continue
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// endsWith reports whether the events of the records cs[idx...], in
// order, are the last events of tail.
func endsWith(tail []event.Event, cs []candidate, idx []int) bool {
	var ds []event.Draft
	for _, i := range idx {
		ds = append(ds, cs[i].ds...)
	}
	if len(ds) > len(tail) {
		return false
	}
	tail = tail[len(tail)-len(ds):]
	for i := range ds {
		if !same(tail[i], ds[i]) {
			return false
		}
	}
	return true
}

// record appends one record's events (a new session opened first). A
// record whose events the session's recent events already hold (a line
// replayed into the journal) is not appended: dup says why, and the
// caller reports it as broken.
func (f *folder) record(ctx context.Context, c candidate) (dup error, err error) {
	r, ds := c.r, c.ds
	n, known := f.last[r.SessionID]
	if !known {
		start, err := event.NewDraft(r.SessionID, "", r.TS, &event.SessionStartedPayload{
			Cwd: r.Cwd, Mode: r.Mode, SessionSource: r.Source})
		if err != nil {
			return nil, err
		}
		ds = append([]event.Draft{start}, ds...)
	} else {
		tail, err := readTail(ctx, f.log, r.SessionID, n, window)
		if err != nil {
			return nil, err
		}
		for _, e := range tail {
			if same(e, ds[len(ds)-1]) {
				return fmt.Errorf("hook record: session %s already holds its events (seq %d): a replayed journal line, not appended twice", r.SessionID, e.Seq), nil
			}
		}
		if ds, err = resolveAsk(tail, ds, r); err != nil {
			return nil, err
		}
	}
	es, err := f.log.AppendBatch(ctx, ds)
	if err != nil {
		return nil, fmt.Errorf("folding the hook journal: %w", err)
	}
	f.last[r.SessionID] = es[len(es)-1].Seq
	f.res.Appended++
	return nil, nil
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

// readTail reads the last (up to) k events of the session id, whose last
// seq is n.
func readTail(ctx context.Context, log Log, id string, n uint64, k uint64) ([]event.Event, error) {
	from := uint64(1)
	if n > k {
		from = n - k + 1
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
