package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/policy"
)

func newTrustCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a project's policy file, so that its allow rules count",
		Long: `trust records the project of DIR (default the current directory) in
$XDG_CONFIG_HOME/custom-agent/trusted.json, by its canonical path. The project
is the directory holding the nearest .custom-agent/policy.json up to the
repository root, or the repository root. Until a project is trusted its allow
rules are ignored and its ask rules count as deny; its deny rules always count.

Read the project's policy first: custom-agent policy list --cwd DIR.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ch, dir, err := trustArgs(args)
			if err != nil {
				return err
			}
			p, err := policy.Trust(ch, dir)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "trusted %s\n", p.Root)
			return err
		},
	}
}

func newUntrustCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "untrust [DIR]",
		Short: "Stop trusting a project's policy file",
		Long: `untrust removes the project of DIR (default the current directory), and every
single rule of it you trusted by adding it, from the trusted projects.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ch, dir, err := trustArgs(args)
			if err != nil {
				return err
			}
			p, removed, rules, err := policy.Untrust(ch, dir)
			if err != nil {
				return err
			}
			if !removed {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s was not trusted\n", p.Root)
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "untrusted %s\n", p.Root)
			for _, id := range rules {
				fmt.Fprintf(out, "  the rule %s, which you trusted on its own (policy add or \"always allow in this project\"), no longer counts\n", id)
			}
			if len(rules) > 0 {
				_, err = fmt.Fprintf(out, "  to trust one again: custom-agent policy add --level project … with the same rule, or custom-agent trust %s\n", p.Root)
			}
			return err
		},
	}
}

func trustArgs(args []string) (configHome, dir string, err error) {
	if configHome, err = policy.ConfigHome(os.Getenv); err != nil {
		return "", "", err
	}
	if len(args) == 1 {
		dir = args[0]
	} else if dir, err = os.Getwd(); err != nil {
		return "", "", err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", "", err
	}
	if !st.IsDir() {
		return "", "", fmt.Errorf("%s is not a directory", dir)
	}
	return configHome, dir, nil
}
