// Package replay decides every recorded call of a session again, from the
// event log alone: under the policy recorded with it, or under a candidate
// policy ("what would this rule have allowed?"), on today's engine.
//
// What a decision depended on is recorded with it (package record): the
// policy in force as policy.snapshot events, and on the decision's event
// the request the engine was given, its engine version and build. The
// prior approvals a decision was given are rebuilt from the log in order
// (a person's approvals, in the directory they were made in, less those a
// revoked session rule took with it) and checked against the digest
// recorded with the decision. A call whose facts are missing, masked or
// inconsistent is reported as not replayable, with why: replay never
// guesses.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"path"
	"slices"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/replay/record"
	"github.com/custom-agent/custom-agent/sandbox"
)

// Log is what a replay reads: a session's events, and its chain's check.
type Log interface {
	Read(ctx context.Context, sessionID string, fromSeq uint64) iter.Seq2[event.Event, error]
	Verify(ctx context.Context, sessionID string) error
}

// Options say what a replay decides under.
type Options struct {
	// Candidate, when non-nil, is the candidate policy: its rules take the
	// place of the recorded user and project rules (every rule recorded
	// at those levels is dropped, whether or not it counted), ahead of
	// the recorded flag and session rules and the built-in rules, which
	// stay. Nil replays under the recorded policy only.
	Candidate []permission.Rule
	// Since, when set, leaves out the calls decided before it.
	Since time.Time
}

// Outcome is one decision of the engine, as replay compares them.
type Outcome struct {
	Decision    string              `json:"decision"` // allow, ask or deny
	Risk        risk.Level          `json:"risk"`
	SourcedFrom string              `json:"sourcedFrom"`
	Rule        *permission.RuleRef `json:"rule,omitempty"`
	Reason      string              `json:"reason,omitempty"`
	// Finding is the finding that raised the risk most ("" when none).
	Finding string `json:"finding,omitempty"`
	// Sandbox is the profile the call's processes ran under
	// ("read-only", "workspace", "workspace+network"), recorded on its
	// tool.started, and the one today's decision implies; "" for a call
	// that ran none in the sandbox.
	Sandbox string `json:"sandbox,omitempty"`
}

// same reports whether two outcomes are the same decision: verdict, risk,
// step and rule (reasons aside, whose words may change).
func (o *Outcome) same(p *Outcome) bool {
	return o.Decision == p.Decision && o.Risk == p.Risk && o.SourcedFrom == p.SourcedFrom && sameRule(o.Rule, p.Rule)
}

func sameRule(a, b *permission.RuleRef) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ID == b.ID && a.Level == b.Level && a.Decision == b.Decision
}

// Answer is how an asked call was resolved: by whom, and with what.
type Answer struct {
	Decision string      `json:"decision"` // allow or deny
	Actor    event.Actor `json:"actor"`
	Option   string      `json:"option,omitempty"`
	Reason   string      `json:"reason"`
}

// Call is one recorded decision, decided again.
type Call struct {
	// Seq is the seq of the call's permission.resolved; Time is its
	// time.
	Seq        uint64          `json:"seq"`
	Time       time.Time       `json:"ts"`
	TurnID     string          `json:"turnId"`
	ToolCallID string          `json:"toolCallId"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	// Recorded is what the engine decided then; Answer, for a call it
	// asked, is who answered and how.
	Recorded Outcome `json:"recorded"`
	Answer   *Answer `json:"answer,omitempty"`
	// Today is the recorded request and policy decided by today's
	// engine, set only when it decides otherwise than Recorded; Change
	// says what changed (the rule or the finding).
	Today  *Outcome `json:"today,omitempty"`
	Change string   `json:"change,omitempty"`
	// Taint, when set, says that the taint recorded with the request is
	// not the one the log's flagged tool results give (a fact dropped or
	// forged); Today is then decided with the log's.
	Taint string `json:"taint,omitempty"`
	// History, when set, says that the prior approvals recorded with the
	// request (by digest) are not the ones the log gives (an approval
	// forged or lost: a resume that paired an answer with the wrong call);
	// Today is then decided with the log's.
	History string `json:"history,omitempty"`
	// Candidate is the decision under the candidate policy, when one is
	// given.
	Candidate *Outcome `json:"candidate,omitempty"`
	// Differs is set when Today or Candidate differs from Recorded.
	Differs bool `json:"differs"`
	// NotReplayable says why the call cannot be decided again; the other
	// results are then unset.
	NotReplayable string `json:"notReplayable,omitempty"`
	// Engine and Build are the engine version and build that decided it.
	Engine int    `json:"engine,omitempty"`
	Build  string `json:"build,omitempty"`
}

// Session is the replay of one session.
type Session struct {
	ID string `json:"sessionId"`
	// Cwd is where the session started.
	Cwd   string `json:"cwd,omitempty"`
	Calls []Call `json:"calls"`
	// Differences counts the calls that differ; NotReplayable those that
	// could not be decided again.
	Differences   int `json:"differences"`
	NotReplayable int `json:"notReplayable"`
	// Why, when set, says why no call of the session can be decided
	// again (recorded before decision facts, a hook session).
	Why string `json:"why,omitempty"`
	// BuiltinChanged is set when the session's built-in rules are not
	// this build's: today's are used, and a call they decide otherwise
	// is an engine change.
	BuiltinChanged bool `json:"builtinChanged,omitempty"`
}

// ErrChain wraps the error of a session whose hash chain does not verify:
// its events may have been edited, and nothing is decided from them.
var ErrChain = errors.New("the hash chain does not verify")

// FirstRecorded is the first engine version whose decisions are recorded
// with their facts.
const FirstRecorded = 1

// NotRecordedBefore is why a call recorded before decision facts existed
// is not replayable.
var NotRecordedBefore = fmt.Sprintf("not replayable: recorded before v%d (the log holds no decision facts for it)", FirstRecorded)

// prior is a prior approval and where it was made.
type prior struct {
	p   permission.Prior
	cwd string
	seq uint64 // of the permission.resolved that made it
}

// replayer is the state of one session's replay, event by event.
type replayer struct {
	opts      Options
	engine    permission.Engine
	out       *Session
	cwd       string // where the events being read were made
	snapshot  *event.PolicySnapshotPayload
	recorded  *permission.Policy
	candidate *permission.Policy
	polErr    string // why the current snapshot could not be compiled
	history   []prior
	requested map[string]*event.PermissionRequestedPayload
	calls     map[string]*event.ModelToolCallRequestedPayload
	hook      string
	// listed maps a call's id to its index in out.Calls; today to what
	// today's engine decided for it under the recorded policy (for the
	// sandbox profile, recorded after the decision).
	listed map[string]int
	today  map[string]permission.Decision
	// taint is the first tool result of the session the scanner flagged,
	// from the log (record.TaintOf): what every request after it must
	// carry as Request.Taint.
	taint *permission.Taint
	// taintAsked is the taint when each asked call was decided (its
	// permission.requested), for its replay at its permission.resolved.
	taintAsked map[string]*permission.Taint
}

// Replay decides every recorded call of the session again. A chain that
// does not verify is an error wrapping ErrChain and *eventlog.ChainError
// (which names the first bad seq); so is a log that cannot be read.
func Replay(ctx context.Context, log Log, id string, opts Options) (*Session, error) {
	if err := log.Verify(ctx, id); err != nil {
		var ce *eventlog.ChainError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("session %s: %w: first bad seq %d: %s: %w", id, ErrChain, ce.Seq, ce.Problem, err)
		}
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	r := &replayer{
		opts: opts, out: &Session{ID: id, Calls: []Call{}},
		requested:  map[string]*event.PermissionRequestedPayload{},
		calls:      map[string]*event.ModelToolCallRequestedPayload{},
		listed:     map[string]int{},
		today:      map[string]permission.Decision{},
		taintAsked: map[string]*permission.Taint{},
	}
	n := 0
	// The events read are checked again as they are read: a session still
	// being written has events past the head Verify checked.
	chain := eventlog.NewChainChecker(id)
	for e, err := range log.Read(ctx, id, 1) {
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", id, err)
		}
		n++
		if ce := chain.Next(e); ce != nil {
			return nil, fmt.Errorf("session %s: %w: first bad seq %d: %s: %w", id, ErrChain, ce.Seq, ce.Problem, ce)
		}
		if err := r.event(e); err != nil {
			return nil, fmt.Errorf("session %s: %w", id, err)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("session %s: %w", id, eventlog.ErrNoSession)
	}
	s := r.out
	for i := range s.Calls {
		switch {
		case s.Calls[i].NotReplayable != "":
			s.NotReplayable++
		case s.Calls[i].Differs:
			s.Differences++
		}
	}
	switch {
	case r.hook != "":
		s.Why = "not replayable: a hook session of " + r.hook + " records another agent's decisions without their facts"
	case len(s.Calls) > 0 && s.NotReplayable == len(s.Calls) && allBefore(s.Calls):
		s.Why = NotRecordedBefore
	}
	return s, nil
}

func allBefore(calls []Call) bool {
	for i := range calls {
		if calls[i].NotReplayable != NotRecordedBefore {
			return false
		}
	}
	return true
}

func (r *replayer) event(e event.Event) error {
	p, err := e.Decode()
	if err != nil {
		return err
	}
	switch p := p.(type) {
	case *event.SessionStartedPayload:
		r.cwd, r.out.Cwd, r.hook = p.Cwd, p.Cwd, p.SessionSource
	case *event.TurnStartedPayload:
		if p.Cwd != "" {
			r.cwd = p.Cwd
		}
	case *event.PolicySnapshotPayload:
		r.policy(p)
	case *event.ModelToolCallRequestedPayload:
		r.calls[p.ToolCallID] = p
	case *event.PermissionRequestedPayload:
		r.requested[p.ToolCallID] = p
		// An asked call was decided here: the taint then is its.
		r.taintAsked[p.ToolCallID] = r.taint
	case *event.PermissionResolvedPayload:
		r.resolved(e, p)
	case *event.ToolStartedPayload:
		r.started(p)
	case *event.ToolCompletedPayload, *event.ToolFailedPayload:
		if r.taint == nil {
			r.taint = record.TaintOf(e)
		}
	case *event.PolicyChangedPayload:
		// One prior approval revoked (session.RevokeApproval), by the
		// seq of the permission.resolved that made it (an event written
		// before seq by its arguments, in the directory it was revoked
		// in).
		if ra, ok := event.RevokedApprovalOf(p); ok {
			where := orElse(p.Cwd, r.cwd)
			r.history = slices.DeleteFunc(r.history, func(h prior) bool {
				return (ra.Seq != 0 || h.cwd == where) && ra.Names(h.seq, h.p.Tool, h.p.Args)
			})
			break
		}
		// A revoked session rule takes the prior approvals of its tool
		// with it, in the directory it was revoked in (session.Revoke).
		if p.Level != string(permission.LevelSession) || p.Op != "remove" {
			break
		}
		var rule struct {
			Tool string `json:"tool"`
		}
		if json.Unmarshal(p.Rule, &rule) != nil {
			break
		}
		where := orElse(p.Cwd, r.cwd)
		r.history = slices.DeleteFunc(r.history, func(h prior) bool {
			ok, err := path.Match(rule.Tool, h.p.Tool)
			return h.cwd == where && (ok || err != nil || rule.Tool == h.p.Tool)
		})
	}
	return nil
}

// policy compiles a snapshot: the recorded policy, and the candidate one.
func (r *replayer) policy(s *event.PolicySnapshotPayload) {
	r.snapshot, r.recorded, r.candidate, r.polErr = s, nil, nil, ""
	if record.SnapshotDigest(s) != s.Digest {
		r.polErr = "its policy.snapshot does not match its digest"
		return
	}
	var rules, kept []permission.Rule
	for _, sr := range s.Rules {
		var rule permission.Rule
		if err := json.Unmarshal(sr.Rule, &rule); err != nil {
			r.polErr = "its policy.snapshot holds a rule that cannot be read: " + err.Error()
			return
		}
		rule.TightenOnly = sr.TightenOnly
		rules = append(rules, rule)
		if rule.Level != permission.LevelUser && rule.Level != permission.LevelProject {
			kept = append(kept, rule)
		}
	}
	var builtin []permission.Rule
	if s.Builtin != nil {
		builtin = permission.BuiltinRules()
		if s.Builtin.Digest != record.BuiltinDigest() {
			r.out.BuiltinChanged = true
		}
	}
	var err error
	if r.recorded, err = permission.Compile(slices.Concat(rules, builtin)); err != nil {
		r.polErr = "its recorded policy does not compile today: " + err.Error()
		return
	}
	if r.opts.Candidate != nil {
		if r.candidate, err = permission.Compile(slices.Concat(r.opts.Candidate, kept, builtin)); err != nil {
			r.polErr = "the candidate policy does not compile with its session rules: " + err.Error()
		}
	}
}

// resolved ends a call: it is decided again from its facts, and a person's
// approval joins the history of the calls after it.
func (r *replayer) resolved(e event.Event, res *event.PermissionResolvedPayload) {
	req := r.requested[res.ToolCallID]
	delete(r.requested, res.ToolCallID)
	taint := r.taint
	if req != nil {
		taint = r.taintAsked[res.ToolCallID]
		delete(r.taintAsked, res.ToolCallID)
	}
	c := Call{Seq: e.Seq, Time: e.TS, TurnID: e.TurnID, ToolCallID: res.ToolCallID}
	facts := res.Facts
	c.Recorded = Outcome{Decision: res.Decision, Risk: res.RiskAtDecision, SourcedFrom: res.SourcedFrom, Reason: res.Reason, Finding: topFinding(res.Findings)}
	if req != nil {
		c.Tool, c.Args = req.Tool, req.Args
		c.Recorded = Outcome{Decision: string(permission.Ask), Risk: req.RiskAtDecision, SourcedFrom: req.SourcedFrom, Reason: req.Reason, Finding: topFinding(req.Findings)}
		c.Answer = &Answer{Decision: res.Decision, Actor: res.Actor, Option: res.Option, Reason: res.Reason}
		if req.Facts != nil {
			facts = req.Facts
		}
	} else if mc := r.calls[res.ToolCallID]; mc != nil {
		c.Tool, c.Args = mc.Tool, mc.Args
	}
	var request permission.Request
	switch {
	case facts == nil:
		c.NotReplayable = NotRecordedBefore
	case len(facts.Request) == 0 || json.Unmarshal(facts.Request, &request) != nil:
		c.NotReplayable = "not replayable: its recorded request cannot be read"
	}
	if c.NotReplayable == "" {
		c.Engine, c.Build = facts.Engine, facts.Build
		if c.Tool == "" {
			c.Tool = request.Tool.Name
		}
		c.Recorded.Decision = facts.Decision
		if len(facts.Rule) > 0 {
			var ref permission.RuleRef
			if json.Unmarshal(facts.Rule, &ref) == nil {
				c.Recorded.Rule = &ref
			}
		}
		r.decide(&c, facts, request, taint)
	}
	if r.opts.Since.IsZero() || !e.TS.Before(r.opts.Since) {
		r.listed[c.ToolCallID] = len(r.out.Calls)
		r.out.Calls = append(r.out.Calls, c)
	}
	r.remember(e.Seq, res, req, facts, request)
}

// decide decides the call again under the recorded policy on today's
// engine, and under the candidate policy when there is one; taint is the
// one the log gives for the moment it was decided.
func (r *replayer) decide(c *Call, facts *event.DecisionFacts, req permission.Request, taint *permission.Taint) {
	switch {
	case facts.Masked:
		c.NotReplayable = "not replayable: its arguments held a secret, which the log does not keep"
		return
	case r.snapshot == nil:
		c.NotReplayable = "not replayable: no policy.snapshot precedes it"
		return
	case facts.Policy != r.snapshot.Digest:
		c.NotReplayable = "not replayable: it was decided under a policy no policy.snapshot before it records"
		return
	case r.polErr != "":
		c.NotReplayable = "not replayable: " + r.polErr
		return
	}
	// The prior approvals, like the taint, are facts the log gives: a
	// request recorded with others (by digest) was decided with an
	// approval no answer in the log made, or without one it made. That
	// is a divergence, and today's decision uses the log's.
	hist := r.historyIn(req.Cwd)
	if got := record.HistoryDigest(hist); got != facts.History {
		c.History = fmt.Sprintf("it was decided with prior approvals (digest %s) that are not the %d the log's answers give (digest %s)", orNone(facts.History), len(hist), orNone(got))
		c.Differs = true
	}
	req.History = hist
	req.Policy = r.recorded
	// The taint is a fact the log gives, not one to take on trust: a
	// recorded request whose taint is not the first flagged result before
	// it (dropped, or naming a result the log does not show as flagged)
	// is a divergence, and today's decision uses the log's.
	if why := taintMismatch(req.Taint, taint); why != "" {
		c.Taint = why
		c.Differs = true
	}
	req.Taint = taint
	d := r.engine.Check(req)
	r.today[c.ToolCallID] = d
	today := outcome(d)
	if !today.same(&c.Recorded) {
		c.Today = &today
		c.Change = r.change(c, &today)
		if c.Taint != "" {
			c.Change = "decided with the taint the log gives, not the recorded one"
		}
		if c.History != "" {
			c.Change = "decided with the prior approvals the log gives, not the recorded ones"
		}
		c.Differs = true
	}
	if r.candidate != nil {
		req.Policy = r.candidate
		cand := outcome(r.engine.Check(req))
		c.Candidate = &cand
		if !cand.same(&c.Recorded) {
			c.Differs = true
		}
	}
}

func orNone(digest string) string {
	if digest == "" {
		return "none"
	}
	return digest
}

// taintMismatch says how a recorded taint differs from the one the log's
// flagged events give, or "" when they agree.
func taintMismatch(recorded, fromLog *permission.Taint) string {
	switch {
	case recorded == nil && fromLog == nil:
		return ""
	case recorded == nil:
		return fmt.Sprintf("the log shows a flagged tool result before it (seq %d, call %s), but its recorded request carries no taint", fromLog.Seq, fromLog.ToolCallID)
	case fromLog == nil:
		return fmt.Sprintf("its recorded request is tainted by seq %d (call %s), but the log shows no flagged tool result before it", recorded.Seq, recorded.ToolCallID)
	case recorded.Seq != fromLog.Seq || recorded.ToolCallID != fromLog.ToolCallID:
		return fmt.Sprintf("its recorded request is tainted by seq %d (call %s), but the first flagged tool result before it is seq %d (call %s)", recorded.Seq, recorded.ToolCallID, fromLog.Seq, fromLog.ToolCallID)
	}
	return ""
}

// started compares the sandbox profile a call ran under with the one
// today's decision implies (sandbox.KindFor: read-only for a call that
// only reads, workspace for the rest, with the network only for a call
// judged network).
func (r *replayer) started(p *event.ToolStartedPayload) {
	i, ok := r.listed[p.ToolCallID]
	if !ok || p.Sandbox == nil || p.Sandbox.Profile == "" || p.Sandbox.Profile == "none" {
		return
	}
	c := &r.out.Calls[i]
	c.Recorded.Sandbox = profileWords(p.Sandbox.Profile, p.Sandbox.Network)
	d, ok := r.today[p.ToolCallID]
	if !ok || c.NotReplayable != "" {
		return
	}
	kind, network := sandbox.KindFor(d)
	now := profileWords(string(kind), network)
	if now == c.Recorded.Sandbox {
		return
	}
	if c.Today == nil {
		t := outcome(d)
		c.Today = &t
		c.Change = "the sandbox profile is " + now + " today, " + c.Recorded.Sandbox + " when recorded"
	} else {
		c.Change += "; the sandbox profile is " + now + " today, " + c.Recorded.Sandbox + " when recorded"
	}
	c.Today.Sandbox = now
	c.Differs = true
}

func profileWords(kind string, network bool) string {
	if network {
		return kind + "+network"
	}
	return kind
}

// historyIn returns the prior approvals that hold in cwd, oldest first.
func (r *replayer) historyIn(cwd string) []permission.Prior {
	var out []permission.Prior
	for _, h := range r.history {
		if h.cwd == cwd {
			out = append(out, h.p)
		}
	}
	return out
}

// remember adds a person's approval to the history, as the executor gives
// it to the session: allowed by a user, below destructive, not an answer
// to run one call unconfined.
func (r *replayer) remember(seq uint64, res *event.PermissionResolvedPayload, q *event.PermissionRequestedPayload, facts *event.DecisionFacts, req permission.Request) {
	if res.Decision != "allow" || res.Actor != event.ActorUser || res.RiskAtDecision >= risk.Destructive || res.Option == "allow_unsandboxed" {
		return
	}
	if facts != nil && facts.Masked {
		// Its arguments held a secret: the log cannot rebuild the
		// approval, which the facts' history digest leaves out.
		return
	}
	tool, args := req.Tool.Name, req.Args
	if facts == nil {
		// A log without facts: the question the person answered
		// names the call (never a model.tool_call_requested found by
		// id, which two calls may share).
		if q == nil || event.MaskedQuestion(q) || json.Unmarshal(q.Args, &args) != nil {
			return
		}
		tool = q.Tool
	}
	canon, err := permission.CanonicalArgs(args)
	if err != nil {
		return
	}
	r.history = append(r.history, prior{
		p:   permission.Prior{Tool: tool, Args: canon, Risk: res.RiskAtDecision, Decision: permission.Allow, ByUser: true},
		cwd: orElse(res.Cwd, r.cwd),
		seq: seq,
	})
}

func outcome(d permission.Decision) Outcome {
	return Outcome{Decision: string(d.Decision), Risk: d.RiskAtDecision, SourcedFrom: string(d.SourcedFrom), Rule: d.Rule, Reason: d.Reason, Finding: topFinding(d.Findings)}
}

func topFinding(fs []risk.Finding) string {
	if len(fs) == 0 {
		return ""
	}
	f := fs[0]
	if f.Text != "" {
		return "`" + f.Text + "` " + f.Why
	}
	return f.Why
}

// change says what today's engine decides otherwise, naming the rule or
// the finding, and whether the engine or the built-in rules changed.
func (r *replayer) change(c *Call, today *Outcome) string {
	rec := &c.Recorded
	var s string
	switch {
	case rec.Risk != today.Risk:
		s = fmt.Sprintf("the call is judged %s today, %s when recorded", today.Risk, rec.Risk)
		if today.Finding != rec.Finding && today.Finding != "" {
			s += " (today: " + today.Finding + ")"
		} else if rec.Finding != "" {
			s += " (then: " + rec.Finding + ")"
		}
	case !sameRule(rec.Rule, today.Rule):
		s = "the deciding rule is " + ruleWords(today.Rule) + " today, " + ruleWords(rec.Rule) + " when recorded"
	case rec.SourcedFrom != today.SourcedFrom:
		s = fmt.Sprintf("the decision comes from %s today, from %s when recorded", today.SourcedFrom, rec.SourcedFrom)
	default:
		s = fmt.Sprintf("today's engine decides %s where it decided %s", today.Decision, rec.Decision)
	}
	if c.Engine != permission.EngineVersion {
		s += fmt.Sprintf("; engine v%d decided it, this is v%d", c.Engine, permission.EngineVersion)
	}
	if r.out.BuiltinChanged && (isBuiltin(rec.Rule) || isBuiltin(today.Rule)) {
		s += "; the built-in rules of this build are not the session's"
	}
	return s
}

func isBuiltin(r *permission.RuleRef) bool { return r != nil && r.Level == permission.LevelBuiltin }

func ruleWords(r *permission.RuleRef) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("%s (%s, %s)", r.ID, r.Level, r.Decision)
}

func orElse(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
