package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/approval/acp"
	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/session"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// env is one agent process's worth of state, over a data directory and a
// working directory that outlive it (for session/load after a restart).
type env struct {
	t       *testing.T
	dataDir string
	cwd     string
	home    string
	timeout time.Duration
	// mcp, when set, is the agent's Config.MCP; seen, when set, records
	// the tools of every model request.
	mcp  func(rt *app.Runtime) func(context.Context, string, map[string]config.Server) (acp.SessionTools, error)
	seen *toolsSeen
	// settings, when set, is the agent's Config.Settings.
	settings func(cwd string) (acp.Settings, error)
	// subst are further replacements of the golden transcripts (path, name).
	subst [][2]string
}

// toolsSeen records the tool names the model was offered.
type toolsSeen struct {
	mu    sync.Mutex
	names map[string]bool
}

func (s *toolsSeen) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[name]
}

// recording is a model that records the tools it is offered.
type recording struct {
	model.Gateway
	seen *toolsSeen
}

func (r recording) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	r.seen.mu.Lock()
	for _, t := range req.Tools {
		r.seen.names[t.Name] = true
	}
	r.seen.mu.Unlock()
	return r.Gateway.Stream(ctx, req)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dataDir: filepath.Join(root, "data"), cwd: filepath.Join(root, "work"), home: filepath.Join(root, "home"), timeout: 30 * time.Second}
	for _, d := range []string{e.dataDir, e.cwd, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) script(lines ...string) string {
	p := filepath.Join(e.home, "script.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// agent is a running agent with its runtime.
type agent struct {
	rt   *app.Runtime
	done chan struct{}
	stop func()
	in   *io.PipeWriter // the agent's stdin
	out  *io.PipeReader // the agent's stdout
}

// start serves an agent on pipes with the scripted model.
func (e *env) start(scriptPath string) *agent {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := app.Open(ctx, e.dataDir, e.timeout)
	if err != nil {
		t.Fatal(err)
	}
	m, err := app.Model("script:"+scriptPath, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if e.seen != nil {
		m = recording{Gateway: m, seen: e.seen}
	}
	n := 0
	cfg := acp.Config{
		Store: rt.Store, Broker: rt.Broker,
		Session: session.Config{
			Router: rt.Router, Artifacts: rt.Artifacts, MaxSteps: 10,
			Exec: executor.Options{ApprovalTimeout: e.timeout},
			NewID: func() string {
				n++
				return "sess-" + string(rune('0'+n))
			},
		},
		Model: m,
		Rules: func(cwd string) (session.Rules, error) {
			return policy.Load(cwd, filepath.Join(e.home, ".config"))
		},
		Cwd:  app.Cwd,
		Home: e.home, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home},
		Version: "test",
		Logger:  testLogger(t),
	}
	if e.mcp != nil {
		cfg.MCP = e.mcp(rt)
	}
	cfg.Settings = e.settings
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := &agent{rt: rt, done: make(chan struct{}), in: inW, out: outR}
	go func() {
		defer close(a.done)
		_ = acp.Serve(ctx, cfg, inR, outW)
		outW.Close()
	}()
	var once sync.Once
	a.stop = func() {
		once.Do(func() {
			inW.Close()
			select {
			case <-a.done:
			case <-time.After(10 * time.Second):
				t.Error("the agent did not stop after its stdin closed")
			}
			cancel()
			<-a.done
			rt.Close()
		})
	}
	t.Cleanup(a.stop)
	return a
}

// transcript records every line each side wrote.
type transcript struct {
	mu        sync.Mutex
	toAgent   []string
	toClient  []string
	withdrawn map[string]bool // request ids the agent withdrew ($/cancel_request)
	changed   chan struct{}
}

func newTranscript() *transcript {
	return &transcript{withdrawn: map[string]bool{}, changed: make(chan struct{}, 1)}
}

func (tr *transcript) add(toAgent bool, line string) {
	tr.mu.Lock()
	if toAgent {
		tr.toAgent = append(tr.toAgent, line)
	} else {
		var m struct {
			Method string `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == "$/cancel_request" {
			tr.withdrawn[string(m.Params.RequestID)] = true
		}
		tr.toClient = append(tr.toClient, line)
	}
	tr.mu.Unlock()
	select {
	case tr.changed <- struct{}{}:
	default:
	}
}

// tap copies r to w, recording each line.
func tap(tr *transcript, toAgent bool, r io.Reader, w io.WriteCloser) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 10<<20)
	for sc.Scan() {
		line := sc.Text()
		tr.add(toAgent, line)
		if _, err := w.Write([]byte(line + "\n")); err != nil {
			break
		}
	}
	w.Close()
}

// waitFor waits until the transcript satisfies ok.
func (tr *transcript) waitFor(t *testing.T, what string, ok func(toClient []string) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		tr.mu.Lock()
		done := ok(tr.toClient)
		tr.mu.Unlock()
		if done {
			return
		}
		select {
		case <-tr.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// answerFunc decides a permission request: it returns the option id to
// select, or "" for the cancelled outcome; it may block on ctx.
type answerFunc func(ctx context.Context, req acpsdk.RequestPermissionRequest) (string, error)

// client is the SDK's client side, answering permission requests with
// the scenario's answers in order.
type client struct {
	t       *testing.T
	mu      sync.Mutex
	answers []answerFunc
	asked   int
}

func (c *client) RequestPermission(ctx context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked++
	if len(c.answers) == 0 {
		c.mu.Unlock()
		c.t.Errorf("asked %q but the scenario has no answer left", p.ToolCall.ToolCallId)
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	f := c.answers[0]
	c.answers = c.answers[1:]
	c.mu.Unlock()
	id, err := f(ctx, p)
	if err != nil {
		return acpsdk.RequestPermissionResponse{}, err
	}
	if id == "" {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(acpsdk.PermissionOptionId(id))}, nil
}

func (c *client) SessionUpdate(context.Context, acpsdk.SessionNotification) error { return nil }
func (c *client) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	c.t.Error("the agent used fs/read_text_file, which it does not use")
	return acpsdk.ReadTextFileResponse{}, acpsdk.NewMethodNotFound("fs/read_text_file")
}
func (c *client) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	c.t.Error("the agent used fs/write_text_file, which it does not use")
	return acpsdk.WriteTextFileResponse{}, acpsdk.NewMethodNotFound("fs/write_text_file")
}
func (c *client) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/create")
}
func (c *client) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/kill")
}
func (c *client) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, acpsdk.NewMethodNotFound("terminal/output")
}
func (c *client) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/release")
}
func (c *client) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, acpsdk.NewMethodNotFound("terminal/wait_for_exit")
}

func pick(id string) answerFunc {
	return func(context.Context, acpsdk.RequestPermissionRequest) (string, error) { return id, nil }
}

// conn is a Go SDK client connected to an agent through a recording tap.
type conn struct {
	*acpsdk.ClientSideConnection
	c  *client
	tr *transcript
	a  *agent
}

func (e *env) connect(a *agent, answers ...answerFunc) *conn {
	tr := newTranscript()
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	go tap(tr, true, toAgentR, a.in)
	go tap(tr, false, a.out, toClientW)
	c := &client{t: e.t, answers: answers}
	cs := acpsdk.NewClientSideConnection(c, toAgentW, toClientR)
	cs.SetLogger(testLogger(e.t))
	e.t.Cleanup(func() { toAgentW.Close() })
	return &conn{ClientSideConnection: cs, c: c, tr: tr, a: a}
}

func (c *conn) init(t *testing.T) {
	t.Helper()
	_, err := c.Initialize(context.Background(), acpsdk.InitializeRequest{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		ClientInfo:      &acpsdk.Implementation{Name: "go-test-client", Version: "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (c *conn) newSession(t *testing.T, cwd string) acpsdk.SessionId {
	t.Helper()
	r, err := c.NewSession(context.Background(), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return r.SessionId
}

func (c *conn) prompt(t *testing.T, id acpsdk.SessionId, text string) acpsdk.StopReason {
	t.Helper()
	r, err := c.Prompt(context.Background(), acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
	if err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return r.StopReason
}

// golden compares the exchange with testdata/NAME.txt: the lines each side
// wrote, in order, with the working directory and home written as $CWD and
// $HOME. The withdrawal of a request ($/cancel_request) and the client's
// reply to a withdrawn request are sent by other goroutines than the
// turn's, so they are listed apart, not in the agent's stream.
func (e *env) golden(c *conn, name string) {
	t := e.t
	t.Helper()
	// Every request the agent sent has been answered by the client, and
	// so every withdrawal of one ($/cancel_request, which the client reads
	// before it answers a withdrawn request) is in the transcript: the
	// withdrawal is sent by another goroutine than the turn's and may
	// come after the prompt's response.
	c.tr.waitFor(t, "the replies to the agent's requests", func(toClient []string) bool {
		for _, l := range toClient {
			if id := requestID(l); id != "" && !c.tr.hasReply(id) {
				return false
			}
		}
		for id := range c.tr.withdrawn {
			if !c.tr.hasReply(id) {
				return false
			}
		}
		return true
	})
	tr := c.tr
	tr.mu.Lock()
	var b strings.Builder
	b.WriteString("# " + name + ": the JSON-RPC exchange between the Go SDK client and custom-agent acp\n")
	b.WriteString("## client -> agent\n")
	for _, l := range tr.toAgent {
		if id := responseID(l); id != "" && tr.withdrawn[id] {
			continue
		}
		b.WriteString(e.norm(l) + "\n")
	}
	b.WriteString("## agent -> client\n")
	for _, l := range tr.toClient {
		if strings.Contains(l, `"method":"$/cancel_request"`) {
			continue
		}
		b.WriteString(e.norm(l) + "\n")
	}
	b.WriteString("## withdrawn requests ($/cancel_request)\n")
	var ids []string
	for id := range tr.withdrawn {
		ids = append(ids, id)
	}
	tr.mu.Unlock()
	sort.Strings(ids)
	for _, id := range ids {
		b.WriteString(id + "\n")
	}
	path := filepath.Join("testdata", "golden", name+".txt")
	got := b.String()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./approval/acp -run %s -update to write it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("the exchange differs from %s:\n%s", path, lineDiff(string(want), got))
	}
}

func (tr *transcript) hasReply(id string) bool {
	for _, l := range tr.toAgent {
		if responseID(l) == id {
			return true
		}
	}
	return false
}

// requestID is the id of a request line (a method and an id), or "".
func requestID(line string) string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(line), &m) != nil || m.Method == "" || len(m.ID) == 0 {
		return ""
	}
	return string(m.ID)
}

// responseID is the id of a response line, or "".
func responseID(line string) string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(line), &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return ""
	}
	return string(m.ID)
}

func (e *env) norm(l string) string {
	l = strings.ReplaceAll(l, e.cwd, "$CWD")
	l = strings.ReplaceAll(l, e.home, "$HOME")
	for _, r := range e.subst {
		l = strings.ReplaceAll(l, r[0], r[1])
	}
	return l
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b bytes.Buffer
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
		}
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// testLogger logs to the test while it runs, and nowhere once it ended.
func testLogger(t *testing.T) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(b), "\n"))
	}
	return len(b), nil
}

// events reads a session's events from the data directory's log.
func (a *agent) events(t *testing.T, id string) []event.Event {
	t.Helper()
	var out []event.Event
	for e, err := range a.rt.Store.Read(context.Background(), id, 1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// resolved returns the permission.resolved payloads of a session, in order.
func resolved(t *testing.T, events []event.Event) []event.PermissionResolvedPayload {
	var out []event.PermissionResolvedPayload
	for _, e := range events {
		if e.Type == event.PermissionResolved {
			var p event.PermissionResolvedPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}

func count(events []event.Event, typ event.Type) int {
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}
