package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/internal/app"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
)

type runFlags struct {
	model           string
	cwd             string
	mode            string
	sessionID       string
	json            bool
	approvalTimeout time.Duration
	maxSteps        int
	maxOutput       sizeFlag // --max-output-bytes; unset means $CUSTOM_AGENT_MAX_OUTPUT_BYTES, else the default
}

// sizeFlag is a flag holding a size such as 2GiB, checked when it is set.
type sizeFlag string

func (f *sizeFlag) String() string { return string(*f) }
func (f *sizeFlag) Type() string   { return "size" }
func (f *sizeFlag) Set(v string) error {
	if _, err := app.ParseSize(v); err != nil {
		return err
	}
	*f = sizeFlag(v)
	return nil
}

// maxOutputUsage documents --max-output-bytes for every command that runs
// tools.
var maxOutputUsage = "most bytes of one output stream (stdout or stderr) of a tool call kept in the artifact store, e.g. 2GiB, 512MiB, 500MB; the rest is counted, not stored, and tool.completed says how much was dropped (default $" + app.MaxOutputEnv + ", else " + app.FormatSize(executor.DefaultMaxStored) + ")"

func newRunCmd(g *globalFlags) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run one turn of the agent on your repository",
		Long: `Run one turn: the model reads your prompt, may call tools, and answers.
Every tool call goes through the PermissionEngine; calls it asks about are put
to you in the terminal (or read from stdin when it is not a terminal: one of
allow_once, allow_session, allow_project, deny per line; a destructive call
needs a second line "confirm" to be allowed). The session id is printed at the
end; continue it with --session.

With --json, every event is printed as one JSON line on stdout and nothing
else is written there.`,
		Example: `  custom-agent run --model openai:gpt-4.1 "run the tests and fix what fails"
  custom-agent run --model script:demo.jsonl --json "把测试跑一遍"
  custom-agent run --session 20261130-101500-ab12cd34 "now clean dist"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(args[0]) == "" {
				return errors.New("the prompt is empty")
			}
			m, err := app.Model(f.model, os.Getenv)
			if err != nil {
				return err
			}
			_, err = runTurn(cmd, g, f, m, args[0], uiFor(cmd))
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model as openai:NAME, anthropic:NAME or script:FILE (default $CUSTOM_AGENT_MODEL)")
	fl.StringVar(&f.cwd, "cwd", "", "working directory of the session (default the current directory)")
	fl.StringVar(&f.mode, "mode", "default", "session mode: default, or plan (only reads are allowed)")
	fl.StringVar(&f.sessionID, "session", "", "continue this session instead of starting a new one")
	fl.BoolVar(&f.json, "json", false, "print every event as one JSON line on stdout, and nothing else")
	fl.DurationVar(&f.approvalTimeout, "approval-timeout", approval.DefaultTimeout, "how long a question waits for an answer before it is denied")
	fl.IntVar(&f.maxSteps, "max-steps", 25, "most model calls in one turn")
	fl.Var(&f.maxOutput, "max-output-bytes", maxOutputUsage)
	return cmd
}

// runTurn runs one turn with the given model and approval UI.
func runTurn(cmd *cobra.Command, g *globalFlags, f *runFlags, m model.Gateway, prompt string, newUI func(*approval.Broker, context.CancelFunc) approvalUI) (string, error) {
	ctx := cmd.Context()
	mode := permission.Mode(f.mode)
	if !mode.Valid() {
		return "", fmt.Errorf("unknown mode %q (want default or plan)", f.mode)
	}
	if f.approvalTimeout <= 0 {
		return "", errors.New("--approval-timeout must be positive")
	}
	maxOutput, err := app.MaxOutputBytes(string(f.maxOutput), os.Getenv)
	if err != nil {
		return "", err
	}
	cwd, err := app.Cwd(f.cwd)
	if err != nil {
		return "", err
	}
	// The same rules check uses; a policy file that does not load stops the
	// run before anything starts.
	rules, err := openPolicy(cwd, nil)
	if err != nil {
		return "", err
	}
	dir, err := g.resolveDataDir()
	if err != nil {
		return "", err
	}
	rt, err := app.Open(ctx, dir, f.approvalTimeout)
	if err != nil {
		return "", err
	}
	defer rt.Close()
	if rt.Recovered > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "resolved %d question(s) left pending by an earlier process to deny (process restarted)\n", rt.Recovered)
	}
	home, _ := os.UserHomeDir()
	cfg := session.Config{
		Log: rt.Store, Model: m, Router: rt.Router, Artifacts: rt.Artifacts, Approver: rt.Broker,
		MaxSteps: f.maxSteps, System: systemPrompt(cwd),
		Exec: executor.Options{ApprovalTimeout: f.approvalTimeout, MaxStored: maxOutput},
	}
	info := session.Info{Cwd: cwd, Home: home, Mode: mode, Rules: rules, Env: os.Environ()}
	var s *session.Session
	if f.sessionID != "" {
		if s, err = session.Resume(ctx, cfg, f.sessionID, info); err != nil {
			return "", err
		}
	} else {
		s = session.New(cfg, info)
	}

	uiCtx, stopUI := context.WithCancel(ctx)
	defer stopUI()
	turnCtx, cancelTurn := context.WithCancel(ctx)
	defer cancelTurn()
	ui := newUI(rt.Broker, cancelTurn)
	uiDone := make(chan struct{})
	go func() {
		defer close(uiDone)
		_ = ui.Run(uiCtx)
	}()

	out := cmd.OutOrStdout()
	r := &renderer{w: out}
	var last event.TurnCompletedPayload
	for e, err := range s.RunTurn(turnCtx, prompt) {
		if err != nil {
			return s.ID(), err
		}
		if e.Type == event.TurnCompleted {
			_ = json.Unmarshal(e.Payload, &last)
		}
		if f.json {
			b, err := json.Marshal(e)
			if err != nil {
				return s.ID(), err
			}
			fmt.Fprintf(out, "%s\n", b)
			continue
		}
		r.event(e)
	}
	stopUI()
	<-uiDone
	fmt.Fprintf(cmd.ErrOrStderr(), "session %s (custom-agent log %s)\n", s.ID(), s.ID())
	switch last.StopReason {
	case event.StopFinal:
		return s.ID(), nil
	case event.StopCancelled:
		return s.ID(), &exitError{code: 130, msg: "turn cancelled"}
	default:
		return s.ID(), &exitError{code: 1, msg: "turn ended: " + last.StopReason + ": " + last.Error}
	}
}

func systemPrompt(cwd string) string {
	return "You are a coding agent working in " + cwd + ". Use the tools to read, search, edit and run things in this repository. " +
		"Every tool call is checked by a permission engine; a denied call returns the reason: do not try to get around it, " +
		"explain what you needed instead. Keep answers short."
}

// approvalUI answers the broker's questions until ctx ends.
type approvalUI interface {
	Run(ctx context.Context) error
}

// uiFor returns the terminal approval UI on the process's stdin and stderr,
// or, when the command's input was redirected (tests), the line protocol on
// the command's input and error output. Ctrl-C at a question denies it and
// stops the process's turn, as it would anywhere else.
func uiFor(cmd *cobra.Command) func(*approval.Broker, context.CancelFunc) approvalUI {
	if cmd.InOrStdin() == os.Stdin {
		return func(b *approval.Broker, cancelTurn context.CancelFunc) approvalUI {
			return cli.NewStdio(b, cancelTurn)
		}
	}
	return func(b *approval.Broker, _ context.CancelFunc) approvalUI {
		return cli.New(b, cmd.InOrStdin(), cmd.ErrOrStderr(), nil)
	}
}
