// Package session is the SessionEngine: it runs turns. A turn streams the
// model, records what it says, takes every tool call it asks for through the
// executor (and so through the PermissionEngine), feeds the results back
// from the event log, and repeats until the model gives a final answer, a
// step limit is reached, the turn is cancelled, or something fails:
//
//	turn.started, user.message,
//	  (context.built, model.delta*, model.tool_call_requested*, <each call's chain>)*,
//	turn.completed {stopReason: final | max_steps | cancelled | error}
//
// Every event is durable before RunTurn yields it and before the next step.
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/contextbuild"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/tool"
)

// Log is what a session needs of the event log.
type Log interface {
	executor.Appender
	Read(ctx context.Context, sessionID string, fromSeq uint64) iter.Seq2[event.Event, error]
}

var _ Log = (eventlog.Store)(nil)

// Config is what every session of a process shares.
type Config struct {
	Log       Log
	Model     model.Gateway
	Router    *tool.Router
	Artifacts *artifact.Store
	Approver  executor.Approver // nil: every ask is denied
	// MaxSteps caps model calls per turn (default 25).
	MaxSteps int
	// System is the system prompt.
	System string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Exec configures the executor (its Now is set from Now).
	Exec executor.Options
	// Sandbox is how session.started records the sandbox: "off",
	// "unavailable: why", or "" when it confines the session's processes.
	Sandbox string
	// NewID makes session ids (default: time plus random).
	NewID func() string
	// Includes holds the tools that read what a person includes with a
	// message (MCP resources): they pass the gate like any call but are
	// never offered to the model. Nil: nothing can be included.
	Includes *tool.Router
}

// Include is something a person included with a message: read through the
// gate as a call of Tool with Args before the model is called, recorded in
// the log, and attached to the message in the model's context.
type Include struct {
	Ref  string // how it is named in user.message's includes: mcp://SERVER/URI
	Tool string
	Args json.RawMessage
}

// Info describes where and how a session runs.
type Info struct {
	Cwd, Home, ConfigHome string
	// DataDir is custom-agent's data directory (executor.Session.DataDir).
	DataDir string
	Mode    permission.Mode
	// Policy is the rules the engine is given. With Rules set it is taken
	// from Rules instead, again whenever an answer adds a rule.
	Policy       *permission.Policy
	Rules        Rules
	AllowedTools []string
	Env          []string
}

// Rules is the session's PolicyStore (policy.Store satisfies it): it makes
// the rules "allow for this session" and "always allow in this project"
// stand for, and compiles the layered policy.
type Rules interface {
	executor.Rules
	Policy() (*permission.Policy, error)
}

// Session is one conversation. Its turns run one at a time: RunTurn must
// not be called again before the previous turn's sequence has ended.
type Session struct {
	cfg     Config
	id      string
	info    Info
	turns   int
	started bool
	history []approval
	// logged are the session's events read from the log so far, in seq
	// order (the model's context is built from them).
	logged []event.Event
	// callIDs are the tool call ids the session has used (callid.go);
	// idScan is how many of logged were looked at for them.
	callIDs map[string]bool
	idScan  int
	// moved is set when the session was resumed in another directory than
	// its last turn ran in; it is recorded on the next turn.started.
	moved *Moved
	// changes are the MCP definition changes recorded in the session
	// (tool.definition_changed), by tool and new hash; nil until needed.
	changes map[string]bool
	// skill is the active skill, nil when none (skill.go).
	skill *activeSkill
	// snapshot is the digest of the last policy.snapshot recorded by
	// this process (snapshot.go).
	snapshot string
	// release ends this process's lease of the session (lease.go); nil
	// until it is held.
	release func()
	// taint is the session's first flagged tool result, from its recorded
	// events (taint.go); nil while there is none. Set once, it holds for
	// the rest of the session: the model's context keeps the result.
	taint *permission.Taint
}

// Moved describes a session resumed in another directory: where it last
// ran, and the grants made elsewhere that were not carried over (session
// rules and prior approvals hold only in the directory they were made in,
// DESIGN.md §6).
type Moved struct {
	From string
	// Rules and Approvals count the session rules and prior approvals made
	// in other directories, which do not apply here.
	Rules, Approvals int
}

const defaultMaxSteps = 25

// New starts a session; session.started is recorded with its first turn.
func New(cfg Config, info Info) *Session {
	cfg = withDefaults(cfg)
	return &Session{cfg: cfg, id: cfg.NewID(), info: info}
}

// ErrHookSession: Resume refuses a session recorded by custom-agent hook
// (its session.started names a sessionSource).
var ErrHookSession = errors.New("a hook session of another agent is not continued")

// Resume continues a recorded session: its turns so far and the calls a
// person approved in it (prior approvals, spec §3 step 5) are read from the
// log. Session rules and prior approvals are restored only when they were
// made in info.Cwd: a grant made in one repository never carries over to
// another. An event written before cwd was recorded with each grant is
// taken to be made where the turn it belongs to ran (its turn.started, else
// session.started). The session continues in the mode it last ran in or
// was changed to (info.Mode only when the log records none); a caller that
// was asked for another mode calls ChangeMode, which records the change.
func Resume(ctx context.Context, cfg Config, id string, info Info) (*Session, error) {
	cfg = withDefaults(cfg)
	s := &Session{cfg: cfg, id: id, info: info}
	// Held before the log is read, so that no other process runs turns
	// in it meanwhile; released by Close, or on error here.
	if err := s.hold(ctx); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	// asks holds the questions of the current turn still open, by tool
	// call id: a permission.resolved closes the last permission.requested
	// of its id before it (the executor asks and resolves one call at a
	// time), as the web index and replay pair them. The approval is
	// rebuilt from that question, never from a model.tool_call_requested
	// found by id: two calls of one response may share an id.
	asks := map[string]*event.PermissionRequestedPayload{}
	n := 0
	cur := "" // where the events being read were made
	var dropped Moved
	for e, err := range cfg.Log.Read(ctx, id, 1) {
		if err != nil {
			return nil, fmt.Errorf("resuming session %s: %w", id, err)
		}
		n++
		p, err := e.Decode()
		if err != nil {
			return nil, fmt.Errorf("resuming session %s: %w", id, err)
		}
		if s.taint == nil {
			s.taint = TaintOf(e)
		}
		if m, ok := recordedMode(p); ok {
			s.info.Mode = m
		}
		switch p := p.(type) {
		case *event.SessionStartedPayload:
			if p.SessionSource != "" {
				// Another agent's calls, recorded by custom-agent hook: their
				// output was never our model's, and must not become its
				// history.
				return nil, fmt.Errorf("session %s is a %s hook session: %w", id, p.SessionSource, ErrHookSession)
			}
			s.started = true
			cur = p.Cwd
		case *event.TurnStartedPayload:
			s.turns++
			if p.Cwd != "" {
				cur = p.Cwd
			}
			clear(asks)
		case *event.PermissionRequestedPayload:
			asks[p.ToolCallID] = p
		case *event.PermissionResolvedPayload:
			q, ok := asks[p.ToolCallID]
			delete(asks, p.ToolCallID)
			if !ok {
				continue
			}
			if prior, ok := priorOf(q, p); ok {
				if orElse(p.Cwd, cur) != info.Cwd {
					dropped.Approvals++
					continue
				}
				s.history = append(s.history, approval{
					Approval: Approval{Seq: e.Seq, Tool: prior.Tool, Args: q.Args, Risk: prior.Risk},
					prior:    prior,
				})
			}
		case *event.PolicyChangedPayload:
			// Session rules live as long as the session, in the
			// directory they were made in: replay those. Project rules
			// are in the project file already.
			if p.Level == "session" && p.Op == "add" && info.Rules != nil {
				if orElse(p.Cwd, cur) != info.Cwd {
					dropped.Rules++
					continue
				}
				var r permission.Rule
				if err := json.Unmarshal(p.Rule, &r); err != nil {
					return nil, fmt.Errorf("resuming session %s: seq %d: %w", id, e.Seq, err)
				}
				if err := info.Rules.AddSession(r); err != nil {
					return nil, fmt.Errorf("resuming session %s: restoring session rule %q: %w", id, r.ID, err)
				}
			}
			// A session rule revoked later (chat's /permissions revoke)
			// is gone again.
			if rid, tool, ok := revoked(p); ok && p.Level == "session" && info.Rules != nil && orElse(p.Cwd, cur) == info.Cwd {
				rm, ok := info.Rules.(SessionRuleRemover)
				if !ok {
					return nil, fmt.Errorf("resuming session %s: seq %d revokes session rule %q: %w", id, e.Seq, rid, ErrCannotRevoke)
				}
				// Not there is what revoking means: the rule may have
				// been made in another directory.
				_, _ = rm.RemoveSession(rid)
				s.forgetPriors(tool)
			}
			// One prior approval revoked (RevokeApproval).
			// By the seq of the permission.resolved that made it (an
			// event written before seq by the call's arguments, in the
			// directory it was revoked in).
			if ra, ok := event.RevokedApprovalOf(p); ok && (ra.Seq != 0 || orElse(p.Cwd, cur) == info.Cwd) {
				s.history = slices.DeleteFunc(s.history, func(x approval) bool { return ra.Names(x.Seq, x.Tool, x.prior.Args) })
			}
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("resuming session %s: %w", id, eventlog.ErrNoSession)
	}
	if cur != "" && cur != info.Cwd {
		dropped.From = cur
		s.moved = &dropped
	}
	ok = true
	return s, nil
}

func orElse(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// Moved reports whether the session was resumed in another directory than
// its last turn ran in, and what was not carried over; nil when it was not.
func (s *Session) Moved() *Moved {
	if s.moved == nil {
		return nil
	}
	m := *s.moved
	return &m
}

// priorOf turns a person's answer r to the question q into a prior
// approval, as the executor makes one live. An answer to run one call
// without the sandbox is never one. Nor is the approval of a call whose
// arguments held a secret: the log keeps them masked, and an approval
// rebuilt from the masked form would match the literal "[REDACTED]" text
// of another call, not the one the person approved (the live session
// holds the real arguments; replay leaves it out the same way).
func priorOf(q *event.PermissionRequestedPayload, r *event.PermissionResolvedPayload) (permission.Prior, bool) {
	if r.Decision != "allow" || r.Actor != event.ActorUser || r.RiskAtDecision >= risk.Destructive || r.Option == executor.OptionAllowUnsandboxed {
		return permission.Prior{}, false
	}
	if event.MaskedQuestion(q) {
		return permission.Prior{}, false
	}
	c := q
	var args map[string]any
	if err := json.Unmarshal(c.Args, &args); err != nil {
		return permission.Prior{}, false
	}
	canon, err := permission.CanonicalArgs(args)
	if err != nil {
		return permission.Prior{}, false
	}
	return permission.Prior{Tool: c.Tool, Args: canon, Risk: r.RiskAtDecision, Decision: permission.Allow, ByUser: true}, true
}

func withDefaults(cfg Config) Config {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = defaultMaxSteps
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string { return NewID(cfg.Now()) }
	}
	cfg.Exec.Now = cfg.Now
	return cfg
}

// NewID returns a session id that sorts by time and is unique: the UTC time
// to the second and 8 random hex digits.
func NewID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// ID is the session's id.
func (s *Session) ID() string { return s.id }

// Mode is the mode the session's next turn runs in.
func (s *Session) Mode() permission.Mode { return s.info.Mode }

// SetMode changes the mode from the next turn on and records nothing: a
// change a person or the system makes goes through ChangeMode, which
// records it. It must not be called while a turn runs.
func (s *Session) SetMode(m permission.Mode) { s.info.Mode = m }

// Started reports whether the session has a session.started in the log.
func (s *Session) Started() bool { return s.started }

// turn is the state of one running turn.
type turn struct {
	s       *Session
	id      string
	yield   func(event.Event, error) bool
	stopped bool       // the consumer stopped reading
	dur     durability // what is deferred and how it is committed (durable.go)
}

// Append records an event and yields it once it is durable (the turn is
// the executor's Appender): an event that gates something is durable
// before Append returns, one that may wait joins the next durable commit
// (durable.go). Once the consumer has stopped, events are still recorded
// (the chain must close) but not yielded.
func (t *turn) Append(ctx context.Context, d event.Draft) (event.Event, error) {
	return t.record(ctx, d)
}

var _ executor.BatchAppender = (*turn)(nil)

// AppendBatch records the drafts in one durable commit (recordAll).
func (t *turn) AppendBatch(ctx context.Context, ds []event.Draft) ([]event.Event, error) {
	return t.recordAll(ctx, ds)
}

func (t *turn) emit(ctx context.Context, p event.Payload) error {
	d, err := event.NewDraft(t.s.id, t.id, t.s.cfg.Now(), p)
	if err != nil {
		return err
	}
	_, err = t.Append(ctx, d)
	return err
}

// RunTurn runs one turn on input and yields its events as they are recorded.
// An error is yielded once, last, when the log cannot be written (the turn
// cannot even be closed then). Stopping the iteration early cancels the
// turn; it is still closed in the log with stopReason cancelled.
//
// An event that may wait is yielded within about 50 ms even while the turn
// waits for the model or a tool: then the loop body runs on a timer's
// goroutine, never at the same time as another call of it and never after
// RunTurn's loop has ended (durable.go). A panic there comes out of the
// loop once the turn is closed; the loop body must not call
// runtime.Goexit (t.FailNow) though.
func (s *Session) RunTurn(ctx context.Context, input string) iter.Seq2[event.Event, error] {
	return s.RunTurnIncluding(ctx, input, nil)
}

// RunTurnIncluding runs a turn as RunTurn does, with includes read (each
// through the PermissionEngine) right after the user message and before
// the first model call.
func (s *Session) RunTurnIncluding(ctx context.Context, input string, includes []Include) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		if err := s.hold(ctx); err != nil {
			yield(event.Event{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		s.turns++
		t := &turn{s: s, id: "turn-" + strconv.Itoa(s.turns), yield: yield}
		t.dur.cancel = cancel
		defer t.endTimer() // also on a panic: nothing is yielded after RunTurn returns (durable.go)
		stop, detail, err := t.run(ctx, input, includes, cancel)
		t.stopTimer() // from here on only this goroutine yields
		if err != nil && errors.Is(err, executor.ErrLog) {
			if !t.stopped {
				yield(event.Event{}, err)
			}
			return
		}
		if err := t.endSkill(ctx, "the turn ended"); err != nil && !t.stopped {
			yield(event.Event{}, fmt.Errorf("%w: %w", executor.ErrLog, err))
			return
		}
		closing := event.TurnCompletedPayload{StopReason: stop, Error: detail}
		if err := t.emit(context.WithoutCancel(ctx), closing); err != nil && !t.stopped {
			yield(event.Event{}, fmt.Errorf("%w: %w", executor.ErrLog, err))
		}
	}
}

// run is the turn's loop; it returns the stop reason.
func (t *turn) run(ctx context.Context, input string, includes []Include, cancel context.CancelFunc) (stop, detail string, err error) {
	s := t.s
	logErr := func(err error) (string, string, error) {
		return event.StopError, err.Error(), fmt.Errorf("%w: %w", executor.ErrLog, err)
	}
	mode := string(s.info.Mode)
	if mode == "" {
		mode = string(permission.ModeDefault)
	}
	if !s.started {
		if err := t.emit(ctx, event.SessionStartedPayload{Cwd: s.info.Cwd, Mode: mode, Model: s.cfg.Model.Name(), Sandbox: s.cfg.Sandbox}); err != nil {
			return logErr(err)
		}
		s.started = true
	}
	started := event.TurnStartedPayload{Cwd: s.info.Cwd, Model: s.cfg.Model.Name(), Mode: mode}
	if s.moved != nil {
		started.CwdChangedFrom = s.moved.From
	}
	if err := t.emit(ctx, started); err != nil {
		return logErr(err)
	}
	s.moved = nil
	msg := event.UserMessagePayload{Content: input}
	for _, in := range includes {
		msg.Includes = append(msg.Includes, in.Ref)
	}
	if err := t.emit(ctx, msg); err != nil {
		return logErr(err)
	}
	x := executor.New(s.cfg.Router, t, t.artifacts(), s.cfg.Approver, &s.cfg.Exec)
	if err := s.refreshPolicy(); err != nil {
		return event.StopError, err.Error(), nil
	}
	if err := t.snapshotPolicy(ctx); err != nil {
		return logErr(err)
	}
	// What the person included is read through the gate, from a router
	// the model is never offered; contextbuild attaches each result to
	// the user message.
	if len(includes) > 0 {
		router := s.cfg.Includes
		if router == nil {
			router = tool.NewRouter()
		}
		ix := executor.New(router, t, t.artifacts(), s.cfg.Approver, &s.cfg.Exec)
		for i, in := range includes {
			if stop, detail, err := t.execute(ctx, ix, executor.Call{ID: event.IncludeCallID(t.id, i+1), Tool: in.Tool, Args: in.Args}, router); stop != "" {
				return stop, detail, err
			}
		}
	}
	for step := 0; step < s.cfg.MaxSteps; step++ {
		if t.stopped {
			cancel()
		}
		if ctx.Err() != nil {
			return event.StopCancelled, "", nil
		}
		calls, stop, detail, err := t.callModel(ctx)
		if err != nil {
			return logErr(err)
		}
		if stop != "" {
			return stop, detail, nil
		}
		if len(calls) == 0 {
			return event.StopFinal, "", nil
		}
		for _, c := range calls {
			if t.stopped {
				cancel()
			}
			if stop, detail, err := t.execute(ctx, x, executor.Call{ID: c.ID, Tool: c.Name, Args: c.Args}, s.cfg.Router); stop != "" {
				return stop, detail, err
			}
		}
	}
	return event.StopMaxSteps, fmt.Sprintf("the turn reached its limit of %d model calls", s.cfg.MaxSteps), nil
}

// execute takes one call through the executor and keeps what it changed;
// it returns a stop reason when the turn must end.
func (t *turn) execute(ctx context.Context, x *executor.Executor, c executor.Call, router *tool.Router) (stop, detail string, err error) {
	s := t.s
	if err := t.definitionChanged(ctx, c, router); err != nil {
		return event.StopError, err.Error(), fmt.Errorf("%w: %w", executor.ErrLog, err)
	}
	out, err := x.Execute(ctx, t.session(), c)
	if err == nil {
		if err := t.skillUsed(ctx, c, out, router); err != nil {
			return event.StopError, err.Error(), fmt.Errorf("%w: %w", executor.ErrLog, err)
		}
	}
	if out.Prior != nil {
		s.history = append(s.history, approval{
			Approval: Approval{Seq: out.PriorSeq, Tool: out.Prior.Tool, Args: out.PriorShown, Risk: out.Prior.Risk},
			prior:    *out.Prior,
		})
	}
	// An answered question may have changed the rules besides its
	// own (an approval UI's "deny for this session" adds a session
	// deny rule as it answers): take them again.
	if out.PolicyChanged || out.Answer != nil {
		if err := s.refreshPolicy(); err != nil {
			return event.StopError, err.Error(), nil
		}
		if err := t.snapshotPolicy(ctx); err != nil {
			return event.StopError, err.Error(), fmt.Errorf("%w: %w", executor.ErrLog, err)
		}
	}
	switch {
	case errors.Is(err, executor.ErrLog):
		return event.StopError, err.Error(), err
	case err != nil && ctx.Err() != nil:
		return event.StopCancelled, "", nil
	case err != nil:
		return event.StopError, err.Error(), nil
	}
	return "", "", nil
}

// definitionChanged records tool.definition_changed before a call of an
// MCP tool whose definition is not the one pinned, once per change (tool
// and new hash) in the session.
func (t *turn) definitionChanged(ctx context.Context, c executor.Call, router *tool.Router) error {
	tl, err := router.Resolve(c.Tool)
	if err != nil {
		return nil // the executor records the unknown tool
	}
	info := tl.Info()
	ch := info.Changed
	if ch == nil || !strings.HasPrefix(info.Namespace, "mcp__") {
		return nil
	}
	key := info.Name + " " + ch.Offered
	if t.s.changes == nil {
		t.s.changes = map[string]bool{}
		for _, e := range t.s.logged {
			if e.Type == event.ToolDefinitionChanged {
				if p, err := e.Decode(); err == nil {
					p := p.(*event.ToolDefinitionChangedPayload)
					t.s.changes[p.FullName+" "+p.NewHash] = true
				}
			}
		}
	}
	if t.s.changes[key] {
		return nil
	}
	t.s.changes[key] = true
	return t.emit(context.WithoutCancel(ctx), event.ToolDefinitionChangedPayload{
		ToolCallID: c.ID, Server: strings.TrimPrefix(info.Namespace, "mcp__"),
		Tool: strings.TrimPrefix(info.Name, info.Namespace+"__"), FullName: info.Name,
		OldHash: ch.Approved, NewHash: ch.Offered,
	})
}

func (t *turn) session() *executor.Session {
	s := t.s
	xs := &executor.Session{
		ID: s.id, TurnID: t.id, Cwd: s.info.Cwd, Home: s.info.Home, ConfigHome: s.info.ConfigHome, DataDir: s.info.DataDir,
		Mode: s.info.Mode, Policy: s.info.Policy, History: s.priors(), AllowedTools: s.allowedTools(), Env: s.info.Env,
		Taint: s.taint, PolicyDigest: s.snapshot,
	}
	if s.info.Rules != nil {
		xs.Rules = s.info.Rules
	}
	if s.cfg.Artifacts != nil {
		xs.Outputs = &outputs{log: s.cfg.Log, id: s.id, arts: t.readArtifacts()}
	}
	return xs
}

// refreshPolicy takes the compiled policy from Rules, when there are Rules.
func (s *Session) refreshPolicy() error {
	if s.info.Rules == nil {
		return nil
	}
	p, err := s.info.Rules.Policy()
	if err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	s.info.Policy = p
	return nil
}

// deltaFlushBytes and deltaFlushEvery bound how model text is coalesced
// into model.delta events: enough to keep the log small, little enough to
// keep a UI live.
const (
	deltaFlushBytes = 512
	deltaFlushEvery = 100 * time.Millisecond
)

// callModel builds the context from the log, streams one model response and
// records it. It returns the tool calls asked for, or a stop reason when the
// turn must end (stream error, cancellation).
func (t *turn) callModel(ctx context.Context) (calls []model.ToolCall, stop, detail string, err error) {
	s := t.s
	// The context comes from the log (spec §10). Events already read are
	// kept, so each model call reads only what was appended since the last.
	from := uint64(1)
	if n := len(s.logged); n > 0 {
		from = s.logged[n-1].Seq + 1
	}
	for e, err := range s.cfg.Log.Read(ctx, s.id, from) {
		if err != nil {
			if ctx.Err() != nil {
				return nil, event.StopCancelled, "", nil
			}
			return nil, "", "", err
		}
		s.logged = append(s.logged, e)
	}
	evs := t.withPending(s.logged)
	s.noteCallIDs(evs)
	c, err := contextbuild.Build(evs)
	if err != nil {
		return nil, event.StopError, err.Error(), nil
	}
	if err := t.emit(ctx, event.ContextBuiltPayload{MessageCount: len(c.Messages), ToolResultsIncluded: c.ToolResultsIncluded}); err != nil {
		return nil, "", "", err
	}
	req := model.Request{System: s.cfg.System, Messages: c.Messages, Tools: t.toolSpecs()}
	var buf string
	// reply is the whole text of this response, scanned when it ends
	// (scanReply): a marker may be cut between two model.delta events.
	var reply strings.Builder
	last := s.cfg.Now()
	flush := func() error {
		if buf == "" {
			return nil
		}
		text := buf
		buf = ""
		last = s.cfg.Now()
		return t.emit(context.WithoutCancel(ctx), event.ModelDeltaPayload{Text: text})
	}
	done := false
	for ch, serr := range s.cfg.Model.Stream(ctx, req) {
		if serr != nil {
			if err := flush(); err != nil {
				return nil, "", "", err
			}
			if err := t.scanReply(ctx, reply.String()); err != nil {
				return nil, "", "", err
			}
			if ctx.Err() != nil {
				return nil, event.StopCancelled, "", nil
			}
			return nil, event.StopError, "model: " + serr.Error(), nil
		}
		switch ch.Kind {
		case model.ChunkText:
			buf += ch.Text
			reply.WriteString(ch.Text)
			if len(buf) >= deltaFlushBytes || s.cfg.Now().Sub(last) >= deltaFlushEvery {
				if err := flush(); err != nil {
					return nil, "", "", err
				}
			}
		case model.ChunkToolCall:
			if err := flush(); err != nil {
				return nil, "", "", err
			}
			tc := ch.ToolCall
			given := tc.ID
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("%s_call_%d", t.id, len(calls)+1)
			}
			// Unique in the session: two calls never share an id.
			tc.ID = s.uniqueCallID(tc.ID)
			rec := event.ModelToolCallRequestedPayload{ToolCallID: tc.ID, Tool: tc.Name, Args: maskedArgs(tc.Args)}
			if given != "" && given != tc.ID {
				rec.ModelID = given
			}
			if err := t.emit(ctx, rec); err != nil {
				return nil, "", "", err
			}
			calls = append(calls, tc)
		case model.ChunkDone:
			done = true
		}
		if t.stopped {
			break
		}
	}
	if err := flush(); err != nil {
		return nil, "", "", err
	}
	if err := t.scanReply(ctx, reply.String()); err != nil {
		return nil, "", "", err
	}
	if !done {
		if ctx.Err() != nil || t.stopped {
			return nil, event.StopCancelled, "", nil
		}
		return nil, event.StopError, "model: the stream ended without finishing its response", nil
	}
	return calls, "", "", nil
}

func (t *turn) toolSpecs() []model.ToolSpec {
	var specs []model.ToolSpec
	for _, info := range t.s.cfg.Router.Infos() {
		specs = append(specs, contextbuild.ToolSpec(info.Name, info.Schema))
	}
	return specs
}
