// Package acp is the Agent Client Protocol adapter: it serves custom-agent
// as an ACP agent (JSON-RPC 2.0, one message a line) to an editor such as
// Zed, which becomes the approval UI. Every tool call still passes the
// executor and the PermissionEngine; an ask reaches the editor as
// session/request_permission through the approval broker, and the turn's
// events reach it as session/update notifications.
//
// The package sits above the session engine, the executor and the store
// port (DESIGN.md §2): nothing in the core imports it.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
)

// Store is what the adapter needs of the event log.
type Store interface {
	session.Log
	// Verify checks a session's hash chain; a session that does not
	// verify is not continued.
	Verify(ctx context.Context, sessionID string) error
}

// Config is what the agent serves with.
type Config struct {
	Store  Store
	Broker *approval.Broker
	// Session is the template of every session's configuration; its Log,
	// Model and Approver are set by the agent.
	Session session.Config
	// Model is the model every session uses. When it is nil, session/new
	// and session/load fail with ModelErr, which says what to set.
	Model    model.Gateway
	ModelErr error
	// Rules opens the policy for a session's directory, unless Settings
	// gives it.
	Rules func(cwd string) (session.Rules, error)
	// Settings, when set, returns the settings of a session in a directory
	// (the configuration files of that directory under the flags). An
	// error (a file that does not load) fails the session with it.
	Settings func(cwd string) (Settings, error)
	// System returns the system prompt for a directory (default none).
	System func(cwd string) string
	// Cwd checks and canonicalises a session's directory (default
	// filepath.Clean of an absolute path).
	Cwd  func(dir string) (string, error)
	Home string
	Env  []string
	// DataDir is custom-agent's data directory, symbolic links resolved
	// (session.Info.DataDir): the engine judges it a credential location.
	DataDir string
	// Mode is the mode new sessions start in (default "default").
	Mode permission.Mode
	// Logger receives operational messages; never stdout (default
	// slog.Default()).
	Logger *slog.Logger
	// Version is reported in initialize's agentInfo.
	Version string
	// MCP, when set, builds the tools of each session/new or session/load:
	// it starts the MCP servers named (converted by Servers; none is
	// given when none is named) for that session in cwd, and returns the
	// session's router (with the directory's skills, if the hook adds
	// them) and how to stop the servers. Failed become notices shown to
	// the person. The agent stops them when the
	// connection closes. When it is nil, a session that names servers is
	// refused.
	MCP func(ctx context.Context, cwd string, servers map[string]config.Server) (SessionTools, error)
}

// Option ids of session/request_permission, with the answers they stand for.
const (
	optAllowOnce    = executor.OptionAllowOnce
	optAllowSession = executor.OptionAllowSession
	optAllowProject = executor.OptionAllowProject
	optDeny         = executor.OptionDeny

	optAllowUnsandboxed = executor.OptionAllowUnsandboxed
	// optDenySession is "deny for this session": a session deny rule, so
	// the same call is refused without asking (DESIGN.md §6).
	optDenySession = "deny_session"
)

// Agent implements the ACP agent side.
type Agent struct {
	cfg  Config
	conn *acpsdk.AgentSideConnection
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[string]*sess
	// asks are the permission requests out with the client, by broker ask
	// id: cancelling one withdraws the request ($/cancel_request).
	asks map[string]context.CancelFunc
	// clientCaps are what the client advertised in initialize.
	clientCaps acpsdk.ClientCapabilities
}

// sess is one ACP session: a session of our log.
type sess struct {
	id    string
	cwd   string
	s     *session.Session
	rules session.Rules
	// stopMCP stops the session's MCP servers (nil: none).
	stopMCP func() error

	// turn serialises the session's turns and mode changes.
	turn sync.Mutex

	mu      sync.Mutex // guards the fields below
	running bool
	turnID  string // the running turn's id (for events the adapter records)
	// denySession are the session deny rules chosen for tool calls whose
	// ask is being answered "deny for this session", by tool call id.
	denySession map[string]permission.Rule
	// calls are the tool calls of the running turn, by id (for the title of
	// a permission request).
	calls map[string]*callState
	// notices are told to the person at the start of the next turn (MCP
	// servers that did not start).
	notices []string
}

var (
	_ acpsdk.Agent       = (*Agent)(nil)
	_ acpsdk.AgentLoader = (*Agent)(nil)
)

// Serve runs the agent on in and out until in ends or ctx is cancelled.
// Only protocol is written to out.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	a := newAgent(cfg)
	w := &lineWriter{w: out}
	// No message is read before a.conn is set: the SDK starts reading as
	// the connection is made, and handlers use a.conn.
	ready := make(chan struct{})
	filtered := filterInput(in, w, a.log, ready)
	a.conn = acpsdk.NewAgentSideConnection(a, w, filtered)
	a.conn.SetLogger(a.log)
	close(ready)
	subCtx, stop := context.WithCancel(ctx)
	defer stop()
	notices := cfg.Broker.Subscribe(subCtx)
	go a.routeAsks(subCtx, notices)
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	a.cancelAll()
	a.stopSessions()
	return nil
}

// stopSessions stops every session's MCP servers when the connection ends,
// and lets its sessions go (their leases): an editor that reconnects, or
// another process, may then load them.
func (a *Agent) stopSessions() {
	a.mu.Lock()
	var stops []func() error
	for _, ss := range a.sessions {
		if ss.stopMCP != nil {
			stops = append(stops, ss.stopMCP)
			ss.stopMCP = nil
		}
		ss.s.Close()
	}
	a.mu.Unlock()
	for _, stop := range stops {
		if err := stop(); err != nil {
			a.log.Warn("stopping MCP servers", "err", err)
		}
	}
}

func newAgent(cfg Config) *Agent {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Mode == "" {
		cfg.Mode = permission.ModeDefault
	}
	if cfg.Cwd == nil {
		cfg.Cwd = func(dir string) (string, error) { return filepath.Clean(dir), nil }
	}
	if cfg.System == nil {
		cfg.System = func(string) string { return "" }
	}
	return &Agent{cfg: cfg, log: cfg.Logger, sessions: map[string]*sess{}, asks: map[string]context.CancelFunc{}}
}

// cancelAll withdraws every request still out when the connection ends.
func (a *Agent) cancelAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.asks {
		c()
	}
}

// Initialize answers with protocol version 1 and what the agent supports.
func (a *Agent) Initialize(_ context.Context, p acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	a.mu.Lock()
	a.clientCaps = p.ClientCapabilities
	a.mu.Unlock()
	title := "custom-agent"
	return acpsdk.InitializeResponse{
		ProtocolVersion: acpsdk.ProtocolVersion(acpsdk.ProtocolVersionNumber),
		AgentInfo:       &acpsdk.Implementation{Name: "custom-agent", Title: &title, Version: a.cfg.Version},
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession: true,
			// Text and resource links are the baseline; embedded text
			// resources are read too. Images and audio are not.
			PromptCapabilities: acpsdk.PromptCapabilities{EmbeddedContext: true},
			// mcpServers: stdio (always) and streamable HTTP.
			McpCapabilities: acpsdk.McpCapabilities{Http: true},
		},
		AuthMethods: []acpsdk.AuthMethod{},
	}, nil
}

// Authenticate is not needed: the model's credentials come from the
// environment.
func (a *Agent) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodAuthenticate)
}

// modes are the session modes offered, in the order shown.
func modes(current permission.Mode) *acpsdk.SessionModeState {
	def := "Every call is decided by its risk and your policy; writes, commands and network calls are asked"
	plan := "Look, don't touch: only calls judged read may run; anything else is denied, not asked"
	accept := "Edits (write_file, apply_patch) inside the working directory run without asking; protected and credential paths, commands and network calls as in Default"
	dont := "Nobody answers: whatever Default would ask is denied at once, with what it would have asked; for unattended runs"
	return &acpsdk.SessionModeState{
		CurrentModeId: acpsdk.SessionModeId(orDefault(current)),
		AvailableModes: []acpsdk.SessionMode{
			{Id: acpsdk.SessionModeId(permission.ModeDefault), Name: "Default", Description: &def},
			{Id: acpsdk.SessionModeId(permission.ModePlan), Name: "Plan", Description: &plan},
			{Id: acpsdk.SessionModeId(permission.ModeAcceptEdits), Name: "Accept edits", Description: &accept},
			{Id: acpsdk.SessionModeId(permission.ModeDontAsk), Name: "Don't ask", Description: &dont},
		},
	}
}

func orDefault(m permission.Mode) permission.Mode {
	if m == "" {
		return permission.ModeDefault
	}
	return m
}

// reqError is a JSON-RPC error with a readable message.
func reqError(code int, format string, args ...any) *acpsdk.RequestError {
	return &acpsdk.RequestError{Code: code, Message: fmt.Sprintf(format, args...)}
}

const (
	codeInvalidParams = -32602
	codeInternal      = -32603
	codeNotFound      = -32002
)

// prepare checks and resolves what session/new and session/load share:
// an absolute cwd, the settings of that directory, a model, the policy.
func (a *Agent) prepare(cwd string) (*setup, error) {
	if !filepath.IsAbs(cwd) {
		return nil, reqError(codeInvalidParams, "cwd must be an absolute path, got %q", cwd)
	}
	dir, err := a.cfg.Cwd(cwd)
	if err != nil {
		return nil, reqError(codeInvalidParams, "cwd: %v", err)
	}
	u := &setup{dir: dir, model: a.cfg.Model, mode: a.cfg.Mode}
	if a.cfg.Settings != nil {
		if u.settings, err = a.cfg.Settings(dir); err != nil {
			return nil, reqError(codeInternal, "custom-agent cannot start a session in %s: %v", dir, err)
		}
	}
	st := u.settings
	modelErr := a.cfg.ModelErr
	if st.Model != nil || st.ModelErr != nil {
		u.model, modelErr = st.Model, st.ModelErr
	}
	if u.model == nil {
		if modelErr == nil {
			modelErr = errors.New("no model is configured")
		}
		return nil, reqError(codeInternal, "custom-agent cannot start a session: %v", modelErr)
	}
	if st.Mode != "" {
		u.mode = st.Mode
	}
	u.rules = st.Rules
	if u.rules == nil && a.cfg.Rules != nil {
		if u.rules, err = a.cfg.Rules(dir); err != nil {
			return nil, reqError(codeInternal, "the policy for %s does not load: %v", dir, err)
		}
	}
	return u, nil
}

func (a *Agent) sessionConfig(u *setup, st SessionTools) session.Config {
	c := a.cfg.Session
	c.Log = a.cfg.Store
	c.Model = u.model
	c.Approver = &approver{a: a}
	if u.settings.ApprovalTimeout > 0 {
		c.Exec.ApprovalTimeout = u.settings.ApprovalTimeout
	}
	if u.settings.MaxStored > 0 {
		c.Exec.MaxStored = u.settings.MaxStored
	}
	if st.Router != nil {
		c.Router = st.Router
	}
	return c
}

// stopTools stops servers started for a session that did not open.
func (a *Agent) stopTools(st SessionTools) {
	if st.Close != nil {
		if err := st.Close(); err != nil {
			a.log.Warn("stopping MCP servers", "err", err)
		}
	}
}

func (a *Agent) info(cwd string, rules session.Rules, mode permission.Mode) session.Info {
	return session.Info{Cwd: cwd, Home: a.cfg.Home, DataDir: a.cfg.DataDir, Mode: mode, Rules: rules, Env: a.cfg.Env}
}

// NewSession starts a session of our log in cwd.
func (a *Agent) NewSession(ctx context.Context, p acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	u, err := a.prepare(p.Cwd)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	dir, rules := u.dir, u.rules
	st, notices, err := a.startMCP(ctx, u, p.McpServers)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	cfg := a.sessionConfig(u, st)
	cfg.System = a.cfg.System(dir)
	s := session.New(cfg, a.info(dir, rules, u.mode))
	ss := a.add(s, dir, rules, st.Close, notices)
	a.log.Info("session started", "session", ss.id, "cwd", dir, "mcpServers", len(p.McpServers))
	for _, n := range notices {
		a.log.Warn(n, "session", ss.id)
	}
	return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(ss.id), Modes: modes(s.Mode())}, nil
}

func (a *Agent) add(s *session.Session, dir string, rules session.Rules, stopMCP func() error, notices []string) *sess {
	ss := newSess(s.ID(), dir, s, rules, stopMCP, notices)
	a.mu.Lock()
	a.sessions[ss.id] = ss
	a.mu.Unlock()
	return ss
}

func newSess(id, dir string, s *session.Session, rules session.Rules, stopMCP func() error, notices []string) *sess {
	return &sess{id: id, cwd: dir, s: s, rules: rules, stopMCP: stopMCP, notices: notices,
		denySession: map[string]permission.Rule{}, calls: map[string]*callState{}}
}

func (a *Agent) session(id acpsdk.SessionId) (*sess, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ss, ok := a.sessions[string(id)]
	if !ok {
		return nil, reqError(codeNotFound, "no session %q in this connection (session/new starts one, session/load continues a recorded one)", id)
	}
	return ss, nil
}

// LoadSession replays a recorded session as session/update notifications
// and continues it, with its approvals and session rules restored as
// run --session does.
func (a *Agent) LoadSession(ctx context.Context, p acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	u, err := a.prepare(p.Cwd)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	dir, rules := u.dir, u.rules
	id := string(p.SessionId)
	a.mu.Lock()
	_, open := a.sessions[id]
	a.mu.Unlock()
	if open {
		return acpsdk.LoadSessionResponse{}, reqError(codeInvalidParams, "session %s is already open in this connection", id)
	}
	if err := a.cfg.Store.Verify(ctx, id); err != nil {
		if errors.Is(err, eventlog.ErrNoSession) {
			return acpsdk.LoadSessionResponse{}, reqError(codeNotFound, "no session %s is recorded", id)
		}
		return acpsdk.LoadSessionResponse{}, reqError(codeInternal,
			"session %s does not verify, so it is not continued: %v (custom-agent audit verify %s shows where; start a new session instead)", id, err, id)
	}
	var events []event.Event
	for e, err := range a.cfg.Store.Read(ctx, id, 1) {
		if err != nil {
			return acpsdk.LoadSessionResponse{}, reqError(codeInternal, "reading session %s: %v", id, err)
		}
		events = append(events, e)
	}
	st, notices, err := a.startMCP(ctx, u, p.McpServers)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	cfg := a.sessionConfig(u, st)
	cfg.System = a.cfg.System(dir)
	// Resume continues in the mode the session last ran in or was changed
	// to (session.mode_changed, or the older policy.changed set_mode).
	s, err := session.Resume(ctx, cfg, id, a.info(dir, rules, u.mode))
	if err != nil {
		a.stopTools(st)
		if errors.Is(err, eventlog.ErrNoSession) {
			return acpsdk.LoadSessionResponse{}, reqError(codeNotFound, "no session %s is recorded", id)
		}
		return acpsdk.LoadSessionResponse{}, reqError(codeInternal, "%v", err)
	}
	if m := s.Moved(); m != nil {
		a.log.Warn("session resumed in another directory: its grants made there do not apply here",
			"session", id, "from", m.From, "to", dir, "rules", m.Rules, "approvals", m.Approvals)
	}
	ss := newSess(id, dir, s, rules, st.Close, nil)
	rp := newMapper(a, ss, true)
	for _, e := range events {
		rp.event(e)
	}
	rp.closeOpen("the turn ended before this call finished")
	// The client takes updates of a session it loads: the notices go now.
	a.tell(id, notices)
	a.mu.Lock()
	a.sessions[id] = ss
	a.mu.Unlock()
	a.log.Info("session loaded", "session", id, "cwd", dir, "events", len(events), "mcpServers", len(p.McpServers))
	for _, n := range notices {
		a.log.Warn(n, "session", id)
	}
	return acpsdk.LoadSessionResponse{Modes: modes(s.Mode())}, nil
}

// SetSessionMode changes the session's mode from its next turn on and
// records it as session.mode_changed by the user (Session.ChangeMode).
func (a *Agent) SetSessionMode(ctx context.Context, p acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	ss, err := a.session(p.SessionId)
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	m, err := permission.ParseMode(string(p.ModeId))
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, reqError(codeInvalidParams, "%v", err)
	}
	ss.mu.Lock()
	running := ss.running
	ss.mu.Unlock()
	if running || !ss.turn.TryLock() {
		return acpsdk.SetSessionModeResponse{}, reqError(codeInvalidParams, "the mode cannot change while a turn runs: cancel it or wait for it to end")
	}
	defer ss.turn.Unlock()
	from := orDefault(ss.s.Mode())
	if from == m {
		return acpsdk.SetSessionModeResponse{}, nil
	}
	// A session with no events yet records its mode in session.started.
	if err := ss.s.ChangeMode(ctx, m, event.ActorUser); err != nil {
		return acpsdk.SetSessionModeResponse{}, reqError(codeInternal, "%v", err)
	}
	a.log.Info("mode changed", "session", ss.id, "from", from, "to", m)
	a.notify(ss.id, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: p.ModeId}})
	return acpsdk.SetSessionModeResponse{}, nil
}

func (a *Agent) now() time.Time {
	if a.cfg.Session.Now != nil {
		return a.cfg.Session.Now()
	}
	return time.Now()
}

// SetSessionConfigOption: the agent has no config options.
func (a *Agent) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionSetConfigOption)
}

// ListSessions is not offered (sessionCapabilities.list is not advertised).
func (a *Agent) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionList)
}

// ResumeSession is not offered; session/load is.
func (a *Agent) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionResume)
}

// CloseSession is not offered (sessionCapabilities.close is not advertised).
func (a *Agent) CloseSession(context.Context, acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	return acpsdk.CloseSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionClose)
}

// Cancel: the SDK has cancelled the running prompt's context already; the
// turn ends with stopReason cancelled and a pending ask resolves to deny
// by the system.
func (a *Agent) Cancel(_ context.Context, p acpsdk.CancelNotification) error {
	a.log.Info("turn cancelled by the client", "session", p.SessionId)
	return nil
}

// Prompt runs one turn and maps its events to session/update.
func (a *Agent) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	ss, err := a.session(p.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	input, err := promptText(p.Prompt)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	ss.turn.Lock()
	defer ss.turn.Unlock()
	if ctx.Err() != nil { // replaced by a later prompt, or cancelled, while waiting
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	ss.mu.Lock()
	ss.running = true
	ss.calls = map[string]*callState{}
	notices := ss.notices
	ss.notices = nil
	ss.mu.Unlock()
	a.tell(ss.id, notices)
	defer func() {
		ss.mu.Lock()
		ss.running, ss.turnID = false, ""
		ss.mu.Unlock()
	}()
	m := newMapper(a, ss, false)
	var last event.TurnCompletedPayload
	for e, err := range ss.s.RunTurn(ctx, input) {
		if err != nil {
			m.closeOpen("the event log could not be written")
			return acpsdk.PromptResponse{}, reqError(codeInternal, "the turn stopped: %v", err)
		}
		if e.Type == event.TurnStarted {
			ss.mu.Lock()
			ss.turnID = e.TurnID
			ss.mu.Unlock()
		}
		if e.Type == event.TurnCompleted {
			_ = json.Unmarshal(e.Payload, &last)
		}
		m.event(e)
	}
	switch last.StopReason {
	case event.StopFinal:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	case event.StopMaxSteps:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonMaxTurnRequests}, nil
	case event.StopCancelled:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	msg := last.Error
	if msg == "" {
		msg = "no reason recorded"
	}
	return acpsdk.PromptResponse{}, &acpsdk.RequestError{Code: codeInternal, Message: "the turn ended with an error: " + msg,
		Data: map[string]any{"sessionId": ss.id, "stopReason": event.StopError}}
}

// promptText turns the prompt's content blocks into the user message:
// text, resource links as references, embedded text resources inline.
func promptText(blocks []acpsdk.ContentBlock) (string, error) {
	var b strings.Builder
	for i, c := range blocks {
		if i > 0 {
			b.WriteString("\n")
		}
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			fmt.Fprintf(&b, "[%s](%s)", c.ResourceLink.Name, c.ResourceLink.Uri)
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			fmt.Fprintf(&b, "<resource uri=%q>\n%s\n</resource>", r.Uri, r.Text)
		case c.Resource != nil:
			return "", reqError(codeInvalidParams, "prompt block %d: binary embedded resources are not supported; send text or a resource link", i)
		case c.Image != nil:
			return "", reqError(codeInvalidParams, "prompt block %d: images are not supported (promptCapabilities.image is false)", i)
		case c.Audio != nil:
			return "", reqError(codeInvalidParams, "prompt block %d: audio is not supported (promptCapabilities.audio is false)", i)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", reqError(codeInvalidParams, "the prompt is empty")
	}
	return b.String(), nil
}

// tell gives the person notices (an MCP server that did not start) as
// agent message text, one paragraph each.
func (a *Agent) tell(id string, notices []string) {
	for _, n := range notices {
		a.notify(id, acpsdk.UpdateAgentMessageText("custom-agent: "+n+"\n\n"))
	}
}

// notify sends a session/update; a failure (the client went away) is
// logged, the turn goes on and is recorded.
func (a *Agent) notify(id string, u acpsdk.SessionUpdate) {
	if err := a.conn.SessionUpdate(context.Background(), acpsdk.SessionNotification{SessionId: acpsdk.SessionId(id), Update: u}); err != nil {
		a.log.Warn("session/update not delivered", "session", id, "err", err)
	}
}
