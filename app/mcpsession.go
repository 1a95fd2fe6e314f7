package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/mcp"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/tool"
	"github.com/custom-agent/custom-agent/tools"
)

// StartSessionMCP starts MCP servers for one session of a process that
// serves several (acp): their tools go into a router of that session's own,
// with the built-in tools, not into the runtime's shared one. Tool
// definitions are pinned in the data directory and the servers log there,
// as StartMCP does. A server that does not start is reported in the errors
// (which server, where its log is) and left out. Close the manager when
// the session ends.
func (r *Runtime) StartSessionMCP(ctx context.Context, servers map[string]config.Server, cwd string, getenv func(string) string) (*tool.Router, *mcp.Manager, []error) {
	router := tools.NewRouter()
	if len(servers) == 0 {
		return router, &mcp.Manager{}, nil
	}
	pins, err := mcp.OpenPins(filepath.Join(r.DataDir, mcp.PinsFile))
	if err != nil {
		return router, &mcp.Manager{}, []error{fmt.Errorf("MCP tool pins: %w; no MCP server is started", err)}
	}
	m, errs := mcp.Start(ctx, servers, mcp.Options{LogDir: filepath.Join(r.DataDir, "mcp"), Pins: pins, Getenv: getenv, Cwd: cwd})
	for _, t := range m.Tools() {
		if err := registerIn(router, t); err != nil {
			errs = append(errs, err)
		}
	}
	return router, m, errs
}

// registerIn adds one MCP tool to router, reporting a tool the router
// refuses (a schema it cannot check: the server is not ours) instead of
// stopping; a panic while reading the schema is reported too.
func registerIn(router *tool.Router, t *mcp.Tool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("MCP tool %s left out: %v", t.Info().Name, p)
		}
	}()
	if err := router.Add(t); err != nil {
		return fmt.Errorf("MCP tool %s left out: %w", t.Info().Name, err)
	}
	return nil
}

// SessionTools builds the tools of one session of a process that serves
// several (acp): the built-in tools, the MCP servers named (StartSessionMCP)
// and use_skill for the skills of cwd's project and of the user's
// configuration directory (Skills). Servers that do not start and skills
// left out are reported in the errors, for the person to be told; neither
// stops the session.
func (r *Runtime) SessionTools(ctx context.Context, servers map[string]config.Server, cwd string, getenv func(string) string) (*tool.Router, *mcp.Manager, []error) {
	router, m, errs := r.StartSessionMCP(ctx, servers, cwd, getenv)
	configHome, err := policy.ConfigHome(getenv)
	if err != nil {
		return router, m, append(errs, fmt.Errorf("skills are not offered: %w", err))
	}
	_, problems := Skills(router, cwd, configHome)
	for _, p := range problems {
		errs = append(errs, fmt.Errorf("skill: %w", p))
	}
	return router, m, errs
}
