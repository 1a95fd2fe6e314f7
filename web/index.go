package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Session states as the sessions page shows them.
const (
	StateRunning = "running"
	StateWaiting = "waiting for an answer"
	StateEnded   = "ended"
)

// Session is what the index knows of one session, folded from its events.
type Session struct {
	Info        eventlog.SessionInfo
	Cwd         string
	Model       string
	Mode        string
	Source      string // hook sessions: the other agent
	Sandbox     string // session.started's sandbox: "" on, "off", "unavailable: …"
	FirstPrompt string
	Running     bool // a turn started and not completed
	// Outcomes counts the decisions by decision and actor ("allow by
	// user", "deny by policy").
	Outcomes map[Outcome]int
	// Asks are the permission.requested events with no later
	// permission.resolved, by tool call id.
	Asks map[string]*Ask
	// Rules are the session rules in force, in the order they were made
	// (policy.changed, level session: add, then remove by id).
	Rules []SessionRule
	// Priors are the prior approvals in force (spec §3 step 5): calls a
	// person allowed, which the session allows again unasked in the
	// directory they were made in, as session.Resume rebuilds them.
	Priors []PriorApproval
	next   uint64 // the next seq to read
}

// PriorApproval is a call a person allowed, as the log recorded it.
type PriorApproval struct {
	Seq     uint64 // the permission.resolved
	At      time.Time
	Cwd     string
	Tool    string
	Args    json.RawMessage
	Risk    risk.Level
	Option  string
	Session string
	canon   json.RawMessage // permission.CanonicalArgs of Args
}

// SessionRule is a session rule as policy.changed recorded it.
type SessionRule struct {
	Seq  uint64
	At   time.Time
	Cwd  string
	Rule permission.Rule
}

// verified is a session's chain check at a head seq.
type verified struct {
	seq uint64
	err error
}

// Verify checks the session's chain, once per head seq: a page load does
// not re-read every session whose log has not grown.
func (x *Index) Verify(ctx context.Context, id string) error {
	x.mu.Lock()
	s, ok := x.sessions[id]
	v, cached := x.verified[id]
	x.mu.Unlock()
	if ok && cached && v.seq == s.Info.Events {
		return v.err
	}
	err := x.log.Verify(ctx, id)
	if ok && ctx.Err() == nil {
		x.mu.Lock()
		x.verified[id] = verified{seq: s.Info.Events, err: err}
		x.mu.Unlock()
	}
	return err
}

// Outcome is a decision and who made it.
type Outcome struct {
	Decision string
	Actor    event.Actor
}

// State is running, waiting for an answer or ended.
func (s *Session) State() string {
	switch {
	case len(s.Asks) > 0:
		return StateWaiting
	case s.Running:
		return StateRunning
	}
	return StateEnded
}

// Ask is a question waiting for an answer in the log.
type Ask struct {
	SessionID string
	TurnID    string
	Seq       uint64 // the permission.requested event's seq
	At        time.Time
	Cwd       string // where the session's turn runs
	Sandbox   string // the session's sandbox setting
	// Source is the other agent of a hook session (claude-code, ...):
	// its asks are answered there, never from the web (no relay takes them).
	Source string
	Req    event.PermissionRequestedPayload
}

// Deadline is when the asking process denies the ask unanswered; zero when
// it has no time limit.
func (a *Ask) Deadline() time.Time {
	if a.Req.TimeoutMs <= 0 {
		return time.Time{}
	}
	return a.At.Add(time.Duration(a.Req.TimeoutMs) * time.Millisecond)
}

// apply folds one event into the session. It is pure.
func (s *Session) apply(e event.Event) {
	s.next = e.Seq + 1
	p, err := e.Decode()
	if err != nil {
		return
	}
	switch p := p.(type) {
	case *event.SessionStartedPayload:
		s.Cwd, s.Model, s.Mode, s.Source, s.Sandbox = p.Cwd, p.Model, p.Mode, p.SessionSource, p.Sandbox
	case *event.TurnStartedPayload:
		s.Running = true
		if p.Cwd != "" {
			s.Cwd = p.Cwd
		}
		if p.Model != "" {
			s.Model = p.Model
		}
		if p.Mode != "" {
			s.Mode = p.Mode
		}
	case *event.UserMessagePayload:
		if s.FirstPrompt == "" {
			s.FirstPrompt = p.Content
		}
	case *event.PermissionRequestedPayload:
		s.Asks[p.ToolCallID] = &Ask{SessionID: e.SessionID, TurnID: e.TurnID, Seq: e.Seq, At: e.TS,
			Cwd: s.Cwd, Sandbox: s.Sandbox, Source: s.Source, Req: *p}
	case *event.PermissionResolvedPayload:
		// As session.Resume rebuilds it: from the question of the same
		// turn the answer closes, and not when the call's arguments held
		// a secret (the masked form is not the call that was approved).
		if a := s.Asks[p.ToolCallID]; a != nil && a.TurnID == e.TurnID && p.Decision == "allow" && p.Actor == event.ActorUser &&
			p.RiskAtDecision < risk.Destructive && p.Option != executor.OptionAllowUnsandboxed && !event.MaskedQuestion(&a.Req) {
			cwd := p.Cwd
			if cwd == "" {
				cwd = s.Cwd
			}
			var m map[string]any
			if json.Unmarshal(a.Req.Args, &m) == nil {
				if canon, err := permission.CanonicalArgs(m); err == nil {
					s.Priors = append(slices.Clone(s.Priors), PriorApproval{Seq: e.Seq, At: e.TS, Cwd: cwd, Tool: a.Req.Tool,
						Args: a.Req.Args, Risk: p.RiskAtDecision, Option: p.Option, Session: e.SessionID, canon: canon})
				}
			}
		}
		delete(s.Asks, p.ToolCallID)
		s.Outcomes[Outcome{p.Decision, p.Actor}]++
	case *event.PolicyChangedPayload:
		if ra, ok := event.RevokedApprovalOf(p); ok {
			where := p.Cwd
			if where == "" {
				where = s.Cwd
			}
			// By the seq of the permission.resolved that made it (an
			// event written before seq by its arguments and directory).
			s.Priors = slices.DeleteFunc(slices.Clone(s.Priors), func(x PriorApproval) bool {
				return (ra.Seq != 0 || x.Cwd == where) && ra.Names(x.Seq, x.Tool, x.canon)
			})
			break
		}
		var r permission.Rule
		if p.Level != string(permission.LevelSession) || json.Unmarshal(p.Rule, &r) != nil {
			break
		}
		// A fresh slice: the index hands out copies of the session.
		rules := slices.DeleteFunc(slices.Clone(s.Rules), func(x SessionRule) bool { return x.Rule.ID == r.ID })
		if p.Op == "add" {
			rules = append(rules, SessionRule{Seq: e.Seq, At: e.TS, Cwd: p.Cwd, Rule: r})
		}
		s.Rules = rules
		// A revoked rule takes its tool's prior approvals with it.
		if p.Op == "remove" {
			s.Priors = slices.DeleteFunc(slices.Clone(s.Priors), func(x PriorApproval) bool {
				ok, err := path.Match(r.Tool, x.Tool)
				return ok || err != nil || r.Tool == x.Tool
			})
		}
	case *event.TurnCompletedPayload:
		s.Running = false
		// A turn never ends with an ask open: whatever is left is from a
		// process that died (closed on its next start).
	}
}

// Index keeps every session of the log folded, following the log: appends
// by this process wake it at once, appends by others are seen within the
// poll interval. Its methods may be called concurrently.
type Index struct {
	log    eventlog.Store
	poll   time.Duration
	logger *slog.Logger

	mu       sync.Mutex
	sessions map[string]*Session
	verified map[string]verified
	changed  chan struct{} // closed when anything changes, then replaced
}

// NewIndex returns an index of log; call Refresh or Run to fill it.
func NewIndex(log eventlog.Store, poll time.Duration) *Index {
	if poll <= 0 {
		poll = eventlog.DefaultPollInterval
	}
	return &Index{log: log, poll: poll, logger: slog.New(slog.DiscardHandler), sessions: map[string]*Session{}, verified: map[string]verified{}, changed: make(chan struct{})}
}

// Changed returns a channel closed at the next change.
func (x *Index) Changed() <-chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.changed
}

// Refresh reads what was appended since the last refresh.
func (x *Index) Refresh(ctx context.Context) error {
	infos, err := x.log.Sessions(ctx)
	if err != nil {
		return err
	}
	changed := false
	for _, info := range infos {
		x.mu.Lock()
		s, ok := x.sessions[info.ID]
		var from uint64 = 1
		if ok {
			from = s.next
		}
		x.mu.Unlock()
		if ok && info.Events < from {
			continue
		}
		// Fold into a copy, so readers never see half a refresh.
		n := &Session{Info: info, Outcomes: map[Outcome]int{}, Asks: map[string]*Ask{}, next: 1}
		if ok {
			*n = *s
			n.Info = info
			n.Outcomes = maps(s.Outcomes)
			n.Asks = maps(s.Asks)
		}
		for e, err := range x.log.Read(ctx, info.ID, from) {
			if err != nil {
				return err
			}
			n.apply(e)
		}
		x.mu.Lock()
		x.sessions[info.ID] = n
		x.mu.Unlock()
		changed = true
	}
	if changed {
		x.mu.Lock()
		close(x.changed)
		x.changed = make(chan struct{})
		x.mu.Unlock()
	}
	return nil
}

func maps[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Run refreshes until ctx ends.
func (x *Index) Run(ctx context.Context) error {
	sub := x.log.Subscribe("")
	defer sub.Close()
	wake := make(chan struct{}, 1)
	go func() {
		for {
			if _, err := sub.Next(ctx); err != nil && !errors.Is(err, eventlog.ErrMissed) {
				return
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}()
	t := time.NewTicker(x.poll)
	defer t.Stop()
	for {
		if err := x.Refresh(ctx); err != nil && ctx.Err() == nil {
			// A busy log is read again at the next tick.
			x.logger.Warn("reading the log", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-t.C:
		}
	}
}

// Sessions returns the sessions, most recently updated first.
func (x *Index) Sessions() []*Session {
	x.mu.Lock()
	out := make([]*Session, 0, len(x.sessions))
	for _, s := range x.sessions {
		out = append(out, s)
	}
	x.mu.Unlock()
	slices.SortFunc(out, func(a, b *Session) int {
		if c := b.Info.UpdatedAt.Compare(a.Info.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.Info.ID, b.Info.ID)
	})
	return out
}

// Session returns one session.
func (x *Index) Session(id string) (*Session, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s, ok := x.sessions[id]
	return s, ok
}

// Queue returns every open ask of every session, oldest first.
func (x *Index) Queue() []*Ask {
	x.mu.Lock()
	var out []*Ask
	for _, s := range x.sessions {
		for _, a := range s.Asks {
			out = append(out, a)
		}
	}
	x.mu.Unlock()
	slices.SortFunc(out, func(a, b *Ask) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		if c := cmp.Compare(a.SessionID, b.SessionID); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return out
}
