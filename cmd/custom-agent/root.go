package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/support/buildinfo"
)

// globalFlags holds the flags every command accepts.
type globalFlags struct {
	dataDir string
	store   string
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "custom-agent",
		Short: "An agent runtime where every tool call passes one permission gate",
		Long: `custom-agent runs coding agents on your repository. Every tool call a model
asks for is decided allow / ask / deny by one PermissionEngine, and the decision,
with its reason, is written to a durable, tamper-evident event log before
anything runs.

Run with no command at a terminal, it opens a conversation in the current
directory (custom-agent chat).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.dataDir, "data-dir", "",
		"directory for the event log and artifacts (default $CUSTOM_AGENT_DATA_DIR, else $XDG_DATA_HOME/custom-agent, else ~/.local/share/custom-agent)")
	root.PersistentFlags().StringVar(&g.store, "store", "",
		`event log: "sqlite" (the file in the data directory) or postgres://USER@HOST:PORT/DATABASE, a PostgreSQL database shared by several hosts (default $CUSTOM_AGENT_STORE, else "store" in your own config.json, else sqlite)`)
	root.AddCommand(
		newVersionCmd(),
		newCheckCmd(g),
		newHookCmd(g),
		newSessionsCmd(g),
		newLogCmd(g),
		newStatsCmd(g),
		newAuditCmd(g),
		newReplayCmd(g),
		newArtifactCmd(g),
		newRunCmd(g),
		newDemoCmd(g),
		newACPCmd(g),
		newPolicyCmd(g),
		newTrustCmd(g),
		newUntrustCmd(g),
		newConfigCmd(g),
		newMCPCmd(g),
		newChatCmd(g),
		newSandboxCmd(g),
		newServeCmd(g),
	)
	root.Version = version()
	root.SetVersionTemplate("custom-agent {{.Version}}\n")
	root.AddCommand(newCompletionCmd(root))
	root.SetHelpCommand(newHelpCmd(root))
	refuseUnknownSubcommands(root)
	openChatAtTerminal(root, g)
	return root
}

// openChatAtTerminal makes custom-agent with no command open chat when
// stdin is a terminal; elsewhere (a pipe, a script) it prints the help as
// before.
func openChatAtTerminal(root *cobra.Command, g *globalFlags) {
	help := root.RunE
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 || cmd.InOrStdin() != os.Stdin || !term.IsTerminal(int(os.Stdin.Fd())) {
			return help(cmd, args)
		}
		// A chat command of its own, so that its flags have their
		// defaults.
		chat := newChatCmd(g)
		chat.SetContext(cmd.Context())
		chat.SetIn(cmd.InOrStdin())
		chat.SetOut(cmd.OutOrStdout())
		chat.SetErr(cmd.ErrOrStderr())
		return chat.RunE(chat, nil)
	}
}

// refuseUnknownSubcommands makes every command group (a command with
// subcommands, the root included) fail on a word that names none of its
// subcommands, with a suggestion, instead of printing its help and exiting 0.
// With no word at all a group still prints its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs
		if c.SuggestionsMinimumDistance <= 0 {
			c.SuggestionsMinimumDistance = 2 // cobra's own default, which SuggestionsFor does not apply
		}
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownCommand(cmd, args[0])
		}
	}
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
}

// unknownCommand is the error for a word that names no subcommand of group.
func unknownCommand(group *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, group.CommandPath())
	if s := group.SuggestionsFor(word); len(s) > 0 {
		alts := strings.Join(s, " or ")
		if len(s) > 2 {
			alts = strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
		}
		return errors.New(msg + "; did you mean " + alts + "?")
	}
	return errors.New(msg + " (" + group.CommandPath() + " --help lists its commands)")
}

// newCompletionCmd replaces cobra's default completion command, which
// writes to the output it saw when it was made, so that it is a command
// group like the others from the start (refuseUnknownSubcommands).
func newCompletionCmd(root *cobra.Command) *cobra.Command {
	var noDesc bool
	cmd := &cobra.Command{
		Use:   "completion",
		Short: "Generate the autocompletion script for the specified shell",
		Long: `Generate the autocompletion script of custom-agent for bash, zsh, fish or
powershell, e.g. source <(custom-agent completion bash).`,
	}
	cmd.PersistentFlags().BoolVar(&noDesc, "no-descriptions", false, "disable completion descriptions")
	gen := map[string]func(io.Writer) error{
		"bash": func(w io.Writer) error { return root.GenBashCompletionV2(w, !noDesc) },
		"zsh": func(w io.Writer) error {
			if noDesc {
				return root.GenZshCompletionNoDesc(w)
			}
			return root.GenZshCompletion(w)
		},
		"fish": func(w io.Writer) error { return root.GenFishCompletion(w, !noDesc) },
		"powershell": func(w io.Writer) error {
			if noDesc {
				return root.GenPowerShellCompletion(w)
			}
			return root.GenPowerShellCompletionWithDesc(w)
		},
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		g := gen[shell]
		cmd.AddCommand(&cobra.Command{
			Use:               shell,
			Short:             "Generate the autocompletion script for " + shell,
			Args:              cobra.NoArgs,
			ValidArgsFunction: cobra.NoFileCompletions,
			RunE:              func(cmd *cobra.Command, _ []string) error { return g(cmd.OutOrStdout()) },
		})
	}
	return cmd
}

// newHelpCmd is cobra's help command, except that a help topic naming no
// command fails like the command would (cobra's prints the root's help and
// exits 0).
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "help prints the help of any command, e.g. " + root.Name() + " help policy add.",
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			target, _, err := root.Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, sub := range target.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, sub.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil {
				return err
			}
			if len(rest) > 0 && target.HasSubCommands() {
				return unknownCommand(target, rest[0])
			}
			target.InitDefaultHelpFlag()
			target.InitDefaultVersionFlag()
			return target.Help()
		},
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of custom-agent",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "custom-agent", version())
			return err
		},
	}
}

// version reports the version of this binary (buildinfo.Version).
func version() string { return buildinfo.Version() }
