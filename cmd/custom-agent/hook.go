package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/internal/hookcmd"
)

// newHookCmd is the hook command of internal/hookcmd, the one
// custom-agent-gate offers too, with its exit statuses carried as
// exitError, and install and uninstall, which edit the agents' settings.
func newHookCmd(_ *globalFlags) *cobra.Command {
	cmd := hookcmd.New()
	// The group's own answer (exit 2 for no or an unknown agent) is the
	// gate's; here the root's handling of groups applies (help alone, an
	// unknown command with a suggestion, exit 2).
	cmd.RunE, cmd.Args = nil, nil
	for _, sub := range cmd.Commands() {
		run := sub.RunE
		sub.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			if ex, ok := errors.AsType[*hookcmd.ExitError](err); ok {
				return &exitError{code: ex.Code, msg: ex.Msg, err: err}
			}
			return err
		}
	}
	cmd.AddCommand(newHookInstallCmd(true), newHookInstallCmd(false))
	return cmd
}
