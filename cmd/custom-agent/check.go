package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/internal/checkcmd"
)

// newCheckCmd is the check command of internal/checkcmd, the one
// custom-agent-gate offers too, with its exit statuses carried as
// exitError.
func newCheckCmd(_ *globalFlags) *cobra.Command {
	cmd := checkcmd.New()
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		err := run(cmd, args)
		if ex, ok := errors.AsType[*checkcmd.ExitError](err); ok {
			return &exitError{code: ex.Code, msg: ex.Msg, err: err}
		}
		return err
	}
	return cmd
}
