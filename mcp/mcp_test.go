package mcp_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/mcp"
	"github.com/custom-agent/custom-agent/mcp/mcptest"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/tool"
)

func node(t testing.TB, servers, pkg string, args ...string) config.Server {
	return config.Server{Command: "node", Args: append([]string{filepath.Join(servers, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")}, args...), Timeout: 30 * time.Second}
}

func start(t *testing.T, servers map[string]config.Server, getenv func(string) string, pins *mcp.Pins) *mcp.Manager {
	t.Helper()
	if getenv == nil {
		getenv = os.Getenv
	}
	m, errs := mcp.Start(context.Background(), servers, mcp.Options{LogDir: t.TempDir(), Getenv: getenv, Pins: pins, Cwd: t.TempDir()})
	t.Cleanup(func() { m.Close() })
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return m
}

func find(t *testing.T, m *mcp.Manager, name string) *mcp.Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Info().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func call(t *testing.T, tl *mcp.Tool, args map[string]any) (string, tool.Result, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	r, err := tl.Run(context.Background(), tool.Call{ID: "c1", Args: args}, tool.Output{Stdout: &out, Stderr: &errOut})
	return out.String(), r, err
}

func TestFilesystemToolsRiskAndArgs(t *testing.T) {
	srv := mcptest.Dir(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello from a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := start(t, map[string]config.Server{"filesystem": node(t, srv, "server-filesystem", dir)}, nil, nil)
	want := map[string]risk.Level{
		"mcp__filesystem__read_text_file": risk.Execute,     // readOnlyHint lowers nothing
		"mcp__filesystem__write_file":     risk.Destructive, // destructiveHint raises
		"mcp__filesystem__move_file":      risk.Destructive,
		"mcp__filesystem__list_directory": risk.Execute,
	}
	for name, l := range want {
		if got := find(t, m, name).Info(); got.Risk != l || got.Namespace != "mcp__filesystem" {
			t.Errorf("%s: risk %s, namespace %q; want %s", name, got.Risk, got.Namespace, l)
		}
	}
	if p := find(t, m, "mcp__filesystem__move_file").Info().PathArgs; !slices.Contains(p, "source") || !slices.Contains(p, "destination") {
		t.Errorf("move_file path args: %v", p)
	}
	if p := find(t, m, "mcp__filesystem__read_multiple_files").Info().PathArgs; !slices.Contains(p, "paths") {
		t.Errorf("read_multiple_files path args: %v", p)
	}
	out, _, err := call(t, find(t, m, "mcp__filesystem__read_text_file"), map[string]any{"path": filepath.Join(dir, "a.txt")})
	if err != nil || !strings.Contains(out, "hello from a") {
		t.Fatalf("read_text_file: %q, %v", out, err)
	}
	// A tool error from the server is the call's error.
	if _, _, err := call(t, find(t, m, "mcp__filesystem__read_text_file"), map[string]any{"path": "/etc/passwd"}); err == nil {
		t.Fatal("a read outside the server's allowed directory did not fail")
	}
}

func TestStdioServerEnvironmentIsScrubbed(t *testing.T) {
	srv := mcptest.Dir(t)
	ours := map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/home/tester", "GITHUB_TOKEN": "ghp_secretvalue", "AWS_SECRET_ACCESS_KEY": "aws-secret", "OPENAI_API_KEY": "sk-ours", "FROM_US": "ours-value"}
	getenv := func(k string) string { return ours[k] }
	c := node(t, srv, "server-everything", "stdio")
	c.Env = map[string]string{"LISTED": "listed-value", "PASSED": "${FROM_US}"}
	m := start(t, map[string]config.Server{"everything": c}, getenv, nil)
	tl := find(t, m, "mcp__everything__get-env")
	if tl.Info().Risk < risk.Execute {
		t.Fatalf("get-env is annotated read-only and judged %s", tl.Info().Risk)
	}
	out, _, err := call(t, tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ghp_secretvalue", "aws-secret", "sk-ours", "GITHUB_TOKEN", "OPENAI_API_KEY"} {
		if strings.Contains(out, s) {
			t.Errorf("get-env shows %q, which its env does not list:\n%s", s, out)
		}
	}
	for _, s := range []string{"listed-value", "ours-value", "/home/tester"} {
		if !strings.Contains(out, s) {
			t.Errorf("get-env lacks %q:\n%s", s, out)
		}
	}
}

func TestServerDeathAndShutdown(t *testing.T) {
	srv := mcptest.Dir(t)
	logDir := t.TempDir()
	m, errs := mcp.Start(context.Background(), map[string]config.Server{"everything": node(t, srv, "server-everything", "stdio")}, mcp.Options{LogDir: logDir, Getenv: os.Getenv})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	s := m.Servers[0]
	if s.LogFile != filepath.Join(logDir, "everything.log") {
		t.Errorf("log file %s", s.LogFile)
	}
	echo := find(t, m, "mcp__everything__echo")
	if out, _, err := call(t, echo, map[string]any{"message": "hi there"}); err != nil || !strings.Contains(out, "hi there") {
		t.Fatalf("echo: %q %v", out, err)
	}
	if err := syscall.Kill(-s.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 50; i++ {
		if _, _, err = call(t, echo, map[string]any{"message": "again"}); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), `MCP server "everything"`) || !strings.Contains(err.Error(), s.LogFile) {
		t.Fatalf("a call after the server died: %v; want an error naming the server and its log", err)
	}
	m.Close()

	// Close stops the server's whole process group.
	m2 := start(t, map[string]config.Server{"everything": node(t, srv, "server-everything", "stdio")}, nil, nil)
	pid := m2.Servers[0].Pid()
	if err := m2.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := syscall.Kill(-pid, 0); err == nil {
		t.Fatalf("process group %d is still alive after Close", pid)
	}
}

func TestStartFailureNamesServerAndLog(t *testing.T) {
	logDir := t.TempDir()
	m, errs := mcp.Start(context.Background(), map[string]config.Server{
		"broken": {Command: "sh", Args: []string{"-c", "echo boom >&2; exit 3"}, Timeout: 10 * time.Second},
	}, mcp.Options{LogDir: logDir, Getenv: os.Getenv})
	defer m.Close()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `MCP server "broken" did not start`) || !strings.Contains(errs[0].Error(), filepath.Join(logDir, "broken.log")) {
		t.Fatalf("errors: %v", errs)
	}
	b, _ := os.ReadFile(filepath.Join(logDir, "broken.log"))
	if !strings.Contains(string(b), "boom") {
		t.Errorf("the server's stderr is not in its log: %q", b)
	}
	_, errs = mcp.Start(context.Background(), map[string]config.Server{
		"slow": {Command: "sleep", Args: []string{"30"}, Timeout: 500 * time.Millisecond},
	}, mcp.Options{LogDir: logDir, Getenv: os.Getenv})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "timed out") {
		t.Fatalf("a server that never answers: %v", errs)
	}
}

func TestPinning(t *testing.T) {
	srv := mcptest.Dir(t)
	path := filepath.Join(t.TempDir(), "pins.json")
	pins, err := mcp.OpenPins(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pins.Set("mcp__everything__echo", "sha256:0000"); err != nil {
		t.Fatal(err)
	}
	m := start(t, map[string]config.Server{"everything": node(t, srv, "server-everything", "stdio")}, nil, pins)
	echo := find(t, m, "mcp__everything__echo")
	c := echo.Info().Changed
	if c == nil || c.Approved != "sha256:0000" || c.Offered != echo.Hash() {
		t.Fatalf("a definition unlike the pinned one: Changed %+v", c)
	}
	if other := find(t, m, "mcp__everything__get-sum").Info().Changed; other != nil {
		t.Fatalf("a tool never approved is marked changed: %+v", other)
	}
	if _, _, err := call(t, echo, map[string]any{"message": "x"}); err != nil {
		t.Fatal(err)
	}
	if echo.Info().Changed != nil {
		t.Fatal("still marked changed after it ran (was approved)")
	}
	again, _ := mcp.OpenPins(path)
	if h, _ := again.Get("mcp__everything__echo"); h != echo.Hash() {
		t.Fatalf("pinned %s, want %s", h, echo.Hash())
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestStreamableHTTP(t *testing.T) {
	srv := mcptest.Dir(t)
	port := freePort(t)
	cmd := exec.Command("node", filepath.Join(srv, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	cmd.Stderr, cmd.Stdout = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if i > 100 {
			t.Fatalf("the HTTP server did not listen: %s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	m := start(t, map[string]config.Server{"remote": {Type: "http", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Headers: map[string]string{"X-Test": "${X_TEST}"}, Timeout: 30 * time.Second}},
		func(k string) string { return map[string]string{"X_TEST": "v"}[k] }, nil)
	echo := find(t, m, "mcp__remote__echo")
	if out, _, err := call(t, echo, map[string]any{"message": "over http"}); err != nil || !strings.Contains(out, "over http") {
		t.Fatalf("echo over HTTP: %q, %v", out, err)
	}
	if l := find(t, m, "mcp__remote__get-env").Info().Risk; l < risk.Execute {
		t.Fatalf("get-env over HTTP judged %s", l)
	}
}
