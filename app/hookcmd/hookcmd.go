// Package hookcmd is the hook command: custom-agent's PermissionEngine
// answering Claude Code's PreToolUse and Gemini CLI's BeforeTool hooks in
// their own formats, and recording every decision, and the outcome their
// PostToolUse and AfterTool hooks report, in the hook journal (package
// hook/journal), which custom-agent folds into its event log. custom-agent
// and the small custom-agent-gate binary both offer it from here; it links
// no model, store or protocol SDK.
//
// The hook never fails open: an event that cannot be read or judged, a
// policy that does not load, a record that cannot be written, even a
// panic, answers exit status 2 with the reason on standard error, which
// both agents read as "block this call".
package hookcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/custom-agent/custom-agent/app/checkcmd"
	"github.com/custom-agent/custom-agent/app/gateconf"
	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/journal"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/support/datadir"
	"github.com/custom-agent/custom-agent/support/flagspec"
)

// Options are the hook's flags and what it reads from its environment.
type Options struct {
	// Strict answers Gemini CLI's ask as deny (hook.Options).
	Strict bool
	// NoRecord leaves the journal alone: nothing is recorded.
	NoRecord bool
	// Policies are extra policy files; NoBuiltin leaves the built-in
	// rules out, as for check.
	Policies  []string
	NoBuiltin bool
	// DataDir is --data-dir ("" is the environment's).
	DataDir string
	// Getenv reads the environment; nil is os.Getenv.
	Getenv func(string) string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Deadline bounds the whole hook call (reading the event, judging,
	// recording); past it the call is blocked. Zero is DefaultDeadline.
	Deadline time.Duration
	// Ctx ends the hook call early, blocked, when it is done (SIGTERM or
	// SIGINT from the agent); nil never does.
	Ctx context.Context

	// judge decides the call; nil is the engine (tests give a slow one).
	judge func(in *hook.Input, cwd string, o Options) (permission.Decision, permission.Mode, error)
	// finished, when set, is called when the worker of an abandoned call
	// returns (tests wait for it).
	finished func()
	// beforeScan, when set, is called before an after event's output is
	// scanned (tests hold the scan past the deadline).
	beforeScan func()
}

// DefaultDeadline is the hook's deadline: well within both agents'
// timeouts of the hook entry (30 s as hook install writes it), so that the
// agent gets our block, not its own timeout (after which it goes on as if
// the hook had said nothing).
const DefaultDeadline = 5 * time.Second

func (o *Options) defaults() {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	if o.Ctx == nil {
		o.Ctx = context.Background()
	}
	if o.judge == nil {
		o.judge = judge
	}
}

// ExitError carries the answer's exit status to the program's main.
type ExitError = checkcmd.ExitError

// Short and Long are the hook command's help. custom-agent and
// custom-agent-gate both show them.
const (
	Short = "Answer Claude Code's and Gemini CLI's tool hooks with custom-agent's decisions"
	Long  = `hook reads one hook event of Claude Code (PreToolUse, PostToolUse) or Gemini
CLI (BeforeTool, AfterTool) on standard input, judges the tool call as
custom-agent judges its own (the same engine, rules and configuration as
check, found from the event's cwd), and answers in that agent's format:

  claude-code  {"hookSpecificOutput":{"hookEventName":"PreToolUse",
               "permissionDecision":"allow|deny|ask","permissionDecisionReason":"…"}}
  gemini-cli   {"decision":"allow|deny","reason":"…"}; Gemini CLI has no ask:
               an ask at write risk or below of a file write (no protected
               path, no network or credential finding) defers to Gemini CLI's
               own confirmation; every other ask is denied, since that
               confirmation can be answered "always"; with --strict every ask
               is denied.

A destructive call is never allowed. An event that cannot be judged is
blocked: exit status 2, the reason on standard error; so is one not decided
within --deadline (5s), or when the agent sends SIGTERM or SIGINT.

Every decision, and the outcome PostToolUse/AfterTool report, is recorded in
the data directory's hook journal before the answer is written; custom-agent
sessions, log and audit verify show it as the session <agent>-<session_id>.
See docs/hooks.md.`
)

// AgentShort is the help line of the hook command of agent a.
func AgentShort(a hook.Agent) string {
	return "Answer one " + string(a) + " hook event read from standard input"
}

// Flags defines the flags of the hook command of agent a, which set o.
func Flags(a hook.Agent, o *Options) *flagspec.Set {
	var f flagspec.Set
	if a == hook.GeminiCLI {
		f.Bool(&o.Strict, "strict", false, "deny every ask, writes too (Gemini CLI has no ask)")
	}
	f.Bool(&o.NoRecord, "no-record", false, "record nothing in the hook journal")
	f.StringArray(&o.Policies, "policy", `a policy file {"version":1,"rules":[...]} (repeatable)`)
	f.Bool(&o.NoBuiltin, "no-builtin-rules", false, gateconf.NoBuiltinRulesUsage)
	f.Duration(&o.Deadline, "deadline", DefaultDeadline, "block the call (exit status 2) when no decision is made within this time")
	return &f
}

// NoAgent is the answer to a hook command line that names no agent, or
// one this build does not know (args are the arguments after hook): the
// call is blocked, exit status 2, never help and exit status 0, which
// Claude Code reads as "go ahead".
func NoAgent(args []string) error {
	what := "no agent named"
	if len(args) > 0 {
		what = "unknown agent " + strconv.Quote(args[0])
	}
	return &ExitError{Code: 2, Msg: "custom-agent: hook: " + what + " (want " + agentNames() + "); the call is blocked"}
}

// Exec is the hook command of agent a once its flags (Flags) are parsed
// into o: it answers the event on stdin, on stdout and stderr, and
// returns the exit status as an *ExitError when it is not 0. ctx is the
// program's (done on SIGTERM or SIGINT), dataDir its --data-dir.
func Exec(ctx context.Context, a hook.Agent, o Options, dataDir string, stdin io.Reader, stdout, stderr io.Writer) error {
	o.DataDir, o.Ctx = dataDir, ctx
	ans := Run(a, stdin, o)
	stdout.Write(ans.Stdout)
	stderr.Write(ans.Stderr)
	if ans.Code != 0 {
		return &ExitError{Code: ans.Code}
	}
	return nil
}

// Run answers one hook event of agent a read from stdin. It never panics
// and never returns an allow it could not record. Past o.Deadline, or
// when o.Ctx is done (the agent sent SIGTERM or SIGINT), it blocks the
// call at once: exit status 2 with the reason. The work still under way
// then records nothing: the log never says allowed what was blocked.
func Run(a hook.Agent, stdin io.Reader, o Options) hook.Answer {
	o.defaults()
	g := &guard{}
	done := make(chan hook.Answer, 1)
	go func() {
		growStack()
		done <- run(a, stdin, o, g)
		if o.finished != nil {
			o.finished()
		}
	}()
	timer := time.NewTimer(o.Deadline)
	defer timer.Stop()
	var why error
	select {
	case ans := <-done:
		return ans
	case <-timer.C:
		why = fmt.Errorf("no decision within %s (--deadline)", o.Deadline)
	case <-o.Ctx.Done():
		why = errors.New("interrupted before a decision was made")
	}
	if in, id := g.unscannedAfter(); in != nil && !o.NoRecord {
		// An after event whose output was not scanned in time: its
		// taint is not lost (the process ends with this answer).
		if err := o.markTaint(in, id, nil, true); err != nil {
			why = fmt.Errorf("%v; the tool's output was not scanned in time, and marking the session as tainted failed: %w", why, err)
		} else {
			why = fmt.Errorf("%v; the tool's output was not scanned in time, so the session is marked as tainted: a person decides every later call above read", why)
		}
	}
	if !g.abandon() {
		// The decision is made and being recorded: give the record as
		// long again, so that the answer is the one the log holds. Past
		// that (a disk that hangs) the call is blocked all the same, and
		// the log may show a decision that was not answered.
		timer.Reset(o.Deadline)
		select {
		case ans := <-done:
			return ans
		case <-timer.C:
		case <-o.Ctx.Done():
		}
	}
	return hook.Fail(why)
}

// stackPad is the stack the worker of a hook call takes at once
// (growStack): more than judging a call uses.
const stackPad = 48 << 10

// growStack grows the calling goroutine's stack to hold stackPad bytes
// more while it is one frame deep. A goroutine starts with a few
// kilobytes, and judging a call (the shell parser, the analyser,
// encoding/json) would otherwise grow it by doubling four or five times,
// each time copying the whole stack deep in the call and reading the
// tables of every frame on it: in a cold process, where those tables are
// not yet in memory, a twentieth of the hook's CPU.
//
//go:noinline
func growStack() {
	var pad [stackPad]byte
	stackSink(pad[:])
}

//go:noinline
func stackSink(b []byte) { b[len(b)-1] = 1 }

// guard keeps a call that was abandoned (answered blocked) from recording
// a decision afterwards.
type guard struct {
	mu        sync.Mutex
	abandoned bool
	recording bool
	// after and afterID are an after event being scanned, until scanned
	// is set (its flag, if any, written).
	after   *hook.Input
	afterID string
	scanned bool
}

// scanning says that the after event in, of call id, is being scanned.
func (g *guard) scanning(in *hook.Input, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.after, g.afterID = in, id
}

// scannedAfter says that its scan is done and its flag, if any, written.
func (g *guard) scannedAfter() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.scanned = true
}

// unscannedAfter is the after event whose scan has not finished (nil if
// none).
func (g *guard) unscannedAfter() (*hook.Input, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.after == nil || g.scanned {
		return nil, ""
	}
	return g.after, g.afterID
}

// abandon marks the call abandoned unless its record is being written;
// it reports whether it did.
func (g *guard) abandon() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.recording {
		return false
	}
	g.abandoned = true
	return true
}

// begin reports whether the call may record; once it has, abandon fails.
func (g *guard) begin() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.abandoned {
		return false
	}
	g.recording = true
	return true
}

var errAbandoned = errors.New("the hook call was abandoned")

func run(a hook.Agent, stdin io.Reader, o Options, g *guard) (ans hook.Answer) {
	defer func() {
		if r := recover(); r != nil {
			why := fmt.Errorf("internal error: %v", r)
			if in, id := g.unscannedAfter(); in != nil && !o.NoRecord {
				if err := o.markTaint(in, id, nil, true); err != nil {
					why = fmt.Errorf("%w; marking the session as tainted (its output was not scanned) failed: %w", why, err)
				}
			}
			ans = hook.Fail(why)
		}
	}()
	now := o.Now()
	in, head, err := readEvent(a, stdin, g)
	if head != nil {
		return o.unscanned(a, head, err)
	}
	if err != nil {
		return hook.Fail(err)
	}
	cwd := hook.JudgeCwd(in.Cwd, projectDir(a, o.Getenv))
	if in.Stage == hook.After {
		_, canon := maskedArgs(in)
		g.scanning(in, hook.ToolCallID(in, canon))
		if o.beforeScan != nil {
			o.beforeScan()
		}
		es, flag := outcome(in), (*injectionFound)(nil)
		var p toolCompleted
		if json.Unmarshal(es[0].Payload, &p) == nil {
			flag = p.Injection
		}
		if flag != nil && !o.NoRecord {
			// The flag taints the rest of the session (permission step
			// 9): the later before events read it (taint.go).
			if err := o.markTaint(in, p.ToolCallID, flag.Classes, false); err != nil {
				return hook.Fail(err)
			}
		}
		g.scannedAfter()
		if err := o.record(g, in, cwd, "", now, es); err != nil {
			return hook.Fail(err)
		}
		return hook.Recorded(a)
	}
	d, mode, ferr := o.judge(in, cwd, o)
	if ferr != nil {
		ans = hook.Fail(ferr)
		d = permission.Decision{Decision: permission.Deny, Reason: ferr.Error() + " (the call is blocked)",
			RiskAtDecision: risk.Execute, SourcedFrom: permission.FromDefault}
	} else {
		// The answer weighs the findings too: an ask with a network or
		// credential finding, or one on a protected path, is not left to
		// Gemini CLI's confirmation.
		r := d.RiskAtDecision
		for _, f := range d.Findings {
			r = max(r, f.Risk)
		}
		ans = hook.Decide(in, d.Decision, d.Reason, r, hook.Options{Strict: o.Strict})
		d.Decision, d.Reason = ans.Verdict, ans.Reason
	}
	if err := o.record(g, in, cwd, mode, now, decision(in, cwd, d)); err != nil {
		return hook.Fail(err)
	}
	return ans
}

// readEvent reads the event on stdin: one of up to hook.MaxInput bytes,
// or an after event of up to hook.MaxAfterInput (hook.ParseLarge), whose
// output is then scanned whole like any other. A larger event is told
// from its first hook.MaxInput bytes (hook.Peek): a before event is
// refused at once, unread further; an after event's session is given to
// g before the rest is read, so that a deadline passed while it is read,
// parsed or scanned still marks it (Run). An after event larger than
// hook.MaxAfterInput, or one that does not parse, is not lost: head is
// what could be read of it, for unscanned.
func readEvent(a hook.Agent, stdin io.Reader, g *guard) (in *hook.Input, head *hook.Head, err error) {
	b, err := io.ReadAll(io.LimitReader(stdin, hook.MaxInput+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the hook event: %w", err)
	}
	if len(b) <= hook.MaxInput {
		in, err := hook.Parse(a, bytes.NewReader(b))
		return in, nil, err
	}
	quick := hook.Peek(a, b, true)
	switch {
	case quick.Known() && !quick.IsAfter():
		return nil, nil, hook.ErrTooLarge
	case quick.IsAfter() && quick.HasSession:
		g.scanning(&hook.Input{Agent: a, SessionID: quick.SessionID}, unnamedCall)
	}
	rest, err := io.ReadAll(io.LimitReader(stdin, hook.MaxAfterInput+1-int64(len(b))))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the hook event: %w", err)
	}
	b = append(b, rest...)
	in, err = hook.ParseLarge(a, b)
	if err != nil {
		h := quick
		if len(b) <= hook.MaxAfterInput {
			h = hook.Peek(a, b, false) // it does not parse: read what does
		}
		if h.IsAfter() {
			return nil, &h, err
		}
		return nil, nil, err
	}
	return in, nil, nil
}

// unnamedCall names, in a taint, an unscanned call whose id is not known.
const unnamedCall = "unscanned output"

// unscanned answers an after event whose output could not be scanned
// (cause says why): the tool already ran and its output reached the
// agent's model, so the session is marked tainted as if the output had
// been flagged, and every later call above read is asked, with a reason
// that says so. The answer is exit status 2 with the reason, which the
// agent shows; when nothing could be marked (no session_id read, or
// --no-record), the reason says that too.
func (o *Options) unscanned(a hook.Agent, h *hook.Head, cause error) hook.Answer {
	why := fmt.Sprintf("%v; the tool's output could not be scanned for injected instructions", cause)
	switch {
	case o.NoRecord:
		return hook.Fail(errors.New(why + ", and with --no-record the session is not marked as tainted"))
	case !h.HasSession:
		return hook.Fail(errors.New(why + ", and no session_id was read before the output, so no session could be marked as tainted"))
	}
	id := h.ToolUseID
	if id == "" {
		id = unnamedCall // Gemini CLI sends no tool_use_id
	}
	if err := o.markTaint(&hook.Input{Agent: a, SessionID: h.SessionID}, id, nil, true); err != nil {
		return hook.Fail(fmt.Errorf("%s; %w", why, err))
	}
	return hook.Fail(errors.New(why + ", so the session is marked as tainted: a person decides every later call above read"))
}

// judge decides in's call with the engine: the strictest decision of the
// calls it maps onto. An unknown tool is asked; a tool input that is not
// understood is denied. An error is a policy or configuration that does
// not load.
func judge(in *hook.Input, cwd string, o Options) (permission.Decision, permission.Mode, error) {
	calls, err := hook.Map(in)
	switch {
	case errors.Is(err, hook.ErrUnknownTool):
		return permission.Decision{Decision: permission.Ask, Reason: err.Error(), RiskAtDecision: risk.Execute,
			SourcedFrom: permission.FromDefault}, "", nil
	case err != nil:
		return permission.Decision{Decision: permission.Deny, Reason: err.Error(), RiskAtDecision: risk.Execute,
			SourcedFrom: permission.FromDefault}, "", nil
	}
	c, err := checkcmd.NewChecker(checkcmd.Options{Cwd: cwd, Policies: o.Policies, NoBuiltin: o.NoBuiltin, DataDir: o.DataDir, Getenv: o.Getenv})
	if err != nil {
		return permission.Decision{}, "", fmt.Errorf("the policy or configuration does not load: %w", err)
	}
	// A tool result of this session the scanner flagged (recorded by an
	// earlier after event) taints every later call, as in custom-agent's
	// own sessions.
	tn, err := o.taintOf(in)
	if err != nil {
		return permission.Decision{}, "", err
	}
	mode := hook.ModeFor(c.Mode(), in.PermissionMode)
	ds := make([]permission.Decision, 0, len(calls))
	for _, call := range calls {
		req := c.RequestFor(call.Tool, call.Args, cwd, mode)
		req.Taint = tn
		ds = append(ds, c.Decide(req))
	}
	d := hook.Combine(ds)
	if keys := hook.UnknownKeys(in); len(keys) > 0 && d.Decision != permission.Deny {
		// What the call touches may not be what was judged: never allow it,
		// and judge it at execute at least, so that Gemini CLI's ask is a
		// deny (its own confirmation would not show the key).
		why := hook.UnknownKeysReason(in, keys)
		if d.Decision == permission.Ask {
			why = d.Reason + "; and " + why
		}
		d.Decision, d.Reason, d.RiskAtDecision = permission.Ask, why, max(d.RiskAtDecision, risk.Execute)
	}
	return d, mode, nil
}

// projectDir is the agent's project directory from the environment it
// gives its hooks.
func projectDir(a hook.Agent, getenv func(string) string) string {
	if a == hook.GeminiCLI {
		if d := getenv("GEMINI_PROJECT_DIR"); d != "" {
			return d
		}
	}
	return getenv("CLAUDE_PROJECT_DIR")
}

// record writes the call's events to the journal, unless NoRecord, or
// the call was abandoned (an error: nothing is answered from it).
func (o *Options) record(g *guard, in *hook.Input, cwd string, mode permission.Mode, now time.Time, es []journal.Entry) error {
	if !g.begin() {
		return errAbandoned
	}
	if o.NoRecord {
		return nil
	}
	dir, err := datadir.Resolve(o.DataDir, o.Getenv, os.UserHomeDir)
	if err != nil {
		return fmt.Errorf("recording the decision: %w", err)
	}
	if mode == "" {
		mode = permission.ModeDefault
	}
	r := &journal.Record{
		V: journal.Version, Source: string(in.Agent), SessionID: hook.SessionID(in.Agent, in.SessionID),
		AgentSessionID: in.SessionID, TS: now, Cwd: cwd, Mode: string(mode), Events: es,
	}
	if err := journal.Write(filepath.Join(dir, journal.Dir), r); err != nil {
		return fmt.Errorf("recording the decision: %w", err)
	}
	return nil
}

// agentNames lists the agents hook answers, for a message.
func agentNames() string {
	names := make([]string, len(hook.Agents))
	for i, a := range hook.Agents {
		names[i] = string(a)
	}
	return strings.Join(names, " or ")
}
