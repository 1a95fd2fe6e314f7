package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/config"
)

func newConfigCmd(_ *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the configuration and where each value came from",
		Long: `Configuration lives in one JSON file per level, beside the policy file
(docs/reference/config.md):
  user     $XDG_CONFIG_HOME/custom-agent/config.json (default ~/.config/custom-agent/)
  project  .custom-agent/config.json in the project directory
Flags beat the environment, the environment beats the project file, the
project file beats the user file. Until you trust a project (custom-agent
trust), its mcpServers, providers, model and a more permissive mode are
ignored, with a warning.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newConfigShowCmd())
	return cmd
}

func newConfigShowCmd() *cobra.Command {
	var cwd string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the merged configuration and the source of every value",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := app.Cwd(cwd)
			if err != nil {
				return err
			}
			files, err := app.FindConfig(dir, "", os.Getenv)
			if err != nil {
				return err
			}
			c, err := app.LoadConfig(dir, "", os.Getenv, config.Flags{})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeConfigJSON(out, c, files)
			}
			for _, w := range c.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w)
			}
			fmt.Fprintf(out, "user file:    %s%s\nproject file: %s%s\n", files.User, missing(files.User), files.Project, missing(files.Project))
			keys := slices.Sorted(maps.Keys(c.Sources))
			if len(keys) == 0 {
				fmt.Fprintln(out, "nothing is set: every value is its default")
				return nil
			}
			for _, k := range keys {
				v, _ := json.Marshal(configValue(c, k))
				fmt.Fprintf(out, "%s = %s\t(%s)\n", k, v, c.Sources[k])
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "working directory whose project configuration is read (default the current directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object: the merged values, their sources, the files and warnings")
	return cmd
}

func missing(path string) string {
	if _, err := os.Stat(path); err != nil {
		return " (none)"
	}
	return ""
}

// configValue is the value of one key of Sources.
func configValue(c *config.Config, key string) any {
	switch {
	case key == "model":
		return c.Model
	case key == "mode":
		return c.Mode
	case key == "approvalTimeout":
		return c.ApprovalTimeout.String()
	case key == "maxOutputBytes":
		return c.MaxOutputBytes
	case key == "builtinRules":
		return c.BuiltinRules
	case key == "sandbox":
		return c.Sandbox
	case key == "store":
		return config.RedactStore(c.Store)
	case strings.HasPrefix(key, "providers."):
		return c.Providers[strings.TrimPrefix(key, "providers.")]
	case strings.HasPrefix(key, "mcpServers."):
		return c.MCPServers[strings.TrimPrefix(key, "mcpServers.")]
	}
	return nil
}

func writeConfigJSON(w interface{ Write([]byte) (int, error) }, c *config.Config, files app.ConfigFiles) error {
	type out struct {
		Values   map[string]any           `json:"values"`
		Sources  map[string]config.Source `json:"sources"`
		Files    map[string]string        `json:"files"`
		Warnings []string                 `json:"warnings"`
	}
	o := out{Values: map[string]any{}, Sources: c.Sources, Warnings: c.Warnings,
		Files: map[string]string{"user": files.User, "project": files.Project}}
	if o.Warnings == nil {
		o.Warnings = []string{}
	}
	for k := range c.Sources {
		o.Values[k] = configValue(c, k)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(o)
}

// configFlags returns the flags of run (and demo, check) that stand for
// configuration keys, only those given.
func configFlags(cmd *cobra.Command, f *runFlags) config.Flags {
	fl := flagsGiven(cmd, f.model, f.mode, f.approvalTimeout, f.maxOutput)
	if x := cmd.Flags().Lookup("sandbox"); x != nil && x.Changed {
		fl.Sandbox = f.sandbox
	}
	return fl
}

// flagsGiven returns the configuration keys a command's flags set: only the
// flags given, so that the files apply otherwise. An --approval-timeout of
// 0 is passed on as -1, which Merge refuses (it must be positive).
func flagsGiven(cmd *cobra.Command, model, mode string, approvalTimeout time.Duration, maxOutput sizeFlag) config.Flags {
	var fl config.Flags
	changed := func(name string) bool {
		x := cmd.Flags().Lookup(name)
		return x != nil && x.Changed
	}
	if changed("model") {
		fl.Model = model
	}
	if changed("mode") {
		fl.Mode = mode
	}
	if changed(approvalTimeoutFlag) {
		fl.ApprovalTimeout = approvalTimeout
		if fl.ApprovalTimeout == 0 {
			fl.ApprovalTimeout = -1
		}
	}
	fl.MaxOutputBytes = string(maxOutput)
	if x := cmd.Flags().Lookup("no-builtin-rules"); x != nil && x.Changed && x.Value.String() == "true" {
		fl.NoBuiltinRules = true
	}
	return fl
}
