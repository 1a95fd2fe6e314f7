package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/sandbox"
	"github.com/custom-agent/custom-agent/support/datadir"
)

// sandboxUsage is the help of --sandbox.
const sandboxUsage = "on (the default): allowed commands run in the sandbox (docs/sandbox.md); off: they run with every right you have, recorded in session.started (default $CUSTOM_AGENT_SANDBOX, else sandbox in your configuration file)"

// sandboxPrestartUsage is the help of --sandbox-prestart.
const sandboxPrestartUsage = "on (the default): keep one sandbox helper of each kind started ahead of the next call, which then starts in about half the time (docs/sandbox.md, Helpers started ahead); off: start each call's helper when it comes, with no idle helper (default $" + envSandboxPrestart + ", else on)"

// envSandboxPrestart is the environment's --sandbox-prestart.
const envSandboxPrestart = "CUSTOM_AGENT_SANDBOX_PRESTART"

// sandboxPrestart reads --sandbox-prestart (flag, "" when not given), else
// $CUSTOM_AGENT_SANDBOX_PRESTART, else on.
func sandboxPrestart(flag string, getenv func(string) string) (bool, error) {
	v, from := flag, "--sandbox-prestart"
	if v == "" {
		v, from = strings.TrimSpace(getenv(envSandboxPrestart)), envSandboxPrestart
	}
	switch v {
	case "", "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=%q: want on or off", from, v)
}

// sandboxGate returns the executor's sandbox for a session in the
// configuration conf, with the event log in dataDir.
func sandboxGate(conf *config.Config, home, configHome, dataDir string) *sandbox.Gate {
	if configHome == "" {
		configHome = os.Getenv("XDG_CONFIG_HOME")
	}
	return sandbox.NewGate(sandbox.Env{
		Home: home, ConfigHome: configHome, DataDir: dataDir,
		Caches: sandbox.DefaultCaches(home, os.Getenv), Path: os.Getenv("PATH"),
	}, conf != nil && conf.Sandbox == "off")
}

func newSandboxCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run a command in the sandbox, or see what this machine supports",
		Long: `Every allowed call that starts a process (shell, run_tests, get_diagnostics)
runs in the sandbox, under the narrowest profile its decision implies:

  read-only   reads anything but secrets; writes only a private /tmp; no network
  workspace   also writes the working directory (protected paths excepted) and
              the Go and pip build caches; the network only for a call judged
              network

Secrets (~/.ssh, ~/.aws, the project's .env files and keys, custom-agent's own
data …) are unreadable in every profile. docs/sandbox.md says more.`,
	}
	cmd.AddCommand(newSandboxRunCmd(g), newSandboxStatusCmd())
	return cmd
}

func newSandboxRunCmd(g *globalFlags) *cobra.Command {
	var profile, cwd string
	var network, showProfile bool
	cmd := &cobra.Command{
		Use:   "run [--profile read-only|workspace] [--network] [--cwd DIR] -- CMD [ARGS…]",
		Short: "Run a command in the sandbox and exit with its status",
		Long: `run runs CMD as the agent runs an allowed command: under a profile, with the
environment scrubbed of secrets, in DIR (default the current directory). It
exits with the command's status (128+N when a signal N ended it), or 125 when
the sandbox could not be set up. --print-profile prints the profile (JSON) to
stderr first.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind := sandbox.Kind(profile)
			if !kind.Valid() {
				return fmt.Errorf("unknown profile %q: want read-only or workspace", profile)
			}
			if cwd == "" {
				var err error
				if cwd, err = os.Getwd(); err != nil {
					return err
				}
			}
			abs, err := filepath.Abs(cwd)
			if err != nil {
				return err
			}
			if s := sandbox.Probe(); !s.Available() {
				return sandboxExit(125, fmt.Errorf("the sandbox is unavailable here: %s", s.Unavailable))
			}
			home, _ := os.UserHomeDir()
			data, _ := datadir.Resolve(g.dataDir, os.Getenv, os.UserHomeDir)
			env, _ := executor.ScrubEnv(os.Environ())
			pl := sandbox.NewPlanner(sandbox.Env{
				Home: home, ConfigHome: os.Getenv("XDG_CONFIG_HOME"), DataDir: data,
				Caches: sandbox.DefaultCaches(home, os.Getenv), Path: os.Getenv("PATH"),
			})
			p, err := pl.Plan(kind, network, abs)
			if err != nil {
				return sandboxExit(125, fmt.Errorf("planning the %s sandbox: %w", kind, err))
			}
			if showProfile {
				b, _ := json.MarshalIndent(struct {
					sandbox.Profile
					Digest string `json:"digest"`
				}{p, p.Digest()}, "", "  ")
				fmt.Fprintf(cmd.ErrOrStderr(), "%s\n", b)
			}
			path, err := exec.LookPath(args[0])
			if err != nil {
				return sandboxExit(127, fmt.Errorf("%s: %w", args[0], err))
			}
			if path, err = filepath.Abs(path); err != nil {
				return err
			}
			c := &exec.Cmd{Path: path, Args: args, Env: env, Dir: abs,
				Stdin: os.Stdin, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
			conf, err := sandbox.Confine(p, c)
			if err != nil {
				return sandboxExit(125, err)
			}
			runErr := c.Run()
			if err := conf.Done(); err != nil {
				if !errors.Is(err, sandbox.ErrProtectedCreated) {
					// The sandbox's own failure, or what the command
					// planted could not all be undone
					// (ErrProtectedKept): the call fails.
					return sandboxExit(125, err)
				}
				// The command ran; what it planted was undone.
				fmt.Fprintln(cmd.ErrOrStderr(), "custom-agent sandbox: "+err.Error())
			}
			var ee *exec.ExitError
			switch {
			case errors.As(runErr, &ee):
				return &exitError{code: ee.ExitCode()}
			case runErr != nil:
				return sandboxExit(125, runErr)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&profile, "profile", string(sandbox.ReadOnly), "the profile: read-only or workspace")
	cmd.Flags().BoolVar(&network, "network", false, "let the command reach the network")
	cmd.Flags().StringVar(&cwd, "cwd", "", "the directory to run in (default the current directory)")
	cmd.Flags().BoolVar(&showProfile, "print-profile", false, "print the profile as JSON to stderr before running")
	return cmd
}

func newSandboxStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [--json]",
		Short: "Print what this machine supports and what each profile enforces here",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s := sandbox.Probe()
			if asJSON {
				b, err := json.MarshalIndent(s, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
				return err
			}
			w := cmd.OutOrStdout()
			yes := func(b bool) string {
				if b {
					return "yes"
				}
				return "no"
			}
			abi := "none"
			if s.LandlockABI > 0 {
				abi = fmt.Sprintf("ABI %d", s.LandlockABI)
			}
			fmt.Fprintf(w, "landlock         %s\nuser namespaces  %s\nseccomp          %s\n", abi, yes(s.UserNamespaces), yes(s.Seccomp))
			if !s.Available() {
				fmt.Fprintf(w, "\nThe sandbox is unavailable here: %s.\nAllowed calls that start a process are asked instead, never run unconfined.\n", s.Unavailable)
				return nil
			}
			lines := []string{
				"",
				"read-only   reads anything but secrets (hidden behind empty masks of mode 000);",
				"            writes only a private /tmp; no network (an empty network namespace)",
				"workspace   as read-only, and writes the working directory except protected",
				"            paths (.git/hooks and .git/config at every depth, .custom-agent,",
				"            editor and agent configuration) and the Go and pip build caches;",
				"            the network only for a call judged network",
				"both        a PID namespace of their own (no other process to signal, trace",
				"            or read), no controlling terminal, no host sockets, no capability",
			}
			if s.LandlockABI < 4 {
				lines = append(lines, "            (Landlock below ABI 4: TCP is confined by the network namespace alone)")
			}
			_, err := fmt.Fprintln(w, strings.Join(lines, "\n"))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the support as JSON")
	return cmd
}

// sandboxExit is an exit with status code and err's message.
func sandboxExit(code int, err error) error {
	return &exitError{code: code, msg: "custom-agent sandbox: " + err.Error(), err: err}
}
