// Package mcp connects MCP servers (Model Context Protocol) and offers
// their tools to the Router as mcp__<server>__<tool>. It is an adapter
// above the executor: every call of an MCP tool passes the
// PermissionEngine like any built-in one, and the core never imports this
// package.
//
// The servers are not trusted. A stdio server runs as its own subprocess in
// its own process group, with only its configured env and PATH, HOME, LANG
// and TMPDIR; its stderr goes to a log file. Its tools start at risk
// execute, and their annotations may only raise it. Their definitions are
// pinned by hash once a rule or an answer lets them run.
package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// DefaultTimeout is how long a server may take to start and list its
// tools, and each call, unless its configuration says otherwise.
const DefaultTimeout = 60 * time.Second

// BaseEnv are the variables of our environment a stdio server gets besides
// those its configuration lists.
var BaseEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// Options configure Start.
type Options struct {
	// LogDir holds one log file per stdio server (its stderr).
	LogDir string
	// Pins is where approved tool definitions are recorded; nil pins
	// nothing.
	Pins *Pins
	// Getenv reads our environment, for BaseEnv and ${VAR} in env and
	// headers.
	Getenv func(string) string
	// Cwd is the directory stdio servers start in when they name none.
	Cwd string
}

// Server is one connected MCP server.
type Server struct {
	Name    string
	Config  config.Server
	LogFile string // "" for an HTTP server
	Tools   []*Tool

	session *sdk.ClientSession
	cmd     *exec.Cmd
	pgid    int
	timeout time.Duration

	mu   sync.Mutex
	dead error // set when the connection ended
}

// StartError is a server that could not be started or listed.
type StartError struct {
	Server  string
	LogFile string
	Err     error
}

func (e *StartError) Error() string {
	// The error holds what the server said (a JSON-RPC error message):
	// escaped, so that it cannot act on the terminal it is printed to.
	s := "MCP server " + quote(e.Server) + " did not start: " + termtext.Line(e.Err.Error())
	if e.LogFile != "" {
		s += "; its log is " + e.LogFile
	}
	return s + "; the session goes on without its tools"
}

func (e *StartError) Unwrap() error { return e.Err }

// Manager holds the servers of one session.
type Manager struct {
	Servers []*Server
}

// Start connects every configured server, in name order. A server that
// fails is left out and reported; the others are used.
func Start(ctx context.Context, servers map[string]config.Server, o Options) (*Manager, []error) {
	m := &Manager{}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		s, err := connect(ctx, name, servers[name], o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m.Servers = append(m.Servers, s)
	}
	return m, errs
}

// Tools returns every tool of every connected server.
func (m *Manager) Tools() []*Tool {
	var out []*Tool
	for _, s := range m.Servers {
		out = append(out, s.Tools...)
	}
	return out
}

// Close stops every server, and every process a stdio server started.
func (m *Manager) Close() error {
	var errs []error
	for _, s := range m.Servers {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${VAR} with our environment's value: how a configuration
// names a token without holding it.
func expand(s string, getenv func(string) string) string {
	return envRef.ReplaceAllStringFunc(s, func(m string) string { return getenv(m[2 : len(m)-1]) })
}

// ServerEnv is the whole environment of a stdio server: BaseEnv from ours,
// then what its configuration lists (with ${VAR} expanded).
func ServerEnv(c config.Server, getenv func(string) string) []string {
	var env []string
	for _, k := range BaseEnv {
		if _, listed := c.Env[k]; !listed {
			if v := getenv(k); v != "" {
				env = append(env, k+"="+v)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		env = append(env, k+"="+expand(c.Env[k], getenv))
	}
	return env
}

func connect(ctx context.Context, name string, c config.Server, o Options) (*Server, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s := &Server{Name: name, Config: c, timeout: c.Timeout}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	var transport sdk.Transport
	switch c.Transport() {
	case "http":
		headers := map[string]string{}
		for k, v := range c.Headers {
			headers[k] = expand(v, getenv)
		}
		transport = &sdk.StreamableClientTransport{Endpoint: c.URL, MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: headerTransport{headers: headers, base: http.DefaultTransport}}}
	default:
		if err := os.MkdirAll(o.LogDir, 0o700); err != nil {
			return nil, &StartError{Server: name, Err: err}
		}
		s.LogFile = filepath.Join(o.LogDir, name+".log")
		logf, err := os.OpenFile(s.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, &StartError{Server: name, Err: err}
		}
		fmt.Fprintf(logf, "--- %s starting %s %s\n", time.Now().Format(time.RFC3339), c.Command, strings.Join(c.Args, " "))
		cmd := exec.Command(c.Command, c.Args...)
		if path := getenv("PATH"); !strings.ContainsRune(c.Command, '/') && path != "" {
			// The server's PATH is ours; look the command up in it.
			if p, err := lookPath(c.Command, path); err == nil {
				cmd.Path, cmd.Err = p, nil
			}
		}
		cmd.Env = ServerEnv(c, getenv)
		cmd.Dir = o.Cwd
		if c.Cwd != "" {
			cmd.Dir = c.Cwd
		}
		cmd.Stderr = logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		s.cmd = cmd
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}
		defer logf.Close() // the child holds its own copy
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "custom-agent", Version: "1"}, nil)
	sess, err := client.Connect(cctx, transport, nil)
	if s.cmd != nil && s.cmd.Process != nil {
		s.pgid = s.cmd.Process.Pid
	}
	if err != nil {
		s.killGroup()
		return nil, &StartError{Server: name, LogFile: s.LogFile, Err: timeoutErr(cctx, err, s.timeout)}
	}
	s.session = sess
	go func() {
		err := sess.Wait()
		s.mu.Lock()
		if s.dead == nil {
			if err == nil {
				err = errors.New("the connection closed")
			}
			s.dead = err
		}
		s.mu.Unlock()
	}()
	var defs []*sdk.Tool
	for t, err := range sess.Tools(cctx, nil) {
		if err != nil {
			s.close()
			return nil, &StartError{Server: name, LogFile: s.LogFile, Err: fmt.Errorf("listing its tools: %w", timeoutErr(cctx, err, s.timeout))}
		}
		defs = append(defs, t)
	}
	for _, d := range defs {
		t, err := newTool(s, d, o.Pins)
		if err != nil {
			fmt.Fprintf(os.Stderr, "custom-agent: MCP server %s: tool %s left out: %v\n", quote(name), quote(d.Name), err)
			continue
		}
		s.Tools = append(s.Tools, t)
	}
	return s, nil
}

func timeoutErr(ctx context.Context, err error, d time.Duration) error {
	if ctx.Err() != nil {
		return fmt.Errorf("timed out after %s: %w", d, err)
	}
	return err
}

// lookPath finds cmd in path, a PATH value.
func lookPath(cmd, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, cmd)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// gone returns why the server can no longer answer, or nil.
func (s *Server) gone() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

func (s *Server) where() string {
	if s.LogFile != "" {
		return "; its log is " + s.LogFile
	}
	return " (" + s.Config.URL + ")"
}

func (s *Server) close() error {
	s.mu.Lock()
	if s.dead == nil {
		s.dead = errors.New("the session ended")
	}
	s.mu.Unlock()
	var err error
	if s.session != nil {
		done := make(chan error, 1)
		go func() { done <- s.session.Close() }()
		select {
		case err = <-done:
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				err = nil // stopped by us: SIGTERM after its stdin closed
			}
		case <-time.After(5 * time.Second):
			err = errors.New("closing timed out")
		}
	}
	s.killGroup()
	return err
}

// killGroup kills the server's process group: its children too.
func (s *Server) killGroup() {
	if s.pgid > 0 {
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	}
}

// Pid is the stdio server's process id (its process group), 0 for HTTP.
func (s *Server) Pid() int { return s.pgid }

// Hash is the hash pinned for a tool's definition: its name, description,
// input schema and annotations, canonically encoded.
func Hash(d *sdk.Tool) string {
	b, _ := json.Marshal(struct {
		Name        string               `json:"name"`
		Description string               `json:"description"`
		InputSchema any                  `json:"inputSchema"`
		Annotations *sdk.ToolAnnotations `json:"annotations"`
	}{d.Name, d.Description, d.InputSchema, d.Annotations})
	var v any
	_ = json.Unmarshal(b, &v)
	b, _ = json.Marshal(v) // maps re-encoded with sorted keys
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Risk is a tool's base risk: execute, raised by the server's annotations
// (destructiveHint true → destructive, openWorldHint true → network),
// never lowered (readOnlyHint counts for nothing).
func Risk(a *sdk.ToolAnnotations) risk.Level {
	l := risk.Execute
	if a == nil {
		return l
	}
	if a.OpenWorldHint != nil && *a.OpenWorldHint {
		l = risk.Max(l, risk.Network)
	}
	if a.DestructiveHint != nil && *a.DestructiveHint {
		l = risk.Max(l, risk.Destructive)
	}
	return l
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
