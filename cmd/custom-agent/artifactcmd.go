package main

import (
	"errors"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/artifact"
)

func newArtifactCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "artifact",
		Short: "Read the full outputs of tool calls",
	}
	cat := &cobra.Command{
		Use:   "cat DIGEST",
		Short: "Print an artifact (a tool call's whole output) by its digest",
		Long: `Print an artifact by the digest a tool.completed event names
(sha256:…). The artifact is checked against its digest first.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := artifact.ParseDigest(args[0]); err != nil {
				return err
			}
			dir, err := g.resolveDataDir()
			if err != nil {
				return err
			}
			s, err := artifact.Open(filepath.Join(dir, "artifacts"))
			if err != nil {
				return err
			}
			if err := s.Verify(args[0]); err != nil {
				if errors.Is(err, artifact.ErrNotFound) {
					return &exitError{code: 1, msg: err.Error() + " in " + s.Dir()}
				}
				return err
			}
			f, err := s.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(cmd.OutOrStdout(), f)
			return err
		},
	}
	cmd.AddCommand(cat)
	return cmd
}
