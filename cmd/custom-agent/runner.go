package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/mcp"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/sandbox"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/support/datadir"
)

// sessionRunner holds what the turns of one conversation share: the
// configuration of its directory, the runtime (event log, artifacts,
// approval broker), the MCP servers and the session. run uses it for one
// turn, chat for many. It is not safe for concurrent use: one turn runs at a
// time.
type sessionRunner struct {
	cmd       *cobra.Command
	g         *globalFlags
	f         *runFlags
	m         model.Gateway
	conf      *config.Config
	cwd, home string
	dataDir   string
	mode      permission.Mode // the mode a new session starts in
	noBuiltin bool
	rt        *app.Runtime
	// ownsRuntime: close closes rt (run, chat); serve's runners share
	// the runtime of the process.
	ownsRuntime bool
	servers     *mcp.Manager
	cfg         session.Config

	// rules is the session's policy store: its session level belongs to
	// s, so a new session gets a new store.
	rules *policy.Store
	s     *session.Session

	// prestart: sandbox helpers are started ahead of the calls
	// (--sandbox-prestart); gate holds them, closed with the runner.
	prestart bool
	gate     *sandbox.Gate
}

// openRunner checks the flags and the configuration of the session's
// directory, opens the event log and starts the MCP servers; start then
// begins or resumes the session. close releases it all.
func openRunner(cmd *cobra.Command, g *globalFlags, f *runFlags, m model.Gateway) (*sessionRunner, error) {
	ctx := cmd.Context()
	r, approvalTimeout, err := prepareRunner(cmd, g, f, m, questionsAtTerminal(cmd))
	if err != nil {
		return nil, err
	}
	store, err := g.resolveStore()
	if err != nil {
		return nil, err
	}
	rt, err := app.OpenWith(ctx, r.dataDir, store, approvalTimeout)
	if err != nil {
		return nil, err
	}
	if rt.Recovered > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "resolved %d question(s) left pending by an earlier process to deny (process restarted)\n", rt.Recovered)
	}
	r.ownsRuntime = true
	r.attach(ctx, rt, approvalTimeout, false)
	return r, nil
}

// prepareRunner checks the flags and the configuration of the session's
// directory and loads its policy; it opens nothing. terminal says whether
// the questions are put to a person at a terminal (no time limit unless
// one is set). It returns the approval timeout the turns' questions get.
func prepareRunner(cmd *cobra.Command, g *globalFlags, f *runFlags, m model.Gateway, terminal bool) (*sessionRunner, time.Duration, error) {
	conf, err := loadRunConfig(cmd, f)
	if err != nil {
		return nil, 0, err
	}
	mode, err := modeOf(f.mode, conf.Mode) // --mode, else the files
	if err != nil {
		return nil, 0, err
	}
	changed := false
	if fl := cmd.Flags().Lookup(approvalTimeoutFlag); fl != nil {
		changed = fl.Changed
	}
	approvalTimeout, err := chooseApprovalTimeout(changed, f.approvalTimeout, terminal)
	if err != nil {
		return nil, 0, err
	}
	if conf.ApprovalTimeout > 0 && conf.Sources["approvalTimeout"].Level != config.LevelFlag {
		approvalTimeout = conf.ApprovalTimeout
	}
	cwd, err := app.Cwd(f.cwd)
	if err != nil {
		return nil, 0, err
	}
	prestart, err := sandboxPrestart(f.sandboxPrestart, os.Getenv)
	if err != nil {
		return nil, 0, err
	}
	r := &sessionRunner{cmd: cmd, g: g, f: f, m: m, conf: conf, cwd: cwd, mode: mode, prestart: prestart}
	r.home, _ = os.UserHomeDir()
	// The same rules check uses; a policy file that does not load stops the
	// run before anything starts.
	// The built-in rules for read-only commands apply unless
	// --no-builtin-rules, CUSTOM_AGENT_BUILTIN_RULES=off or builtinRules:
	// false in a (trusted) configuration file turns them off.
	r.noBuiltin = f.noBuiltin || conf.BuiltinRules != nil && !*conf.BuiltinRules
	if _, err := r.openRules(); err != nil {
		return nil, 0, err
	}
	if r.dataDir, err = g.resolveDataDir(); err != nil {
		return nil, 0, err
	}
	return r, approvalTimeout, nil
}

// attach gives the runner the runtime its turns run in and starts the MCP
// servers of its directory. perSession: the runtime serves other sessions
// at the same time (serve), so the MCP tools and skills go into a router
// of this runner's own rather than the runtime's shared one.
func (r *sessionRunner) attach(ctx context.Context, rt *app.Runtime, approvalTimeout time.Duration, perSession bool) {
	r.rt = rt
	cmd, conf, cwd := r.cmd, r.conf, r.cwd
	router := rt.Router
	if perSession {
		var errs []error
		router, r.servers, errs = rt.SessionTools(ctx, conf.MCPServers, cwd, app.ConfigEnv(conf, os.Getenv))
		for _, err := range errs {
			fmt.Fprintln(cmd.ErrOrStderr(), "custom-agent: "+err.Error())
		}
	} else {
		// MCP servers run for this session only; their tools pass the
		// engine like any other.
		servers, mcpErrs := rt.StartMCP(ctx, conf, cwd, os.Getenv)
		r.servers = servers
		for _, err := range mcpErrs {
			fmt.Fprintln(cmd.ErrOrStderr(), "custom-agent: "+err.Error())
		}
		// Skills (docs/skills.md): use_skill is offered when there are any.
		_, skillProblems := app.Skills(rt.Router, cwd, r.rules.Env().ConfigHome)
		for _, err := range skillProblems {
			fmt.Fprintln(cmd.ErrOrStderr(), "custom-agent: skill: "+err.Error())
		}
	}
	gate := sandboxGate(conf, r.home, r.f.configHome, r.dataDir)
	if r.prestart {
		gate.StartAhead(1)
	}
	r.gate = gate
	r.cfg = session.Config{
		Log: rt.Store, Model: r.m, Router: router, Artifacts: rt.Artifacts, Approver: rt.Broker,
		MaxSteps: r.f.maxSteps, System: systemPrompt(cwd),
		Exec: executor.Options{ApprovalTimeout: approvalTimeout, MaxStored: app.MaxOutput(conf), Sandbox: gate,
			Known: func() []string { return datadir.ServeTokens(r.dataDir) }},
		Sandbox: gate.State(),
		// Resources are read only for includes; the model is not offered
		// them.
		Includes: r.servers.Resources(),
	}
}

func (r *sessionRunner) openRules() (*policy.Store, error) {
	rules, err := openPolicyWith(r.cwd, r.f.configHome, r.noBuiltin)
	if err != nil {
		return nil, err
	}
	r.rules = rules
	return rules, nil
}

// close stops the MCP servers, ends the session's lease and closes the
// event log when the runner owns it.
func (r *sessionRunner) close() {
	if r.gate != nil {
		r.gate.Close()
	}
	if r.servers != nil {
		r.servers.Close()
	}
	if r.s != nil {
		r.s.Close()
	}
	if r.rt != nil && r.ownsRuntime {
		r.rt.Close()
	}
}

// start begins a new session (id "") or resumes the session id names (an
// id or "last"), with a policy store of its own. A session whose log does
// not verify is not resumed.
func (r *sessionRunner) start(ctx context.Context, id string) error {
	rules := r.rules
	if r.s != nil {
		r.s.Close() // another process may continue it from here on
		// The session level of the store belongs to the session that
		// ends: the next one starts without its rules.
		var err error
		if rules, err = r.openRules(); err != nil {
			return err
		}
	}
	info := session.Info{Cwd: r.cwd, Home: r.home, DataDir: datadir.Real(r.dataDir), Mode: r.mode, Rules: rules, Env: os.Environ()}
	if id == "" {
		r.s = session.New(r.cfg, info)
		return nil
	}
	id, err := resolveContinuable(ctx, r.rt.Store, r.dataDir, id)
	if err != nil {
		return err
	}
	// A session whose chain does not verify was edited: its grants
	// and history cannot be trusted, so it is not continued.
	if err := r.rt.Store.Verify(ctx, id); err != nil {
		return &exitError{code: 1, err: err, msg: fmt.Sprintf(
			"custom-agent: session %s does not verify, so it is not continued: %v (custom-agent audit verify %s shows where; start a new session instead)", id, err, id)}
	}
	s, err := session.Resume(ctx, r.cfg, id, info)
	if err != nil {
		return err
	}
	r.s = s
	// A resumed session continues in its recorded mode; --mode asks for
	// another, and the change is recorded (session.mode_changed).
	if r.conf.Sources["mode"].Level == config.LevelFlag {
		if err := s.ChangeMode(ctx, r.mode, event.ActorUser); err != nil {
			return err
		}
	}
	if m := s.Moved(); m != nil {
		fmt.Fprintf(r.cmd.ErrOrStderr(), "session %s last ran in %s, now in %s: its %d session rule(s) and %d approval(s) made there do not apply here, so those calls are asked again\n",
			id, m.From, r.cwd, m.Rules, m.Approvals)
	}
	return nil
}

// turnOptions say how one turn is shown and answered.
type turnOptions struct {
	includes []session.Include
	// newUI makes the approval UI that answers the turn's questions; it is
	// given the function that cancels the turn.
	newUI func(*approval.Broker, context.CancelFunc) approvalUI
	out   io.Writer // where the turn is rendered (or its events with json)
	json  bool
	// cancel, when not nil, receives the turn's cancel function while the
	// turn runs (chat's Ctrl-C), and nil once it has ended.
	cancel func(context.CancelFunc)
	// onEvent, when not nil, sees each event of the turn once it is in
	// the log.
	onEvent func(event.Event)
}

// turn runs one turn of the session and returns how it ended. The error is
// an infrastructure failure (the log could not be written), not a turn that
// ended in error or was cancelled: those are in the payload.
func (r *sessionRunner) turn(ctx context.Context, prompt string, o turnOptions) (event.TurnCompletedPayload, error) {
	uiCtx, stopUI := context.WithCancel(ctx)
	defer stopUI()
	turnCtx, cancelTurn := context.WithCancel(ctx)
	defer cancelTurn()
	if o.cancel != nil {
		o.cancel(cancelTurn)
		defer o.cancel(nil)
	}
	ui := o.newUI(r.rt.Broker, cancelTurn)
	if d, ok := ui.(interface{ SetDir(string) }); ok {
		d.SetDir(r.cwd) // write_file questions diff against the file in the session's directory
	}
	uiDone := make(chan struct{})
	go func() {
		defer close(uiDone)
		_ = ui.Run(uiCtx)
	}()
	// Answers given in another process's UI (custom-agent serve) reach
	// the broker too; the first answer from any UI wins.
	relayDone := r.rt.Relay(uiCtx, r.s.ID(), slog.New(slog.NewTextHandler(r.cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	// The UI is stopped before the turn returns, so that the next prompt
	// (chat) owns the terminal alone.
	defer func() { stopUI(); <-uiDone; relayDone() }()

	out := o.out
	rd := &renderer{w: out, model: r.m.Name(), cols: func() int { return columns(out) }}
	// A status line with the time elapsed, on a terminal only.
	if fo, ok := out.(*os.File); ok && !o.json && term.IsTerminal(int(fo.Fd())) {
		rd.status = newStatusLine(out)
		defer rd.status.close()
	}
	var last event.TurnCompletedPayload
	for e, err := range r.s.RunTurnIncluding(turnCtx, prompt, o.includes) {
		if err != nil {
			return last, err
		}
		if e.Type == event.TurnCompleted {
			_ = json.Unmarshal(e.Payload, &last)
		}
		if o.onEvent != nil {
			o.onEvent(e)
		}
		if o.json {
			b, err := json.Marshal(e)
			if err != nil {
				return last, err
			}
			fmt.Fprintf(out, "%s\n", b)
			continue
		}
		rd.event(e)
	}
	return last, nil
}
