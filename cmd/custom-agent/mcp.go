package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/mcp"
)

func newMCPCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List the MCP servers of the configuration and their tools",
		Long: `MCP servers come from the mcpServers key of the configuration files
(custom-agent config show; docs/mcp.md). Each runs for a session, as a
subprocess with a scrubbed environment (stdio) or at its URL (http); its
tools are called mcp__<server>__<tool> and pass the permission engine like
any other tool.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newMCPListCmd(g))
	return cmd
}

type mcpToolJSON struct {
	Server      string   `json:"server"`
	Name        string   `json:"name"`
	Tool        string   `json:"tool"`
	Risk        string   `json:"risk"`
	PathArgs    []string `json:"pathArgs,omitempty"`
	URLArg      string   `json:"urlArg,omitempty"`
	Hash        string   `json:"hash"`
	Pinned      string   `json:"pinned,omitempty"`
	Changed     bool     `json:"changed,omitempty"`
	Description string   `json:"description,omitempty"`
}

func newMCPListCmd(g *globalFlags) *cobra.Command {
	var cwd string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Start the configured MCP servers, list their tools with their risk, and stop them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := app.Cwd(cwd)
			if err != nil {
				return err
			}
			f := &runFlags{cwd: dir}
			conf, err := loadRunConfig(cmd, f)
			if err != nil {
				return err
			}
			data, err := g.resolveDataDir()
			if err != nil {
				return err
			}
			pins, err := mcp.OpenPins(filepath.Join(data, mcp.PinsFile))
			if err != nil {
				return err
			}
			m, errs := mcp.Start(cmd.Context(), conf.MCPServers, mcp.Options{LogDir: filepath.Join(data, "mcp"), Pins: pins, Getenv: os.Getenv, Cwd: dir})
			defer m.Close()
			for _, err := range errs {
				fmt.Fprintln(cmd.ErrOrStderr(), "custom-agent: "+err.Error())
			}
			var rows []mcpToolJSON
			for _, t := range m.Tools() {
				info := t.Info()
				pinned, _ := pins.Get(info.Name)
				rows = append(rows, mcpToolJSON{Server: t.Server().Name, Name: info.Name, Tool: t.Definition().Name, Risk: info.Risk.String(),
					PathArgs: info.PathArgs, URLArg: info.URLArg, Hash: t.Hash(), Pinned: pinned, Changed: info.Changed != nil, Description: t.Definition().Description})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if rows == nil {
					rows = []mcpToolJSON{}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			if len(conf.MCPServers) == 0 {
				fmt.Fprintln(out, "no MCP servers are configured (mcpServers in .custom-agent/config.json or $XDG_CONFIG_HOME/custom-agent/config.json)")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tRISK\tJUDGED AS PATHS\tSTATE")
			for _, r := range rows {
				state := "not yet approved"
				switch {
				case r.Changed:
					state = "definition changed since approved"
				case r.Pinned != "":
					state = "pinned"
				}
				paths := "-"
				if len(r.PathArgs) > 0 {
					paths = fmt.Sprint(r.PathArgs)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Risk, paths, state)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "working directory whose configuration is read (default the current directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tools as a JSON list")
	return cmd
}
