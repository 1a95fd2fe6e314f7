package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// globalFlags holds the flags every command accepts.
type globalFlags struct {
	dataDir string
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "custom-agent",
		Short: "An agent runtime where every tool call passes one permission gate",
		Long: `custom-agent runs coding agents on your repository. Every tool call a model
asks for is decided allow / ask / deny by one PermissionEngine, and the decision,
with its reason, is written to a durable, tamper-evident event log before
anything runs.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.dataDir, "data-dir", "",
		"directory for the event log and artifacts (default $CUSTOM_AGENT_DATA_DIR, else $XDG_DATA_HOME/custom-agent, else ~/.local/share/custom-agent)")
	root.AddCommand(
		newVersionCmd(),
		newCheckCmd(g),
		newSessionsCmd(g),
		newLogCmd(g),
		newAuditCmd(g),
		newArtifactCmd(g),
		newRunCmd(g),
		newDemoCmd(g),
		newPolicyCmd(g),
		newTrustCmd(g),
		newUntrustCmd(g),
	)
	return root
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

// version reports the module version stamped by the go command, or the VCS
// revision for a build from a checkout.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "devel-" + rev + dirty
	}
	if v == "" {
		return "(devel)"
	}
	return v
}
