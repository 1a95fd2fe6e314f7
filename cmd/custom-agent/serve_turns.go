package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/support/datadir"
	"github.com/custom-agent/custom-agent/web"
)

// serveTurns runs the turns started from the browser in the serve process
// (web.Turns): each on a sessionRunner of its own directory, in the one
// runtime serve opened, with the model run would use there. Their
// questions have no terminal: the web answers them, through the store's
// inbox and the runner's relay, as it answers any process's.
type serveTurns struct {
	cmd *cobra.Command
	g   *globalFlags
	f   runFlags // serve's flags: each turn gets a copy with its directory
	rt  *app.Runtime
	// ctx is serve's: the turns end with the server.
	ctx context.Context
	cwd string // a new session's default directory
	// modelName or modelHelp: the model of serve's directory, resolved
	// once at start-up (Model is asked for every page).
	modelName, modelHelp string

	mu      sync.Mutex
	running map[string]*serveTurn    // by session id
	models  map[string]model.Gateway // by spec (modelKey): a script model goes on through its file
	wg      sync.WaitGroup
}

// serveTurn is a turn serve runs; cancel is nil until it has started.
type serveTurn struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error // how the turn failed, once done is closed
	// ended is set once turn.completed is in the log: the turn is only
	// letting go of its session, and a next request waits for done
	// rather than being refused as "running".
	ended bool
}

var _ web.Turns = (*serveTurns)(nil)

func newServeTurns(ctx context.Context, cmd *cobra.Command, g *globalFlags, f runFlags, rt *app.Runtime) (*serveTurns, error) {
	cwd, err := app.Cwd(f.cwd)
	if err != nil {
		return nil, err
	}
	s := &serveTurns{cmd: cmd, g: g, f: f, rt: rt, ctx: ctx, cwd: cwd,
		running: map[string]*serveTurn{}, models: map[string]model.Gateway{}}
	mf := s.flagsFor(cwd, "")
	m, err := s.model(&mf)
	switch {
	case errors.Is(err, app.ErrNoModel):
		s.modelHelp = app.ModelHelp
	case err != nil:
		s.modelHelp = err.Error()
	default:
		s.modelName = m.Name()
	}
	return s, nil
}

func (s *serveTurns) Cwd() string { return s.cwd }

// Model is the model a new session in serve's directory uses, as
// resolved at start-up, or how to configure one.
func (s *serveTurns) Model() (name, help string) { return s.modelName, s.modelHelp }

func (s *serveTurns) flagsFor(cwd, sessionID string) runFlags {
	f := s.f
	f.cwd, f.sessionID, f.conf = cwd, sessionID, nil
	return f
}

// model resolves the model as run does in f's directory (--model, the
// configuration files, CUSTOM_AGENT_MODEL), one per spec.
func (s *serveTurns) model(f *runFlags) (model.Gateway, error) {
	conf, err := loadRunConfig(s.cmd, f)
	if err != nil {
		return nil, err
	}
	getenv, err := modelEnv(f.modelTimeout, app.ConfigEnv(conf, os.Getenv))
	if err != nil {
		return nil, err
	}
	key := modelKey(conf.Model, getenv("CUSTOM_AGENT_MODEL"), getenv)
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.models[key]; ok {
		return m, nil
	}
	m, err := app.Model(conf.Model, getenv)
	if err != nil {
		return nil, err
	}
	s.models[key] = m
	return m, nil
}

func (s *serveTurns) Running(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[id] != nil
}

// reserve marks the session as run here, or fails with
// web.ErrTurnRunning.
func (s *serveTurns) reserve(id string) (*serveTurn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cur := s.running[id]; cur != nil; cur = s.running[id] {
		if !cur.ended {
			return nil, web.ErrTurnRunning
		}
		s.mu.Unlock()
		<-cur.done
		s.mu.Lock()
	}
	t := &serveTurn{done: make(chan struct{})}
	s.running[id] = t
	return t, nil
}

func (s *serveTurns) release(id string, t *serveTurn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[id] == t {
		delete(s.running, id)
	}
}

func (s *serveTurns) Start(ctx context.Context, req web.TurnRequest) (string, error) {
	var t *serveTurn
	if req.SessionID != "" {
		var err error
		if t, err = s.reserve(req.SessionID); err != nil {
			return "", err
		}
	}
	r, err := s.open(ctx, req)
	if err != nil {
		if t != nil {
			s.release(req.SessionID, t)
		}
		return "", err
	}
	id := r.s.ID()
	if t == nil {
		if t, err = s.reserve(id); err != nil { // a new id: never taken
			r.close()
			return "", err
		}
	}
	turnCtx, cancel := context.WithCancel(s.ctx)
	started := make(chan struct{})
	var once sync.Once
	var logged atomic.Bool
	s.mu.Lock()
	t.cancel = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(t.done)
		defer s.release(id, t)
		defer cancel()
		defer r.close()
		defer once.Do(func() { close(started) })
		var err error
		_, err = r.turn(turnCtx, req.Prompt, turnOptions{
			newUI: func(*approval.Broker, context.CancelFunc) approvalUI { return webOnly{} },
			out:   io.Discard, // the log is the transcript: the page shows it
			onEvent: func(e event.Event) {
				logged.Store(true)
				once.Do(func() { close(started) })
				if e.Type == event.TurnCompleted {
					s.mu.Lock()
					t.ended = true
					s.mu.Unlock()
				}
			},
		})
		t.err = err
		if err != nil {
			fmt.Fprintf(s.cmd.ErrOrStderr(), "custom-agent serve: the turn in session %s failed: %v\n", id, err)
		}
	}()
	select {
	case <-started:
	case <-ctx.Done():
		return id, nil // the turn goes on
	}
	if !logged.Load() {
		<-t.done // it ended before anything was recorded
		if t.err != nil {
			return "", t.err
		}
	}
	return id, nil
}

// open makes the runner of a turn: its directory's configuration and
// policy, its MCP servers, and the session, new or resumed (which fails
// when another process holds it).
func (s *serveTurns) open(ctx context.Context, req web.TurnRequest) (*sessionRunner, error) {
	f := s.flagsFor(req.Cwd, req.SessionID)
	m, err := s.model(&f)
	if err != nil {
		return nil, err
	}
	r, timeout, err := prepareRunner(s.cmd, s.g, &f, m, false)
	if err != nil {
		return nil, err
	}
	// The MCP servers live as long as the turn, not the request.
	r.attach(s.ctx, s.rt, timeout, true)
	if err := r.start(ctx, req.SessionID); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// Cancel cancels the turn serve runs in the session: its pending question
// resolves to deny by system and the turn completes cancelled.
func (s *serveTurns) Cancel(ctx context.Context, id string) error {
	s.mu.Lock()
	t := s.running[id]
	var cancel context.CancelFunc
	if t != nil {
		cancel = t.cancel
	}
	s.mu.Unlock()
	if cancel == nil {
		return web.ErrNotRunning
	}
	cancel()
	select {
	case <-t.done:
	case <-ctx.Done():
	}
	return nil
}

// wait cancels nothing: it returns once every turn has ended (serve
// cancels them by ending ctx).
func (s *serveTurns) wait() { s.wg.Wait() }

// webOnly is the approval UI of a browser-started turn: none in this
// process. The relay hands the broker the web's answers; the approval
// timeout denies a question nobody answers.
type webOnly struct{}

func (webOnly) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// Revoke removes a session rule of a session no turn runs in: the session
// is resumed here, in the directory the rule was made in and under its
// lease (so this fails, with eventlog.ErrSessionBusy, when another
// process runs it and holds the rule), the removal is recorded
// (session.Revoke: policy.changed), and the session is let go again. No
// model, MCP server or tool is started for it.
func (s *serveTurns) Revoke(ctx context.Context, req web.RevokeRequest) (string, error) {
	t, err := s.reserve(req.SessionID)
	if err != nil {
		return "", err
	}
	defer func() { close(t.done); s.release(req.SessionID, t) }()
	f := s.flagsFor(req.Cwd, req.SessionID)
	r, _, err := prepareRunner(s.cmd, s.g, &f, nil, false)
	if err != nil {
		return "", err
	}
	// Its grants cannot be trusted from an edited log: not resumed.
	if err := s.rt.Store.Verify(ctx, req.SessionID); err != nil {
		return "", fmt.Errorf("session %s does not verify, so it is not resumed: %w", req.SessionID, err)
	}
	cfg := session.Config{Log: s.rt.Store, Router: s.rt.Router, Approver: s.rt.Broker}
	sess, err := session.Resume(ctx, cfg, req.SessionID, session.Info{Cwd: r.cwd, Home: r.home, DataDir: datadir.Real(r.dataDir), Mode: r.mode, Rules: r.rules, Env: os.Environ()})
	if err != nil {
		return "", err
	}
	defer sess.Close()
	rule, err := sess.Revoke(ctx, req.RuleID)
	if errors.Is(err, policy.ErrNotFound) {
		return "", fmt.Errorf("%w: %w", web.ErrNoRule, err)
	}
	if err != nil {
		return "", err
	}
	return cli.DescribeRule(rule), nil
}

// RevokeApproval drops one prior approval of a session no turn runs in, as
// Revoke does a rule: resumed here under its lease in the directory the
// approval was made in, recorded (session.RevokeApproval: policy.changed),
// and let go. No model, MCP server or tool is started for it.
func (s *serveTurns) RevokeApproval(ctx context.Context, req web.ApprovalRevokeRequest) error {
	t, err := s.reserve(req.SessionID)
	if err != nil {
		return err
	}
	defer func() { close(t.done); s.release(req.SessionID, t) }()
	f := s.flagsFor(req.Cwd, req.SessionID)
	r, _, err := prepareRunner(s.cmd, s.g, &f, nil, false)
	if err != nil {
		return err
	}
	if err := s.rt.Store.Verify(ctx, req.SessionID); err != nil {
		return fmt.Errorf("session %s does not verify, so it is not resumed: %w", req.SessionID, err)
	}
	cfg := session.Config{Log: s.rt.Store, Router: s.rt.Router, Approver: s.rt.Broker}
	sess, err := session.Resume(ctx, cfg, req.SessionID, session.Info{Cwd: r.cwd, Home: r.home, DataDir: datadir.Real(r.dataDir), Mode: r.mode, Rules: r.rules, Env: os.Environ()})
	if err != nil {
		return err
	}
	defer sess.Close()
	err = sess.RevokeApproval(ctx, req.Seq)
	if errors.Is(err, session.ErrNoApproval) {
		return fmt.Errorf("%w: %w", web.ErrNoApproval, err)
	}
	return err
}
