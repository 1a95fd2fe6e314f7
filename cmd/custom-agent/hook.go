package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app/hookcmd"
	"github.com/custom-agent/custom-agent/hook"
)

// newHookCmd is the hook command of app/hookcmd, the one
// custom-agent-gate offers too (the same help, flags and answers), with
// its exit statuses carried as exitError, and install and uninstall,
// which edit the agents' settings. The group's own answer (exit 2 for no
// or an unknown agent) is the gate's; here the root's handling of groups
// applies (help alone, an unknown command with a suggestion, exit 2).
func newHookCmd(_ *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "hook", Short: hookcmd.Short, Long: hookcmd.Long}
	for _, a := range hook.Agents {
		cmd.AddCommand(newHookAgentCmd(a))
	}
	cmd.AddCommand(newHookInstallCmd(true), newHookInstallCmd(false))
	return cmd
}

func newHookAgentCmd(a hook.Agent) *cobra.Command {
	var o hookcmd.Options
	cmd := &cobra.Command{
		Use:   string(a),
		Short: hookcmd.AgentShort(a),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var dataDir string
			if f := cmd.Flag("data-dir"); f != nil {
				dataDir = f.Value.String()
			}
			err := hookcmd.Exec(cmd.Context(), a, o, dataDir, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if ex, ok := errors.AsType[*hookcmd.ExitError](err); ok {
				return &exitError{code: ex.Code, msg: ex.Msg, err: err}
			}
			return err
		},
	}
	addFlags(cmd.Flags(), hookcmd.Flags(a, &o))
	return cmd
}
