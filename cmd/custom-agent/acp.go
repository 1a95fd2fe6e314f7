package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/approval/acp"
	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/support/datadir"
)

type acpFlags struct {
	model           string
	mode            string
	approvalTimeout time.Duration
	maxSteps        int
	maxOutput       sizeFlag
	modelTimeout    time.Duration
	logLevel        string
}

func newACPCmd(g *globalFlags) *cobra.Command { return acpCommand(g, &acpFlags{}) }

func acpCommand(g *globalFlags, f *acpFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve the Agent Client Protocol on stdin/stdout, for Zed and other editors",
		Long: `Run custom-agent as an ACP agent: JSON-RPC 2.0 on stdin and stdout, one
message a line, as an editor (Zed, or any ACP client) starts it. The editor
is the approval UI: a call the PermissionEngine asks about is put to you there
(session/request_permission), and every tool call shows as a tool call with
its diff or output. stdout carries only protocol; logs go to stderr.

Sessions are recorded in the same event log as run's (custom-agent log
SESSION shows one); session/load continues a recorded session with its
approvals and session rules, as run --session does. See docs/acp.md.`,
		Example: `  custom-agent acp --model anthropic:claude-sonnet-4-5
  custom-agent acp --model script:demo.jsonl --approval-timeout 2m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runACP(cmd, g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model as openai:NAME, anthropic:NAME or script:FILE (default $CUSTOM_AGENT_MODEL)")
	addModeFlag(fl, &f.mode)
	fl.DurationVar(&f.approvalTimeout, approvalTimeoutFlag, 0, "how long a question waits for the editor's answer before it is denied (default "+approvalDefault().String()+")")
	fl.IntVar(&f.maxSteps, "max-steps", 25, "most model calls in one turn")
	fl.Var(&f.maxOutput, "max-output-bytes", maxOutputUsage)
	fl.DurationVar(&f.modelTimeout, "model-timeout", 0, "how long a model call waits for the server's first byte, and then between two pieces of its answer (default $"+model.TimeoutEnv+", else "+model.DefaultTimeout.String()+")")
	fl.StringVar(&f.logLevel, "log-level", "info", "level of the log written to stderr: debug, info, warn or error")
	return cmd
}

func approvalDefault() time.Duration {
	d, _ := chooseApprovalTimeout(false, 0, false)
	return d
}

func runACP(cmd *cobra.Command, g *globalFlags, f *acpFlags) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	slog.SetDefault(logger) // nothing may reach stdout but protocol
	// The mode new sessions start in; the editor changes it per session.
	mode, err := parseMode(f.mode)
	if err != nil {
		return err
	}
	changed := cmd.Flags().Lookup(approvalTimeoutFlag).Changed
	timeout, err := chooseApprovalTimeout(changed, f.approvalTimeout, false)
	if err != nil {
		return err
	}
	maxOutput, err := app.MaxOutputBytes(string(f.maxOutput), os.Getenv)
	if err != nil {
		return err
	}
	// Without a usable model the agent still serves, and session/new
	// says what to set.
	var m model.Gateway
	getenv, modelErr := modelEnv(f.modelTimeout, os.Getenv)
	if modelErr == nil {
		m, modelErr = app.Model(f.model, getenv)
	}
	if modelErr != nil {
		logger.Warn("no usable model from the flags and the environment: a session needs one from the configuration files of its directory", "err", modelErr)
	}
	dir, err := g.resolveDataDir()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	store, err := g.resolveStore()
	if err != nil {
		return err
	}
	rt, err := app.OpenWith(ctx, dir, store, timeout)
	if err != nil {
		return err
	}
	defer rt.Close()
	if rt.Recovered > 0 {
		logger.Info("resolved questions left pending by an earlier process to deny (process restarted)", "count", rt.Recovered)
	}
	home, _ := os.UserHomeDir()
	// The editor's sessions: the sandbox is on unless
	// CUSTOM_AGENT_SANDBOX=off turns it off.
	gate := sandboxGate(&config.Config{Sandbox: os.Getenv(config.EnvSandbox)}, home, "", dir)
	prestart, err := sandboxPrestart("", os.Getenv)
	if err != nil {
		return err
	}
	if prestart {
		gate.StartAhead(1)
	}
	defer gate.Close()
	models := &acpSettings{cmd: cmd, f: f, cache: map[string]model.Gateway{}}
	if m != nil {
		models.cache[modelKey(f.model, os.Getenv("CUSTOM_AGENT_MODEL"), os.Getenv)] = m
	}
	cfg := acp.Config{
		Store:  rt.Store,
		Broker: rt.Broker,
		Session: session.Config{
			Router: rt.Router, Artifacts: rt.Artifacts, MaxSteps: f.maxSteps,
			Exec: executor.Options{ApprovalTimeout: timeout, MaxStored: maxOutput, Logger: logger, Sandbox: gate,
				Known: func() []string { return datadir.ServeTokens(dir) }},
			Sandbox: gate.State(),
		},
		Model: m, ModelErr: modelErr,
		// Each session reads the configuration files of its directory
		// (the project's, if trusted for its risky keys, and the user's),
		// with the flags on top, as run does.
		Settings: models.settings,
		// The editor's mcpServers run for their session only, with a
		// router of its own; the agent stops them when the connection
		// closes.
		// The directory's skills (docs/skills.md) are offered through
		// the session's router too; a skill left out is told.
		MCP: func(ctx context.Context, cwd string, servers map[string]config.Server) (acp.SessionTools, error) {
			router, m, errs := rt.SessionTools(ctx, servers, cwd, os.Getenv)
			return acp.SessionTools{Router: router, Failed: errs, Close: m.Close}, nil
		},
		System:  systemPrompt,
		Cwd:     app.Cwd,
		Home:    home,
		DataDir: datadir.Real(dir),
		Env:     os.Environ(),
		Mode:    mode,
		Logger:  logger,
		Version: version(),
	}
	if m == nil && modelErr == nil {
		cfg.ModelErr = errors.New(app.ModelHelp)
	}
	// Answers given in another process's UI (custom-agent serve) reach
	// the broker too, for every session of the connection; the editor's
	// request is withdrawn when one wins.
	relayCtx, stopRelay := context.WithCancel(ctx)
	defer rt.Relay(relayCtx, "", logger)()
	defer stopRelay()
	return acp.Serve(ctx, cfg, cmd.InOrStdin(), cmd.OutOrStdout())
}

// acpSettings resolves a session's settings from the configuration files
// of its directory, and keeps one model per spec (and provider base URLs),
// so that sessions naming the same model share it (a script model goes on
// through its file).
type acpSettings struct {
	cmd *cobra.Command
	f   *acpFlags

	mu    sync.Mutex
	cache map[string]model.Gateway
}

// modelKey is the cache key of a model spec (the flag, else the given
// fallback) under getenv's provider base URLs.
func modelKey(spec, fallback string, getenv func(string) string) string {
	if spec == "" {
		spec = fallback
	}
	return spec + "\x00" + getenv("OPENAI_BASE_URL") + "\x00" + getenv("ANTHROPIC_BASE_URL")
}

func (s *acpSettings) settings(cwd string) (acp.Settings, error) {
	conf, err := app.LoadConfig(cwd, "", os.Getenv, acpConfigFlags(s.cmd, s.f))
	if err != nil {
		return acp.Settings{}, err
	}
	st := acp.Settings{Warnings: conf.Warnings, Servers: conf.MCPServers, MaxStored: app.MaxOutput(conf),
		ApprovalTimeout: conf.ApprovalTimeout, Mode: permission.Mode(conf.Mode)}
	noBuiltin := conf.BuiltinRules != nil && !*conf.BuiltinRules
	rules, err := openPolicyWith(cwd, "", noBuiltin)
	if err != nil {
		return acp.Settings{}, fmt.Errorf("the policy does not load: %w", err)
	}
	st.Rules = rules
	getenv, err := modelEnv(s.f.modelTimeout, app.ConfigEnv(conf, os.Getenv))
	if err != nil {
		st.ModelErr = err
		return st, nil
	}
	key := modelKey(conf.Model, "", getenv)
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.cache[key]; ok {
		st.Model = m
		return st, nil
	}
	if conf.Model == "" {
		st.ModelErr = errors.New(app.ModelHelp)
		return st, nil
	}
	m, err := app.Model(conf.Model, getenv)
	if err != nil {
		st.ModelErr = fmt.Errorf("model %s (%s): %w", conf.Model, conf.Sources["model"], err)
		return st, nil
	}
	s.cache[key] = m
	st.Model = m
	return st, nil
}

// acpConfigFlags are the flags of acp that stand for configuration keys.
func acpConfigFlags(cmd *cobra.Command, f *acpFlags) config.Flags {
	return flagsGiven(cmd, f.model, f.mode, f.approvalTimeout, f.maxOutput)
}
