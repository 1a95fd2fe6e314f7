// Package executor is the one place a tool call runs, and the only caller of
// the PermissionEngine. For each call it resolves the tool, validates the
// args, resolves symlinks, asks the engine, asks a person when the decision
// is ask, and only then runs the tool, writing each step to the event log
// before taking the next:
//
//	[tool.failed resolve|validate]
//	[permission.requested] → permission.resolved → tool.started → tool.completed | tool.failed
//
// Output streams into the artifact store while the tool runs; events carry
// masked previews and the artifacts' digests.
package executor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/contextbuild"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/replay/record"
	"github.com/custom-agent/custom-agent/secrets"
	"github.com/custom-agent/custom-agent/support/resolve"
	"github.com/custom-agent/custom-agent/tool"
)

// Appender records an event (eventlog.Store satisfies it, writing each
// durably). An event that gates something (eventlog.MayDefer false:
// permission.resolved, permission.requested, policy.changed …) is durable
// before Append returns; one that may wait (tool.started, tool.completed
// …) may instead join the next durable commit, as the session's turn does,
// and then comes back unsealed (Seq 0). The executor relies on the first
// and reads nothing of what Append returns.
type Appender interface {
	Append(ctx context.Context, d event.Draft) (event.Event, error)
}

// BatchAppender is an Appender that can also record several drafts in one
// durable commit, all or none, in order (the session's turn is one). The
// executor uses it for what it records between a decision and the tool's
// start, so that they cost one commit.
type BatchAppender interface {
	Appender
	AppendBatch(ctx context.Context, ds []event.Draft) ([]event.Event, error)
}

// Approver asks a person about a call the engine decided to ask about. It
// returns the person's answer, or a system answer (deny) on timeout or
// cancellation. An error means no answer could be had at all; the executor
// then denies with actor system.
type Approver interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Question is what an approval UI shows. Every string in it is masked of
// the call's secrets: Args, the Decision's reason and findings.
type Question struct {
	SessionID  string
	ToolCallID string
	Tool       permission.ToolInfo
	Args       json.RawMessage // masked
	Decision   permission.Decision
	Options    []string
	Timeout    time.Duration
	// SessionRule and ProjectRule are the rules "allow for this session"
	// and "always allow in this project" would make, shown to the person
	// before they choose (DESIGN.md §6). Nil when that option is not
	// offered.
	SessionRule, ProjectRule *permission.Rule
	// NoRuleReason, when set, says why neither rule is offered (e.g.
	// NoRuleSecret), for the UI to show.
	NoRuleReason string
}

// Rules is the session's PolicyStore as the executor uses it: to propose
// the rule an answer would make, and to make it. policy.Store satisfies it.
// Its methods may be called from the executor's goroutine only.
type Rules interface {
	SessionRuleFor(t permission.ToolInfo, args map[string]any) (permission.Rule, bool)
	ProjectRuleFor(t permission.ToolInfo, args map[string]any) (permission.Rule, bool)
	AddSession(r permission.Rule) error
	AddProject(r permission.Rule) error
}

// The answers an approval UI offers (DESIGN.md §6).
const (
	OptionAllowOnce    = "allow_once"
	OptionAllowSession = "allow_session"
	OptionAllowProject = "allow_project"
	OptionDeny         = "deny"
	// OptionAllowUnsandboxed runs this one call outside the sandbox. It
	// is offered only when the call would otherwise be confined, is never
	// remembered (no rule, no prior approval) and is recorded as the
	// option of permission.resolved and in tool.started's sandbox.
	OptionAllowUnsandboxed = "allow_unsandboxed"
)

// OfferedOptions returns the answers offered for a decision: a destructive
// call offers only allow once and deny; the session and project options are
// offered only when a rule for them can be proposed.
func OfferedOptions(d permission.Decision, sessionRule, projectRule bool) []string {
	if d.RiskAtDecision >= risk.Destructive {
		return []string{OptionAllowOnce, OptionDeny}
	}
	opts := []string{OptionAllowOnce}
	if sessionRule {
		opts = append(opts, OptionAllowSession)
	}
	if projectRule {
		opts = append(opts, OptionAllowProject)
	}
	return append(opts, OptionDeny)
}

// Answer resolves an ask.
type Answer struct {
	Allow  bool
	Option string      // one of the offered options; "" for a system answer
	Actor  event.Actor // user or system
	Reason string      // e.g. "user approved (allow_once)", "timeout"
	// UI names the approval UI the answer came from ("terminal",
	// "web" …), recorded as permission.resolved's ui; empty for a
	// system answer.
	UI string
}

// Session is what the executor needs to know of the session a call belongs
// to. The caller owns it; Execute does not modify it.
type Session struct {
	ID, TurnID string
	Cwd, Home  string
	ConfigHome string
	// DataDir is custom-agent's data directory, symbolic links resolved
	// (permission.Request.DataDir); "" for the default one.
	DataDir      string
	Mode         permission.Mode
	Policy       *permission.Policy
	History      []permission.Prior
	AllowedTools []string // nil: no active skill
	Env          []string // for processes; scrubbed by Execute
	// Rules makes the rules "allow for this session" and "always allow in
	// this project" stand for; nil offers neither.
	Rules Rules
	// Outputs reads the session's recorded outputs (for read_output);
	// nil offers none.
	Outputs tool.Outputs
	// Taint names the flagged tool result earlier in the session, if any
	// (permission.Request.Taint); nil when there is none.
	Taint *permission.Taint
	// PolicyDigest names the policy.snapshot the session recorded for
	// Policy ("" when it records none); each decision's facts name it.
	PolicyDigest string
}

// Call is a tool call the model asked for.
type Call struct {
	ID   string
	Tool string
	Args json.RawMessage
}

// Status is how a call ended.
type Status string

const (
	Completed Status = "completed" // the tool ran to its end (exit code may be non-zero)
	Failed    Status = "failed"    // unknown tool, bad args, or the tool failed
	Denied    Status = "denied"    // the engine, a rule or a person said no
)

// Outcome is what the model gets back, and what the session keeps.
type Outcome struct {
	Status   Status
	Content  string // what the model sees: output preview, error or denial reason
	Decision permission.Decision
	// Prior is set when a person approved the call: the session adds it
	// to its history (never for destructive calls, which the engine never
	// reuses anyway).
	Prior *permission.Prior
	// PriorSeq is the seq of the permission.resolved that made Prior,
	// which names the approval (session.RevokeApproval); PriorShown is
	// the call's arguments masked of its secrets, for display.
	PriorSeq   uint64
	PriorShown json.RawMessage
	Answer     *Answer
	Result     tool.Result
	// PolicyChanged is set when the answer added a session or project
	// rule: the session must take its policy again before the next call.
	PolicyChanged bool
}

// NoApprovalTimeout, as Options.ApprovalTimeout and Question.Timeout, means
// that an ask has no deadline: a person at a terminal is given as long as
// they take.
const NoApprovalTimeout = time.Duration(math.MaxInt64)

// Options configure an Executor.
type Options struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
	// ApprovalTimeout is announced in permission.requested (default 30 s);
	// the Approver enforces it. NoApprovalTimeout means an ask waits until
	// it is answered or the turn is cancelled (announced as timeoutMs 0).
	ApprovalTimeout time.Duration
	// MaxStored caps the bytes of one output stream kept as an artifact
	// (default DefaultMaxStored).
	MaxStored int64
	// Logger receives operational messages (default slog.Default()).
	Logger *slog.Logger
	// Sandbox confines the processes of allowed calls of tools that start
	// them; nil runs them unconfined (tests, and callers without one).
	Sandbox Sandbox
	// Known returns secrets the runner knows of that no call's output,
	// error or recorded arguments may show, though nothing in the call
	// names them: the script tokens of the serve instances running on
	// this data directory, which answer questions. It is called once per
	// call, before anything is recorded; nil knows none.
	Known func() []string
}

// Sandbox plans the confinement of a call's processes (package sandbox,
// wired by the composition root). Plan may be called concurrently.
type Sandbox interface {
	// Plan reads what the sandbox needs for a call in cwd, before the
	// engine decides it.
	Plan(cwd string) SandboxPlan
}

// SandboxPlan is the sandbox's part in one call.
type SandboxPlan struct {
	// Facts go to the engine: off, or why it cannot be enforced here.
	Facts permission.SandboxFacts
	// For returns the confinement of the call allowed with d, and how
	// tool.started names it. It is nil when Facts say off or unavailable.
	For func(d permission.Decision) (tool.ConfineFunc, event.SandboxInfo)
}

// Executor runs calls. It is safe for concurrent use.
type Executor struct {
	router    *tool.Router
	engine    permission.Engine
	log       Appender
	artifacts *artifact.Store
	approver  Approver
	opts      Options
}

// New returns an executor. approver may be nil, in which case every ask is
// denied with actor system ("no approval UI").
func New(router *tool.Router, log Appender, artifacts *artifact.Store, approver Approver, opts *Options) *Executor {
	x := &Executor{router: router, log: log, artifacts: artifacts, approver: approver}
	if opts != nil {
		x.opts = *opts
	}
	if x.opts.Now == nil {
		x.opts.Now = time.Now
	}
	if x.opts.ApprovalTimeout <= 0 {
		x.opts.ApprovalTimeout = 30 * time.Second
	}
	if x.opts.MaxStored <= 0 {
		x.opts.MaxStored = DefaultMaxStored
	}
	if x.opts.Logger == nil {
		x.opts.Logger = slog.Default()
	}
	return x
}

// ErrLog wraps a failure to write the event log: the call's outcome is then
// unknown to the audit trail and the turn must stop.
var ErrLog = errors.New("event log append failed")

// Execute takes a call through the whole chain. Tool failures and denials
// are Outcomes the model sees; the returned error is for what must end the
// turn: the log could not be written (ErrLog), or ctx was cancelled (the
// call is then recorded as denied or failed before Execute returns).
func (x *Executor) Execute(ctx context.Context, s *Session, c Call) (Outcome, error) {
	start := x.opts.Now()
	// Every string this call puts in an event, a question or a rule is
	// masked of the secrets its arguments hold, fragments included.
	// The runner's known secrets (serve's tokens) are masked too; own
	// is what the arguments hold, which decides whether a rule may be
	// offered.
	own := secrets.Collect(c.Args)
	sec := own
	if x.opts.Known != nil {
		sec = own.With(x.opts.Known()...)
	}
	t, err := x.router.Resolve(c.Tool)
	if err != nil {
		return x.fail(ctx, s, c, event.StageResolve, err, start, sec)
	}
	args, err := x.router.Validate(c.Tool, c.Args)
	if err != nil {
		return x.fail(ctx, s, c, event.StageValidate, err, start, sec)
	}
	info := t.Info()
	req := permission.Request{
		Tool: info, Args: args, Cwd: s.Cwd, Home: s.Home, ConfigHome: s.ConfigHome, DataDir: s.DataDir,
		Mode: s.Mode, Policy: s.Policy, History: s.History, AllowedTools: s.AllowedTools, Taint: s.Taint,
	}
	resolve.Fill(&req) // one analysis of the command, each path resolved once
	var plan *SandboxPlan
	if x.opts.Sandbox != nil && info.StartsProcesses {
		p := x.opts.Sandbox.Plan(s.Cwd)
		plan = &p
		req.Sandbox = &p.Facts
	}
	d := x.engine.Check(req)
	masked := sec.MaskJSON(c.Args)
	shown := maskDecision(d, args, sec)
	out := Outcome{Decision: shown}
	// What the decision was made from goes on its event (the question's,
	// when one is asked), durable before the tool runs: a replay decides
	// it again from the log alone.
	facts := record.Facts(req, d, sec, s.PolicyDigest)

	var resolved event.PermissionResolvedPayload
	var change *event.PolicyChangedPayload // recorded right after permission.resolved
	switch d.Decision {
	case permission.Allow:
		resolved = x.resolvedBy(c, shown, true, event.ActorPolicy, shown.Reason, "", sec)
	case permission.Ask:
		// The arguments hold a secret when the patterns find one, or
		// when they show a known one (masking them changes them).
		holds := !own.Empty() || sec != own && !bytes.Equal(masked, own.MaskJSON(c.Args))
		p := x.proposals(s, info, args, d, holds)
		ans, err := x.ask(ctx, s, c, info, masked, shown, p, plan != nil && confined(plan, d), facts)
		if err != nil {
			return out, err
		}
		if rule := p.ruleFor(ans); rule != nil {
			if change, err = makeRule(s, ans.Option, *rule); err != nil {
				ans.Reason += "; the rule could not be made, so this is allowed once: " + err.Error()
			}
			out.PolicyChanged = change != nil
		}
		out.Answer = &ans
		resolved = x.resolvedBy(c, shown, ans.Allow, ans.Actor, ans.Reason, ans.Option, sec)
		resolved.UI = ans.UI
	default: // deny, and the unset decision, which every caller treats as deny
		reason := shown.Reason
		if d.Decision == permission.Unset {
			reason = "the permission engine gave no decision; denied"
		}
		resolved = x.resolvedBy(c, shown, false, event.ActorPolicy, reason, "", sec)
	}
	if d.Decision != permission.Ask {
		resolved.Facts = facts
	}
	// The decision, and any rule it made, hold in this directory only.
	resolved.Cwd = s.Cwd
	if change != nil {
		change.Cwd = s.Cwd
	}
	// permission.resolved is durable before anything runs, even when the
	// turn is being cancelled; the rule it made, and the tool's start
	// when it is allowed and the turn goes on, are in the same commit.
	gate := []event.Payload{resolved}
	if change != nil {
		gate = append(gate, *change)
	}
	starts := resolved.Decision == "allow" && ctx.Err() == nil
	var confine tool.ConfineFunc
	if starts {
		var sb *event.SandboxInfo
		switch {
		case plan != nil && out.Answer != nil && out.Answer.Option == OptionAllowUnsandboxed:
			sb = &event.SandboxInfo{Profile: "none", Why: "a person chose to run this one call without the sandbox"}
		case plan != nil:
			confine, sb = confinement(plan, d)
		}
		gate = append(gate, event.ToolStartedPayload{ToolCallID: c.ID, Tool: info.Name, Args: masked, Sandbox: sb})
	}
	resolvedSeq, err := x.appendAll(context.WithoutCancel(ctx), s, gate)
	if err != nil {
		return out, err
	}
	if starts && ctx.Err() != nil {
		// Cancelled while the decision was being made durable: the
		// tool does not run, and its tool.started is followed by
		// tool.failed.
		starts = false
	}
	if resolved.Decision != "allow" {
		out.Status = Denied
		out.Content = "Permission denied: " + resolved.Reason
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		return out, nil
	}
	if out.Answer != nil && out.Answer.Actor == event.ActorUser && d.RiskAtDecision < risk.Destructive && out.Answer.Option != OptionAllowUnsandboxed {
		if canon, err := permission.CanonicalArgs(args); err == nil {
			out.Prior = &permission.Prior{Tool: info.Name, Args: canon, Risk: d.RiskAtDecision, Decision: permission.Allow, ByUser: true}
			out.PriorSeq, out.PriorShown = resolvedSeq, masked
		}
	}
	if !starts {
		return x.failAfterStart(ctx, s, c, out, fmt.Errorf("the turn was cancelled before %s started", c.Tool), x.opts.Now(), sec)
	}
	// durationMs is the tool's own run time, not the time a person took
	// to answer.
	return x.run(ctx, s, c, t, args, confine, out, x.opts.Now(), sec)
}

// confinement returns how an allowed call's processes run: in the profile
// its decision implies, or, when the sandbox is off or unavailable (the
// engine then asked, and a person allowed it), unconfined, saying why.
func confinement(plan *SandboxPlan, d permission.Decision) (tool.ConfineFunc, *event.SandboxInfo) {
	switch {
	case confined(plan, d):
		f, info := plan.For(d)
		return f, &info
	case plan.Facts.Off:
		return nil, &event.SandboxInfo{Profile: "none", Why: "the sandbox is turned off"}
	case plan.Facts.Unavailable != "" || plan.For == nil:
		return nil, &event.SandboxInfo{Profile: "none", Why: "the sandbox is unavailable here (" + plan.Facts.Unavailable + "); a person allowed the call to run unconfined"}
	case plan.Facts.WritesUnavailable != "" && !d.ReadOnly:
		return nil, &event.SandboxInfo{Profile: "none", Why: "the sandbox cannot confine writes here (" + plan.Facts.WritesUnavailable + "); a person allowed the call to run unconfined"}
	}
	return nil, &event.SandboxInfo{Profile: "none", Why: "the sandbox has no profile for this call"}
}

// confined reports whether an allowed call would run in the sandbox: only
// then does a question offer to run it without.
func confined(plan *SandboxPlan, d permission.Decision) bool {
	return plan.Facts.Enforced() && plan.For != nil && (plan.Facts.WritesUnavailable == "" || d.ReadOnly)
}

// resolvedBy builds permission.resolved from a masked decision; the reason
// (which may come from the UI) is masked here.
func (x *Executor) resolvedBy(c Call, d permission.Decision, allow bool, actor event.Actor, reason, option string, sec *secrets.Set) event.PermissionResolvedPayload {
	decision := "deny"
	if allow {
		decision = "allow"
	}
	if reason == "" {
		reason = "no reason given"
	}
	return event.PermissionResolvedPayload{
		ToolCallID: c.ID, Decision: decision, Reason: sec.Mask(reason), Actor: actor,
		RiskAtDecision: riskOf(d), SourcedFrom: sourceOf(d), Option: option, Findings: d.Findings,
	}
}

// proposal holds the rules an answer could make, or why none is offered.
type proposal struct {
	session, project *permission.Rule
	noRule           string
}

func (p proposal) ruleFor(a Answer) *permission.Rule {
	if !a.Allow {
		return nil
	}
	switch a.Option {
	case OptionAllowSession:
		return p.session
	case OptionAllowProject:
		return p.project
	}
	return nil
}

// makeRule adds the rule an answer stands for and returns the
// policy.changed event that records it.
func makeRule(s *Session, option string, r permission.Rule) (*event.PolicyChangedPayload, error) {
	level := "session"
	var err error
	if option == OptionAllowProject {
		level = "project"
		err = s.Rules.AddProject(r)
	} else {
		err = s.Rules.AddSession(r)
	}
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return &event.PolicyChangedPayload{Level: level, Op: "add", Rule: raw}, nil
}

func ruleJSON(r *permission.Rule) json.RawMessage {
	if r == nil {
		return nil
	}
	b, _ := json.Marshal(r)
	return b
}

// ask records permission.requested and waits for the Approver. d is the
// masked decision.
//
// unsandboxed offers OptionAllowUnsandboxed, before deny.
func (x *Executor) ask(ctx context.Context, s *Session, c Call, info permission.ToolInfo, masked json.RawMessage, d permission.Decision, p proposal, unsandboxed bool, facts *event.DecisionFacts) (Answer, error) {
	opts := OfferedOptions(d, p.session != nil, p.project != nil)
	if unsandboxed {
		opts = slices.Insert(opts, len(opts)-1, OptionAllowUnsandboxed)
	}
	if err := x.append(ctx, s, event.PermissionRequestedPayload{
		ToolCallID: c.ID, Tool: info.Name, Args: masked, RiskAtDecision: riskOf(d), SourcedFrom: sourceOf(d),
		SuggestedDecision: "ask", Reason: d.Reason, Findings: d.Findings, Options: opts,
		TimeoutMs:   timeoutMs(x.opts.ApprovalTimeout),
		SessionRule: ruleJSON(p.session), ProjectRule: ruleJSON(p.project), NoRuleReason: p.noRule,
		Facts: facts,
	}); err != nil {
		return Answer{}, err
	}
	if x.approver == nil {
		return Answer{Actor: event.ActorSystem, Reason: "no approval UI is attached; denied"}, nil
	}
	ans, err := x.approver.Ask(ctx, Question{
		SessionID: s.ID, ToolCallID: c.ID, Tool: info, Args: masked, Decision: d, Options: opts, Timeout: x.opts.ApprovalTimeout,
		SessionRule: p.session, ProjectRule: p.project, NoRuleReason: p.noRule,
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return Answer{Actor: event.ActorSystem, Reason: "the turn was cancelled while waiting for approval"}, nil
	case err != nil:
		return Answer{Actor: event.ActorSystem, Reason: "approval failed: " + err.Error()}, nil
	}
	// The UI offers only these options; an answer outside them (a
	// destructive call allowed "for the session") is refused here too.
	if ans.Allow && !contains(opts, ans.Option) {
		return Answer{Actor: event.ActorSystem, Option: ans.Option, Reason: fmt.Sprintf("answer %q was not offered for this call; denied", ans.Option)}, nil
	}
	if ans.Actor == "" {
		ans.Actor = event.ActorUser
	}
	if ans.Reason == "" {
		if ans.Allow {
			ans.Reason = "user approved (" + ans.Option + ")"
		} else {
			ans.Reason = "user denied"
		}
	}
	return ans, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// run runs the tool with its output streamed into artifacts.
func (x *Executor) run(ctx context.Context, s *Session, c Call, t tool.Tool, args map[string]any, confine tool.ConfineFunc, out Outcome, start time.Time, sec *secrets.Set) (Outcome, error) {
	stdout, stderr := newStream(x.artifacts, x.opts.MaxStored), newStream(x.artifacts, x.opts.MaxStored)
	env, _ := ScrubEnv(s.Env)
	res, runErr := t.Run(ctx, tool.Call{
		ID: c.ID, Args: args, Raw: c.Args, Cwd: s.Cwd,
		Home: s.Home, ConfigHome: s.ConfigHome, DataDir: s.DataDir, Secrets: sec,
		Env: env, Outputs: s.Outputs, Confine: confine,
	}, tool.Output{Stdout: stdout, Stderr: stderr})
	out.Result = res
	artifacts, storeErr := commitStreams(sec.Mask, stdout, stderr)
	if runErr != nil {
		msg := runErr.Error()
		if p := stderr.maskedPreview(sec); p != "" {
			msg += "\nstderr:\n" + p
		}
		return x.failAfterStart(ctx, s, c, out, errors.New(msg), start, sec)
	}
	if storeErr != nil {
		x.opts.Logger.Warn("tool output could not be stored in full", "tool", c.Tool, "toolCallId", c.ID, "err", storeErr)
	}
	p := event.ToolCompletedPayload{
		ToolCallID: c.ID, ExitCode: res.ExitCode,
		StdoutBytes: stdout.total, StderrBytes: stderr.total,
		DurationMs:    x.opts.Now().Sub(start).Milliseconds(),
		StdoutPreview: stdout.maskedPreview(sec),
		StderrPreview: stderr.maskedPreview(sec),
		StdoutTail:    maskedTail(stdout, sec),
		StderrTail:    maskedTail(stderr, sec),
		Artifacts:     artifacts,
		Truncated:     notStored(stdout, stderr, artifacts),
		Summary:       maskSummary(res.Summary, sec),
	}
	if confine != nil {
		p.SandboxHint = sandboxHint(res.ExitCode, p.StderrPreview, p.StdoutPreview)
	}
	// What the model will read of the result is scanned before it is
	// recorded: what the scanner finds is recorded with it, taints the
	// rest of the session (permission.Request.Taint) and is pointed out to
	// the model (contextbuild).
	p.Injection = scanCompleted(&p)
	if err := x.append(context.WithoutCancel(ctx), s, p); err != nil {
		return out, err
	}
	out.Status = Completed
	out.Content = contextbuild.ToolResult(&p)
	return out, nil
}

// maskedTail is the end of a stream the preview does not hold, masked.
func maskedTail(st *stream, sec *secrets.Set) *event.OutputTail {
	text, from, omitted, ok := st.maskedTail(sec)
	if !ok {
		return nil
	}
	return &event.OutputTail{From: from, Omitted: omitted, Text: text}
}

// commitStreams commits each stream's artifact, or names the stream by
// digest as held by the event when its masked preview is the whole of it.
func commitStreams(mask func(string) string, streams ...*stream) ([]event.Artifact, error) {
	arts := []event.Artifact{}
	var errs []error
	for i, st := range streams {
		name := [...]string{"stdout", "stderr"}[i]
		if st.inEvent(mask) {
			sum := sha256.Sum256(st.head)
			arts = append(arts, event.Artifact{Name: name, Digest: artifact.DigestPrefix + hex.EncodeToString(sum[:]), Bytes: st.total, InEvent: true})
			continue
		}
		if st.w == nil && st.err == nil && st.total > 0 {
			st.spill(st.head[:st.total]) // short (head holds it all), but not the event's preview as it is
		}
		if st.err != nil {
			st.abort()
			errs = append(errs, fmt.Errorf("%s: %w", name, st.err))
			continue
		}
		if st.w == nil {
			continue
		}
		if b, ok := st.w.Held(); ok && utf8.Valid(b) && mask(string(b)) == string(b) {
			// Nothing to mask, as for an output the event holds whole:
			// the event log may keep it, in the commit that names it.
			st.w.Carry()
		}
		d, err := st.w.Commit()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		arts = append(arts, event.Artifact{Name: name, Digest: d, Bytes: st.w.Size(), Truncated: st.truncated()})
	}
	return arts, errors.Join(errs...)
}

// fail records tool.failed for a call that never reached the engine. Its
// error is scanned as a tool's output is: at validate it may quote an MCP
// server's schema (its enum values), text the model reads.
func (x *Executor) fail(ctx context.Context, s *Session, c Call, stage string, cause error, start time.Time, sec *secrets.Set) (Outcome, error) {
	msg := capError(sec.Mask(cause.Error()))
	if err := x.append(context.WithoutCancel(ctx), s, event.ToolFailedPayload{
		ToolCallID: c.ID, Stage: stage, Error: msg, DurationMs: x.opts.Now().Sub(start).Milliseconds(),
		Injection: scanError(stage, msg),
	}); err != nil {
		return Outcome{}, err
	}
	return Outcome{Status: Failed, Content: msg}, nil
}

// failAfterStart records tool.failed at the execute stage.
func (x *Executor) failAfterStart(ctx context.Context, s *Session, c Call, out Outcome, cause error, start time.Time, sec *secrets.Set) (Outcome, error) {
	msg := capError(sec.Mask(cause.Error()))
	if err := x.append(context.WithoutCancel(ctx), s, event.ToolFailedPayload{
		ToolCallID: c.ID, Stage: event.StageExecute, Error: msg, DurationMs: x.opts.Now().Sub(start).Milliseconds(),
		Injection: scanFields([2]string{"error", msg}), // it may hold the tool's stderr
	}); err != nil {
		return out, err
	}
	out.Status, out.Content = Failed, msg
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, nil
}

func (x *Executor) append(ctx context.Context, s *Session, p event.Payload) error {
	d, err := event.NewDraft(s.ID, s.TurnID, x.opts.Now(), p)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLog, err)
	}
	if _, err := x.log.Append(ctx, d); err != nil {
		return fmt.Errorf("%w: %w", ErrLog, err)
	}
	return nil
}

// appendAll records ps in order, in one commit when the log batches, and
// returns the seq of the first.
func (x *Executor) appendAll(ctx context.Context, s *Session, ps []event.Payload) (uint64, error) {
	b, ok := x.log.(BatchAppender)
	if !ok || len(ps) == 1 {
		var first uint64
		for i, p := range ps {
			d, err := event.NewDraft(s.ID, s.TurnID, x.opts.Now(), p)
			if err != nil {
				return 0, fmt.Errorf("%w: %w", ErrLog, err)
			}
			e, err := x.log.Append(ctx, d)
			if err != nil {
				return 0, fmt.Errorf("%w: %w", ErrLog, err)
			}
			if i == 0 {
				first = e.Seq
			}
		}
		return first, nil
	}
	ds := make([]event.Draft, len(ps))
	for i, p := range ps {
		d, err := event.NewDraft(s.ID, s.TurnID, x.opts.Now(), p)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrLog, err)
		}
		ds[i] = d
	}
	es, err := b.AppendBatch(ctx, ds)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrLog, err)
	}
	if len(es) == 0 {
		return 0, nil
	}
	return es[0].Seq, nil
}

func riskOf(d permission.Decision) risk.Level {
	if d.RiskAtDecision == risk.Unknown {
		return risk.Destructive
	}
	return d.RiskAtDecision
}

func sourceOf(d permission.Decision) string {
	if d.SourcedFrom == "" {
		return "default"
	}
	return string(d.SourcedFrom)
}

func maskSummary(raw json.RawMessage, sec *secrets.Set) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	return sec.MaskJSON(raw)
}

// timeoutMs is the approval timeout as permission.requested announces it:
// 0 for none.
func timeoutMs(d time.Duration) int64 {
	if d >= NoApprovalTimeout {
		return 0
	}
	return d.Milliseconds()
}

// sandboxDenials are what programs print when the kernel refused them
// something the sandbox denies.
var sandboxDenials = []string{"Permission denied", "Read-only file system", "Operation not permitted", "Network is unreachable", "No such device or address"}

// sandboxHint returns a line for the model when a confined command failed
// with what may be the sandbox's denial: which of the kernel's answers it
// printed, and what the sandbox allows, so that the model neither retries
// blindly nor works around it. "" when the command succeeded or printed no
// such answer.
func sandboxHint(exit *int, outputs ...string) string {
	if exit == nil || *exit == 0 {
		return ""
	}
	for _, o := range outputs {
		for _, d := range sandboxDenials {
			if strings.Contains(o, d) {
				return "the command failed with \"" + d + "\", which may be the sandbox's denial: commands run with secrets hidden (~/.ssh, ~/.aws, .env files, keys), no writes outside the working directory and /tmp (none at all for a call allowed as a read), protected paths read-only (.git/hooks, .git/config, .custom-agent, editor and agent configuration), and no network unless the call was judged network. Do not try to work around it; ask the user if the command really needs more."
			}
		}
	}
	return ""
}
