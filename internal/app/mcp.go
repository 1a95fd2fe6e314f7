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

// register adds one MCP tool, reporting instead of panicking on a schema
// the router cannot compile (the server is not ours).
func register(r *Runtime, t *mcp.Tool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("MCP tool %s left out: %v", t.Info().Name, p)
		}
	}()
	r.Router.Register(t)
	return nil
}
