package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/mcp"
)

// StartMCP starts the configured MCP servers for a session in cwd and
// registers their tools in the runtime's router. A server that does not
// start is reported in the errors (which server, where its log is) and
// left out; the session goes on. Close the manager when the session ends.
func (r *Runtime) StartMCP(ctx context.Context, c *config.Config, cwd string, getenv func(string) string) (*mcp.Manager, []error) {
	if len(c.MCPServers) == 0 {
		return &mcp.Manager{}, nil
	}
	pins, err := mcp.OpenPins(filepath.Join(r.DataDir, mcp.PinsFile))
	if err != nil {
		return &mcp.Manager{}, []error{fmt.Errorf("MCP tool pins: %w; no MCP server is started", err)}
	}
	m, errs := mcp.Start(ctx, c.MCPServers, mcp.Options{LogDir: filepath.Join(r.DataDir, "mcp"), Pins: pins, Getenv: getenv, Cwd: cwd})
	for _, t := range m.Tools() {
		if err := register(r, t); err != nil {
			errs = append(errs, err)
		}
	}
	return m, errs
}

// register adds one MCP tool, reporting a tool the router refuses
// (a schema it cannot check: the server is not ours) instead of stopping;
// a panic while reading the schema is reported too.
func register(r *Runtime, t *mcp.Tool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("MCP tool %s left out: %v", t.Info().Name, p)
		}
	}()
	if err := r.Router.Add(t); err != nil {
		return fmt.Errorf("MCP tool %s left out: %w", t.Info().Name, err)
	}
	return nil
}
