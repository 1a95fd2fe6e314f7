package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
)

// callState is what the adapter knows of one tool call.
type callState struct {
	sandbox string // the words naming the sandbox it runs in, once started
	id      string
	tool    string
	title   string
	kind    acpsdk.ToolKind
	args    json.RawMessage // masked, as recorded
	cwd     string
	paths   []string // absolute paths the call names
	// before holds the edited files' contents when the tool started (nil
	// entry: the file did not exist); read only once the gate allowed the
	// call.
	before  map[string]*string
	running bool // in_progress was sent
	final   bool
}

func newCallState(cwd, id, tool string, args json.RawMessage) *callState {
	c := &callState{id: id, tool: tool, args: args, cwd: cwd}
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	str := func(k string) string { s, _ := m[k].(string); return s }
	c.kind = acpsdk.ToolKindOther
	switch tool {
	case "read_file":
		c.kind, c.title = acpsdk.ToolKindRead, "Read "+str("path")
		c.addPath(str("path"))
	case "list_files":
		dir := str("path")
		if dir == "" {
			dir = "."
		}
		c.kind, c.title = acpsdk.ToolKindRead, "List "+dir
		if g := str("glob"); g != "" {
			c.title += " (" + g + ")"
		}
		c.addPath(str("path"))
	case "search_text":
		c.kind, c.title = acpsdk.ToolKindSearch, "Search "+clip(str("pattern"), 60)
		if p := str("path"); p != "" {
			c.title += " in " + p
			c.addPath(p)
		}
	case "get_diagnostics":
		c.kind, c.title = acpsdk.ToolKindExecute, "Diagnostics"
		if p := str("path"); p != "" {
			c.title += " for " + p
			c.addPath(p)
		}
	case "write_file":
		c.kind, c.title = acpsdk.ToolKindEdit, "Edit "+str("path")
		c.addPath(str("path"))
	case "apply_patch":
		c.kind = acpsdk.ToolKindEdit
		var names []string
		deletes := false
		for _, pp := range permission.PatchPaths(str("patch")) {
			if pp.Path == "" || pp.Path == "/dev/null" {
				continue
			}
			if pp.Delete && !pp.Renamed {
				deletes = true
			}
			if !contains(names, pp.Path) {
				names = append(names, pp.Path)
				c.addPath(pp.Path)
			}
		}
		verb := "Edit "
		if deletes {
			c.kind, verb = acpsdk.ToolKindDelete, "Delete in "
		}
		if len(names) == 0 {
			c.title = "Apply a patch"
		} else {
			c.title = verb + strings.Join(names, ", ")
		}
	case "shell":
		c.kind, c.title = acpsdk.ToolKindExecute, "Run "+clip(firstLine(str("command")), 80)
	case "run_tests":
		c.kind, c.title = acpsdk.ToolKindExecute, "Run tests"
		if p := str("path"); p != "" {
			c.title += " in " + p
			c.addPath(p)
		}
	case "http_get":
		c.kind, c.title = acpsdk.ToolKindFetch, "GET "+clip(str("url"), 100)
	case "http_post":
		c.kind, c.title = acpsdk.ToolKindFetch, "POST "+clip(str("url"), 100)
	default:
		c.title = "Call " + tool
	}
	return c
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (c *callState) addPath(p string) {
	if p == "" {
		return
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.cwd, p)
	}
	p = filepath.Clean(p)
	if !contains(c.paths, p) {
		c.paths = append(c.paths, p)
	}
}

func (c *callState) locations() []acpsdk.ToolCallLocation {
	var out []acpsdk.ToolCallLocation
	for _, p := range c.paths {
		out = append(out, acpsdk.ToolCallLocation{Path: p})
	}
	return out
}

func (c *callState) edits() bool {
	return c.kind == acpsdk.ToolKindEdit || c.kind == acpsdk.ToolKindDelete
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// rawInput is the masked args as a JSON value.
func rawInput(args json.RawMessage) any {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return string(args)
	}
	return v
}

// mapper turns a session's events into session/update notifications. In
// replay (session/load) it never reads files: the diffs of the past are
// not on disk any more.
type mapper struct {
	a      *Agent
	ss     *sess
	replay bool
	calls  map[string]*callState
	order  []string
}

func newMapper(a *Agent, ss *sess, replay bool) *mapper {
	return &mapper{a: a, ss: ss, replay: replay, calls: map[string]*callState{}}
}

func (m *mapper) send(u acpsdk.SessionUpdate) { m.a.notify(m.ss.id, u) }

func (m *mapper) event(e event.Event) {
	p, err := e.Decode()
	if err != nil {
		m.a.log.Warn("event not shown", "session", m.ss.id, "seq", e.Seq, "err", err)
		return
	}
	switch p := p.(type) {
	case *event.UserMessagePayload:
		if m.replay {
			m.send(acpsdk.UpdateUserMessageText(p.Content))
		}
	case *event.ModelDeltaPayload:
		if p.Text != "" {
			m.send(acpsdk.UpdateAgentMessageText(p.Text))
		}
	case *event.ModelToolCallRequestedPayload:
		c := newCallState(m.ss.cwd, p.ToolCallID, p.Tool, p.Args)
		m.calls[c.id] = c
		m.order = append(m.order, c.id)
		if !m.replay {
			m.ss.mu.Lock()
			m.ss.calls[c.id] = c
			m.ss.mu.Unlock()
		}
		m.send(acpsdk.SessionUpdate{ToolCall: &acpsdk.SessionUpdateToolCall{
			ToolCallId: acpsdk.ToolCallId(c.id), Title: c.title, Kind: c.kind,
			Status: acpsdk.ToolCallStatusPending, Locations: c.locations(), RawInput: rawInput(c.args),
		}})
	case *event.PermissionResolvedPayload:
		c := m.calls[p.ToolCallID]
		if c == nil {
			return
		}
		if p.Decision == "allow" {
			return // tool.started, in the same commit, shows it running
		}
		by := map[event.Actor]string{event.ActorUser: "you", event.ActorPolicy: "the policy", event.ActorSystem: "the system", event.ActorAuto: "an automatic answer"}[p.Actor]
		text := fmt.Sprintf("Denied by %s (risk %s): %s", by, p.RiskAtDecision, p.Reason)
		m.finish(c, acpsdk.ToolCallStatusFailed, []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))},
			map[string]any{"decision": "deny", "actor": string(p.Actor), "reason": p.Reason})
	case *event.ToolStartedPayload:
		if c := m.calls[p.ToolCallID]; c != nil {
			c.sandbox = p.Sandbox.Words()
			m.start(c) // before the tool runs: it shares the allow's commit
		}
	case *event.ToolCompletedPayload:
		c := m.calls[p.ToolCallID]
		if c == nil {
			return
		}
		var content []acpsdk.ToolCallContent
		if c.edits() && !m.replay {
			content = append(content, m.diffs(c)...)
		}
		if text := outputText(p); text != "" {
			content = append(content, acpsdk.ToolContent(acpsdk.TextBlock(text)))
		}
		raw := map[string]any{"stdoutBytes": p.StdoutBytes, "stderrBytes": p.StderrBytes}
		if p.ExitCode != nil {
			raw["exitCode"] = *p.ExitCode
		}
		if len(p.Summary) > 0 {
			raw["summary"] = rawInput(p.Summary)
		}
		if c.sandbox != "" {
			raw["sandbox"] = c.sandbox
		}
		if p.SandboxHint != "" {
			raw["sandboxHint"] = p.SandboxHint
		}
		m.finish(c, acpsdk.ToolCallStatusCompleted, content, raw)
	case *event.ToolFailedPayload:
		c := m.calls[p.ToolCallID]
		if c == nil {
			return
		}
		m.finish(c, acpsdk.ToolCallStatusFailed, []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("Failed (" + p.Stage + "): " + p.Error))},
			map[string]any{"stage": p.Stage, "error": p.Error})
	case *event.TurnCompletedPayload:
		reason := "the turn ended before this call ran"
		if p.StopReason == event.StopCancelled {
			reason = "the turn was cancelled before this call ran"
		}
		m.closeOpen(reason)
	}
}

// start shows the call running and, for an edit, reads the files it
// names as they are before it runs (not in replay: the past is not on
// disk). Once per call.
func (m *mapper) start(c *callState) {
	if c.running || c.final {
		return
	}
	c.running = true
	if c.edits() && !m.replay {
		c.before = map[string]*string{}
		for _, path := range c.paths {
			c.before[path] = readText(path)
		}
	}
	st := acpsdk.ToolCallStatusInProgress
	m.send(acpsdk.SessionUpdate{ToolCallUpdate: &acpsdk.SessionToolCallUpdate{ToolCallId: acpsdk.ToolCallId(c.id), Status: &st}})
}

func (m *mapper) finish(c *callState, st acpsdk.ToolCallStatus, content []acpsdk.ToolCallContent, raw any) {
	if c.final {
		return
	}
	c.final = true
	m.send(acpsdk.SessionUpdate{ToolCallUpdate: &acpsdk.SessionToolCallUpdate{
		ToolCallId: acpsdk.ToolCallId(c.id), Status: &st, Content: content, RawOutput: raw,
	}})
}

// closeOpen gives every tool call without a final status its final update:
// failed, with why.
func (m *mapper) closeOpen(reason string) {
	for _, id := range m.order {
		c := m.calls[id]
		if !c.final {
			m.finish(c, acpsdk.ToolCallStatusFailed, []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(reason))}, nil)
		}
	}
}

// diffs are the edits a completed call made, as diff content.
func (m *mapper) diffs(c *callState) []acpsdk.ToolCallContent {
	var out []acpsdk.ToolCallContent
	paths := append([]string(nil), c.paths...)
	sort.Strings(paths)
	for _, path := range paths {
		old, after := c.before[path], readText(path)
		if old != nil && after != nil && *old == *after {
			continue
		}
		d := &acpsdk.ToolCallContentDiff{Path: path, OldText: old}
		if after != nil {
			d.NewText = *after
		}
		if old == nil && after == nil {
			continue
		}
		out = append(out, acpsdk.ToolCallContent{Diff: d})
	}
	return out
}

// maxDiffText is the largest file shown as a diff.
const maxDiffText = 512 << 10

// readText returns a file's text, or nil when it does not exist, is too
// large or is not text.
func readText(path string) *string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxDiffText {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil || !utf8.Valid(b) {
		return nil
	}
	s := string(b)
	return &s
}

// outputText is a completed call's output as the person reads it: the
// masked previews and the exit code.
func outputText(p *event.ToolCompletedPayload) string {
	var b strings.Builder
	b.WriteString(p.StdoutPreview)
	if p.StdoutTail != nil {
		fmt.Fprintf(&b, "\n… (%d bytes omitted) …\n%s", p.StdoutTail.Omitted, p.StdoutTail.Text)
	}
	if p.StderrPreview != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("stderr:\n" + p.StderrPreview)
	}
	if p.ExitCode != nil && *p.ExitCode != 0 {
		fmt.Fprintf(&b, "\n(exit code %d)", *p.ExitCode)
	}
	return b.String()
}
