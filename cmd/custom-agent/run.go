package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/custom-agent/custom-agent/contextbuild"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/mcp"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/session"
)

type runFlags struct {
	model           string
	cwd             string
	mode            string
	sessionID       string
	json            bool
	approvalTimeout time.Duration // --approval-timeout; see approvalTimeout for unset
	configHome      string        // the config home for the policy and trust; "" means from the environment (demo sets its own)
	maxSteps        int
	maxOutput       sizeFlag // --max-output-bytes; unset means $CUSTOM_AGENT_MAX_OUTPUT_BYTES, else the default
	promptFile      string
	modelTimeout    time.Duration  // 0: $CUSTOM_AGENT_MODEL_TIMEOUT, else model.DefaultTimeout
	conf            *config.Config // the merged configuration, once loaded (loadRunConfig)
	noBuiltin       bool           // --no-builtin-rules: no built-in rules for read-only commands
	includes        []string       // --include mcp://SERVER/URI, repeatable
	sandbox         string         // --sandbox on|off; "" when not given
	sandboxPrestart string         // --sandbox-prestart on|off; "" when not given
}

// loadRunConfig loads the configuration of the session's directory once,
// with the command's flags on top, and prints its warnings.
func loadRunConfig(cmd *cobra.Command, f *runFlags) (*config.Config, error) {
	if f.conf != nil {
		return f.conf, nil
	}
	cwd, err := app.Cwd(f.cwd)
	if err != nil {
		return nil, err
	}
	c, err := app.LoadConfig(cwd, f.configHome, os.Getenv, configFlags(cmd, f))
	if err != nil {
		return nil, err
	}
	for _, w := range c.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w)
	}
	f.conf = c
	return c, nil
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
		Use:   "run [flags] PROMPT | - | @FILE",
		Short: "Run one turn of the agent on your repository",
		Long: `Run one turn: the model reads your prompt, may call tools, and answers.
Every tool call goes through the PermissionEngine; calls it asks about are put
to you in the terminal (or read from stdin when it is not a terminal: one of
allow_once, allow_session, allow_project, deny per line; a destructive call
needs a second line "confirm" to be allowed). The session id is printed at the
end; continue it with --session (an id, or "last" for the most recent one). A
session whose log does not verify (custom-agent audit verify) is not continued.
Session rules and approvals hold only in the directory they were made in: a
session continued in another --cwd asks again, and says so.

The prompt is the argument; "-" reads it from stdin, "@FILE" (or
--prompt-file FILE) from a file. With the prompt on stdin, questions cannot
be answered there: use a terminal, or they are denied.

With --json, every event is printed as one JSON line on stdout and nothing
else is written there.`,
		Example: `  custom-agent run --model openai:gpt-4.1 "run the tests and fix what fails"
  custom-agent run --model script:demo.jsonl --json "把测试跑一遍"
  custom-agent run --session 20261130-101500-ab12cd34 "now clean dist"
  custom-agent run --session last @task.md
  git diff | custom-agent run -`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prompt, err := readPrompt(cmd, f.promptFile, args)
			if err != nil {
				return err
			}
			m, err := turnModel(cmd, f)
			if err != nil {
				return err
			}
			_, err = runTurn(cmd, g, f, m, prompt, uiFor(cmd))
			return err
		},
	}
	addTurnFlags(cmd, f)
	fl := cmd.Flags()
	fl.StringVar(&f.promptFile, "prompt-file", "", `read the prompt from this file ("-": stdin) instead of the argument`)
	fl.StringArrayVar(&f.includes, "include", nil, "put an MCP resource in this turn's context, read through the permission engine as mcp__SERVER__resource: mcp://SERVER/URI (repeatable; @server:uri in the prompt does the same). Nothing else is included")
	return cmd
}

// addTurnFlags adds the flags of a command that runs turns (run, chat).
func addTurnFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model as openai:NAME, anthropic:NAME or script:FILE (default $CUSTOM_AGENT_MODEL)")
	fl.StringVar(&f.cwd, "cwd", "", "working directory of the session (default the current directory)")
	addModeFlag(fl, &f.mode)
	fl.StringVar(&f.sessionID, "session", "", `continue this session instead of starting a new one ("last": the most recent)`)
	fl.BoolVar(&f.json, "json", false, "print every event as one JSON line on stdout, and nothing else")
	fl.BoolVar(&f.noBuiltin, "no-builtin-rules", false, noBuiltinRulesUsage)
	fl.StringVar(&f.sandbox, "sandbox", "", sandboxUsage)
	fl.StringVar(&f.sandboxPrestart, "sandbox-prestart", "", sandboxPrestartUsage)
	addApprovalTimeoutFlag(cmd, &f.approvalTimeout)
	fl.IntVar(&f.maxSteps, "max-steps", 25, "most model calls in one turn")
	fl.Var(&f.maxOutput, "max-output-bytes", maxOutputUsage)
	fl.DurationVar(&f.modelTimeout, "model-timeout", 0, "how long a model call waits for the server's first byte, and then between two pieces of its answer, before it fails (default $"+model.TimeoutEnv+", else "+model.DefaultTimeout.String()+")")
}

// modelEnv returns the environment the model is resolved from, with
// --model-timeout standing for $CUSTOM_AGENT_MODEL_TIMEOUT when given, and
// refuses a timeout that is not a positive duration.
// turnModel is the model run and chat talk to: --model, else the
// configuration files' model, else $CUSTOM_AGENT_MODEL, with the provider
// settings of the environment and the files.
func turnModel(cmd *cobra.Command, f *runFlags) (model.Gateway, error) {
	conf, err := loadRunConfig(cmd, f)
	if err != nil {
		return nil, err
	}
	getenv, err := modelEnv(f.modelTimeout, app.ConfigEnv(conf, os.Getenv))
	if err != nil {
		return nil, err
	}
	return app.Model(conf.Model, getenv)
}

func modelEnv(timeout time.Duration, getenv func(string) string) (func(string) string, error) {
	if timeout < 0 {
		return nil, errors.New("--model-timeout must be positive")
	}
	if timeout == 0 {
		if _, err := model.TimeoutFromEnv(getenv); err != nil {
			return nil, err
		}
		return getenv, nil
	}
	return func(k string) string {
		if k == model.TimeoutEnv {
			return timeout.String()
		}
		return getenv(k)
	}, nil
}

// readPrompt returns the prompt: the argument, stdin for "-", a file for
// "@FILE" or --prompt-file.
func readPrompt(cmd *cobra.Command, file string, args []string) (string, error) {
	var src string
	switch {
	case file != "" && len(args) > 0:
		return "", errors.New("give the prompt either as an argument or with --prompt-file, not both")
	case file != "":
		src = file
	case len(args) == 0:
		return "", errors.New("no prompt: give it as an argument, \"-\" to read it from stdin, or @FILE / --prompt-file FILE")
	case args[0] == "-":
		src = "-"
	case strings.HasPrefix(args[0], "@") && len(args[0]) > 1:
		src = args[0][1:]
	default:
		src = ""
	}
	prompt := ""
	switch src {
	case "":
		prompt = args[0]
	case "-":
		b, err := io.ReadAll(cmd.InOrStdin())
		if err != nil {
			return "", fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		prompt = string(b)
	default:
		b, err := os.ReadFile(src)
		if err != nil {
			return "", fmt.Errorf("reading the prompt: %w", err)
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return "", errors.New("the prompt is empty")
	}
	return prompt, nil
}

// runTurn runs one turn with the given model and approval UI.
func runTurn(cmd *cobra.Command, g *globalFlags, f *runFlags, m model.Gateway, prompt string, newUI func(*approval.Broker, context.CancelFunc) approvalUI) (string, error) {
	ctx := cmd.Context()
	conf, err := loadRunConfig(cmd, f)
	if err != nil {
		return "", err
	}
	includes, err := turnIncludes(f.includes, prompt, conf)
	if err != nil {
		return "", err
	}
	r, err := openRunner(cmd, g, f, m)
	if err != nil {
		return "", err
	}
	defer r.close()
	if err := r.start(ctx, f.sessionID); err != nil {
		return "", err
	}
	last, err := r.turn(ctx, prompt, turnOptions{includes: includes, newUI: newUI, out: cmd.OutOrStdout(), json: f.json})
	if err != nil {
		return r.s.ID(), err
	}
	errOut := cmd.ErrOrStderr()
	fmt.Fprint(errOut, fitLine(fmt.Sprintf("session %s (custom-agent log %s)", r.s.ID(), r.s.ID()), columns(errOut), "  "))
	switch last.StopReason {
	case event.StopFinal:
		return r.s.ID(), nil
	case event.StopCancelled:
		return r.s.ID(), &exitError{code: 130, msg: "turn cancelled"}
	default:
		msg := "turn ended: " + last.StopReason + ": " + last.Error
		if fo, ok := cmd.OutOrStdout().(*os.File); ok && !f.json && term.IsTerminal(int(fo.Fd())) {
			msg = "" // the transcript on the same screen has just said it
		}
		return r.s.ID(), &exitError{code: 1, msg: msg}
	}
}

// turnIncludes returns the MCP resources a person included with the turn:
// each --include, then each @server:uri of the prompt naming a configured
// server. An --include of a server that is not configured is an error.
func turnIncludes(refs []string, prompt string, conf *config.Config) ([]session.Include, error) {
	names := slices.Sorted(maps.Keys(conf.MCPServers))
	var incs []mcp.Include
	for _, ref := range refs {
		i, err := mcp.ParseInclude(ref)
		if err != nil {
			return nil, fmt.Errorf("--include: %w", err)
		}
		if !slices.Contains(names, i.Server) {
			return nil, fmt.Errorf("--include %s: no MCP server %q is configured (mcpServers: %s; custom-agent config show)", ref, i.Server, strings.Join(names, ", "))
		}
		incs = append(incs, i)
	}
	inPrompt, err := mcp.PromptIncludes(prompt, names)
	if err != nil {
		return nil, err
	}
	var out []session.Include
	for _, i := range append(incs, inPrompt...) {
		args, err := i.Args()
		if err != nil {
			return nil, err
		}
		out = append(out, session.Include{Ref: i.Ref(), Tool: i.Tool(), Args: args})
	}
	return out, nil
}

func systemPrompt(cwd string) string {
	return "You are a coding agent working in " + cwd + ". Use the tools to read, search, edit and run things in this repository. " +
		"Every tool call is checked by a permission engine; a denied call returns the reason: do not try to get around it, " +
		"explain what you needed instead. " + contextbuild.OutputNote + " Keep answers short."
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
