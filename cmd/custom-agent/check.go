package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app/checkcmd"
)

// newCheckCmd is the check command of app/checkcmd, the one
// custom-agent-gate offers too (the same help, flags and output), with its
// exit statuses carried as exitError.
func newCheckCmd(g *globalFlags) *cobra.Command {
	var o checkcmd.Options
	cmd := &cobra.Command{
		Use:     "check",
		Short:   checkcmd.Short,
		Long:    checkcmd.Long,
		Example: checkcmd.Example,
		Args:    cobra.ArbitraryArgs, // checkcmd.Exec refuses them, with the gate's message
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = g.dataDir
			err := checkcmd.Exec(o, args, cmd.Flags().Changed, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if ex, ok := errors.AsType[*checkcmd.ExitError](err); ok {
				return &exitError{code: ex.Code, msg: ex.Msg, err: err}
			}
			return err
		},
	}
	addFlags(cmd.Flags(), checkcmd.Flags(&o))
	return cmd
}
