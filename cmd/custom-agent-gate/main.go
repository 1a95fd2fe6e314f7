// Command custom-agent-gate is the permission gate of custom-agent alone,
// for hooks that ask it about every tool call of another agent: `check`
// (the same command, flags, output and exit statuses as custom-agent
// check, from internal/checkcmd), `hook claude-code|gemini-cli` (those
// agents' hook formats, from internal/hookcmd) and `version`. It links no model SDK, no
// MCP or ACP SDK and no event store, so it starts in a few milliseconds;
// deps_test.go keeps it so.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/internal/buildinfo"
	"github.com/custom-agent/custom-agent/internal/checkcmd"
	"github.com/custom-agent/custom-agent/internal/hookcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit status: what
// custom-agent would exit with for the same check.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if ex, ok := errors.AsType[*checkcmd.ExitError](err); ok {
		if ex.Msg != "" {
			fmt.Fprintln(stderr, ex.Msg)
		}
		return ex.Code
	}
	fmt.Fprintln(stderr, "custom-agent:", err)
	return 2
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "custom-agent-gate",
		Short: "The permission gate of custom-agent alone, for hooks",
		Long: `custom-agent-gate decides tool calls as custom-agent's PermissionEngine does,
without the rest of custom-agent: no model, no event log, no MCP servers. It
starts in a few milliseconds, for a hook called before every tool call of
another agent.

  custom-agent-gate check …   is custom-agent check …: the same flags, the same
                              output byte for byte, the same exit statuses
  custom-agent-gate hook claude-code|gemini-cli
                              answers one Claude Code or Gemini CLI hook
                              event on standard input in that agent's format,
                              and records the decision (see docs/hooks.md)
  custom-agent-gate version   prints its version`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return fmt.Errorf("unknown command %q for %q (its commands are check, hook and version; the others are custom-agent's)", args[0], cmd.CommandPath())
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			DisableDefaultCmd: true,
		},
	}
	// custom-agent's global flag, accepted so that a command line written
	// for custom-agent check runs here unchanged; check keeps no data.
	var dataDir string
	root.PersistentFlags().StringVar(&dataDir, "data-dir", "",
		"where hook records its decisions (the hook journal); check reads and writes no data directory")
	root.AddCommand(checkcmd.New(), hookcmd.New(), newVersionCmd())
	root.Version = buildinfo.Version()
	root.SetVersionTemplate("custom-agent-gate {{.Version}}\n")
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of custom-agent-gate",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "custom-agent-gate", buildinfo.Version())
			return err
		},
	}
}
