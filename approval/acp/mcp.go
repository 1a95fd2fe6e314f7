package acp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/tool"
)

// SessionTools is what Config.MCP returns for one session: the tools the
// session's model is offered and how to stop the servers behind them.
type SessionTools struct {
	// Router holds the built-in tools and the session's MCP tools
	// (mcp__<server>__<tool>); nil keeps Session.Router.
	Router *tool.Router
	// Failed are the servers that did not start, each error naming the
	// server and its log. The session goes on without their tools, and the
	// person is told (session/update).
	Failed []error
	// Close stops the session's servers and every process they started;
	// nil when nothing was started.
	Close func() error
}

// Servers converts the mcpServers of session/new or session/load into the
// MCP layer's server configuration: stdio (command, args, env) and HTTP
// (url, headers). Names become part of tool names (mcp__<name>__<tool>),
// so a character other than a letter, a digit, '-' or '_' becomes '_'. An
// entry that cannot be used (SSE, ACP transport, no command, no url, a
// name given twice) is left out and reported in the errors, by name; the
// session goes on without it.
func Servers(list []acpsdk.McpServer) (map[string]config.Server, []error) {
	out := map[string]config.Server{}
	var errs []error
	add := func(i int, name string, s config.Server) {
		n := serverName(name, i)
		if _, dup := out[n]; dup {
			errs = append(errs, fmt.Errorf("MCP server %q: a second server named %q is left out; give each server its own name", name, n))
			return
		}
		out[n] = s
	}
	for i, m := range list {
		switch {
		case m.Stdio != nil:
			s := m.Stdio
			if strings.TrimSpace(s.Command) == "" {
				errs = append(errs, fmt.Errorf("MCP server %q: no command; it is left out", s.Name))
				continue
			}
			c := config.Server{Type: "stdio", Command: s.Command, Args: s.Args}
			if len(s.Env) > 0 {
				c.Env = map[string]string{}
				for _, e := range s.Env {
					c.Env[e.Name] = e.Value
				}
			}
			add(i, s.Name, c)
		case m.Http != nil:
			h := m.Http
			if h.Url == "" {
				errs = append(errs, fmt.Errorf("MCP server %q: no url; it is left out", h.Name))
				continue
			}
			c := config.Server{Type: "http", URL: h.Url}
			if len(h.Headers) > 0 {
				c.Headers = map[string]string{}
				for _, x := range h.Headers {
					c.Headers[x.Name] = x.Value
				}
			}
			add(i, h.Name, c)
		case m.Sse != nil:
			errs = append(errs, fmt.Errorf("MCP server %q: the SSE transport is not supported (mcpCapabilities.sse is false); use stdio or http; it is left out", m.Sse.Name))
		case m.Acp != nil:
			errs = append(errs, fmt.Errorf("MCP server %q: the ACP transport is not supported; use stdio or http; it is left out", m.Acp.Name))
		default:
			errs = append(errs, fmt.Errorf("MCP server %d: no transport given; it is left out", i))
		}
	}
	return out, errs
}

// serverName makes an ACP server name (human-readable, any characters)
// usable in tool names: letters, digits, '-' and '_', no "__".
func serverName(name string, i int) string {
	var b strings.Builder
	for _, c := range name {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	n := b.String()
	for strings.Contains(n, "__") {
		n = strings.ReplaceAll(n, "__", "_")
	}
	n = strings.Trim(n, "_")
	if n == "" || config.CheckServerName(n) != nil {
		n = "server" + strconv.Itoa(i+1)
	}
	return n
}

// startMCP builds a session's tools through Config.MCP: the servers of the
// editor and of the configuration files (the editor's win on a name both
// use) and whatever else the hook adds (the directory's skills). It returns the notices for the person: the settings' warnings and
// the servers that were left out. Without the hook a session whose editor
// names servers is refused.
func (a *Agent) startMCP(ctx context.Context, u *setup, list []acpsdk.McpServer) (SessionTools, []string, error) {
	notices := slices.Clone(u.settings.Warnings)
	servers, errs := Servers(list)
	for _, err := range errs {
		notices = append(notices, err.Error())
	}
	if len(servers) > 0 && a.cfg.MCP == nil {
		return SessionTools{}, nil, reqError(codeInvalidParams,
			"this custom-agent does not connect MCP servers (%d given): remove them from the session's mcpServers; the built-in tools remain available", len(list))
	}
	for _, name := range slices.Sorted(maps.Keys(u.settings.Servers)) {
		s := u.settings.Servers[name]
		if _, both := servers[name]; both {
			notices = append(notices, fmt.Sprintf("MCP server %q is named by the editor and by the configuration files: the editor's is used", name))
			continue
		}
		servers[name] = s
	}
	if a.cfg.MCP == nil {
		return SessionTools{}, notices, nil
	}
	// The hook runs for every session, with or without servers: it also
	// gives the session's router the skills of its directory.
	st, err := a.cfg.MCP(ctx, u.dir, servers)
	if err != nil {
		return SessionTools{}, nil, reqError(codeInternal, "MCP servers: %v", err)
	}
	for _, err := range st.Failed {
		notices = append(notices, err.Error())
	}
	return st, notices, nil
}
