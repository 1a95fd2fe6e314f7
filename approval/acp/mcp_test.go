package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/mcp/mcptest"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/approval/acp"
	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/event"
)

// startedMCP is Config.MCP as cmd/custom-agent wires it (a router of the
// session's own, pins and logs in the data directory), recording the
// process groups of the servers it started.
type startedMCP struct {
	mu   sync.Mutex
	pids []int
	home string
}

func (s *startedMCP) hook(rt *app.Runtime) func(context.Context, string, map[string]config.Server) (acp.SessionTools, error) {
	getenv := func(k string) string {
		if k == "HOME" {
			return s.home
		}
		return os.Getenv(k)
	}
	return func(ctx context.Context, cwd string, servers map[string]config.Server) (acp.SessionTools, error) {
		router, m, errs := rt.StartSessionMCP(ctx, servers, cwd, getenv)
		s.mu.Lock()
		for _, srv := range m.Servers {
			s.pids = append(s.pids, srv.Pid())
		}
		s.mu.Unlock()
		return acp.SessionTools{Router: router, Failed: errs, Close: m.Close}, nil
	}
}

// gone waits until none of the servers' process groups is left.
func (s *startedMCP) gone(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pid := range s.pids {
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(-pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("MCP server process group %d is still alive after the connection closed", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestGoldenMCPServer: a session whose mcpServers names the real
// server-everything over stdio offers its tools as
// mcp__everything__<tool>; a call of one passes the gate (asked), runs, and
// the server is stopped when the connection closes.
func TestGoldenMCPServer(t *testing.T) {
	srv := mcptest.Dir(t)
	e := newEnv(t)
	e.seen = &toolsSeen{names: map[string]bool{}}
	e.subst = append(e.subst, [2]string{srv, "$SERVERS"})
	started := &startedMCP{home: e.home}
	e.mcp = started.hook
	a := e.start(e.script(`{"text":"Echoing.","toolCalls":[{"id":"tc_1","name":"mcp__everything__echo","args":{"message":"hi"}}]}`, finalOK))
	c := e.connect(a, func(_ context.Context, req acpsdk.RequestPermissionRequest) (string, error) {
		if req.ToolCall.Title == nil || !strings.Contains(*req.ToolCall.Title, "mcp__everything__echo") {
			t.Errorf("the question's title %v does not name the MCP tool", req.ToolCall.Title)
		}
		return "allow_once", nil
	})
	c.init(t)
	r, err := c.NewSession(context.Background(), acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "everything", Command: "node", Args: []string{mcptest.Script(srv, "server-everything"), "stdio"}, Env: []acpsdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.prompt(t, r.SessionId, "echo hi"); got != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason %q", got)
	}
	e.golden(c, "mcp_server")
	if !e.seen.has("mcp__everything__echo") || !e.seen.has("read_file") {
		t.Errorf("the model was not offered mcp__everything__echo beside the built-in tools")
	}
	if c.c.asked != 1 {
		t.Errorf("asked %d times, want once", c.c.asked)
	}
	evs := a.events(t, string(r.SessionId))
	res := resolved(t, evs)
	if len(res) != 1 || res[0].Decision != "allow" || res[0].Actor != event.ActorUser {
		t.Errorf("permission.resolved = %+v, want one allow by the user", res)
	}
	ran := false
	for _, ev := range evs {
		if ev.Type == event.ToolCompleted && strings.Contains(string(ev.Payload), "Echo: hi") {
			ran = true
		}
	}
	if !ran {
		t.Error("no tool.completed with the server's answer (Echo: hi)")
	}
	started.mu.Lock()
	n := len(started.pids)
	started.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d servers started, want 1", n)
	}
	a.stop()
	started.gone(t)
}

// TestMCPServerFailures: servers that cannot start or cannot be used are
// named, with the log of the one that was started, in a session/update;
// the session goes on with the built-in tools.
func TestMCPServerFailures(t *testing.T) {
	e := newEnv(t)
	e.seen = &toolsSeen{names: map[string]bool{}}
	started := &startedMCP{home: e.home}
	e.mcp = started.hook
	// The configuration files name servers too: they start with the
	// editor's, and the editor's win on a shared name.
	e.settings = func(string) (acp.Settings, error) {
		return acp.Settings{Servers: map[string]config.Server{
			"from-config": {Command: filepath.Join(e.home, "no-such-configured-server")},
			"broken_one":  {Command: "never-started"},
		}}, nil
	}
	a := e.start(e.script(finalOK))
	c := e.connect(a)
	c.init(t)
	r, err := c.NewSession(context.Background(), acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "broken one", Command: filepath.Join(e.home, "no-such-server"), Args: []string{}, Env: []acpsdk.EnvVariable{}}},
		{Sse: &acpsdk.McpServerSseInline{Name: "old", Type: "sse", Url: "http://127.0.0.1:1/sse", Headers: []acpsdk.HttpHeader{}}},
	}})
	if err != nil {
		t.Fatalf("session/new with servers that fail: %v; want the session to go on", err)
	}
	if got := c.prompt(t, r.SessionId, "hello"); got != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason %q", got)
	}
	c.tr.mu.Lock()
	all := strings.Join(c.tr.toClient, "\n")
	c.tr.mu.Unlock()
	logFile := filepath.Join(e.dataDir, "mcp", "broken_one.log")
	for _, want := range []string{`MCP server \"broken_one\" did not start`, logFile, `MCP server \"old\": the SSE transport is not supported`,
		`MCP server \"from-config\" did not start`, `MCP server \"broken_one\" is named by the editor and by the configuration files: the editor's is used`} {
		if !strings.Contains(all, want) {
			t.Errorf("no session/update says %s:\n%s", want, all)
		}
	}
	if strings.Contains(all, "never-started") {
		t.Error("the configuration's server of the name the editor used was started")
	}
	if !strings.Contains(all, `"sessionUpdate":"agent_message_chunk"`) {
		t.Error("the failures are not told as agent message text")
	}
	if !e.seen.has("read_file") {
		t.Error("the built-in tools are not offered after a server failed")
	}
}

func TestServersConversion(t *testing.T) {
	got, errs := acp.Servers([]acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "My Files", Command: "npx", Args: []string{"-y", "srv"}, Env: []acpsdk.EnvVariable{{Name: "TOKEN", Value: "${GH}"}}}},
		{Http: &acpsdk.McpServerHttpInline{Name: "web", Type: "http", Url: "https://example.test/mcp", Headers: []acpsdk.HttpHeader{{Name: "Authorization", Value: "Bearer x"}}}},
		{Stdio: &acpsdk.McpServerStdio{Name: "My_Files", Command: "other"}},
		{Stdio: &acpsdk.McpServerStdio{Name: "nocmd"}},
	})
	files, ok := got["My_Files"]
	if !ok || files.Transport() != "stdio" || files.Command != "npx" || strings.Join(files.Args, " ") != "-y srv" || files.Env["TOKEN"] != "${GH}" {
		t.Errorf("stdio server: %+v (ok %v)", files, ok)
	}
	web, ok := got["web"]
	if !ok || web.Transport() != "http" || web.URL != "https://example.test/mcp" || web.Headers["Authorization"] != "Bearer x" {
		t.Errorf("http server: %+v (ok %v)", web, ok)
	}
	if len(got) != 2 || len(errs) != 2 {
		t.Fatalf("got %d servers and errors %v; want 2 and 2 (a duplicate name, no command)", len(got), errs)
	}
	if !strings.Contains(errs[0].Error(), "second server") || !strings.Contains(errs[1].Error(), `"nocmd": no command`) {
		t.Errorf("errors: %v", errs)
	}
	for name := range got {
		if err := config.CheckServerName(name); err != nil {
			t.Error(err)
		}
	}
}
