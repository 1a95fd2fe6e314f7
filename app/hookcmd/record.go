package hookcmd

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/journal"
	"github.com/custom-agent/custom-agent/injection"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/secrets"
)

// The payloads the hook records, with the fields and names of
// docs/reference/event-schema.md. This package does not link the event
// package (the gate links no store); hook/ingest decodes and validates
// them with it, and its tests check that they agree.
type (
	toolCallRequested struct {
		ToolCallID string          `json:"toolCallId"`
		Tool       string          `json:"tool"`
		Args       json.RawMessage `json:"args"`
	}
	permissionRequested struct {
		ToolCallID        string          `json:"toolCallId"`
		Tool              string          `json:"tool"`
		Args              json.RawMessage `json:"args"`
		RiskAtDecision    risk.Level      `json:"riskAtDecision"`
		SourcedFrom       string          `json:"sourcedFrom"`
		SuggestedDecision string          `json:"suggestedDecision"`
		Reason            string          `json:"reason"`
		Findings          []risk.Finding  `json:"findings,omitempty"`
		Options           []string        `json:"options"`
		TimeoutMs         int64           `json:"timeoutMs"`
	}
	permissionResolved struct {
		ToolCallID     string         `json:"toolCallId"`
		Decision       string         `json:"decision"`
		Reason         string         `json:"reason"`
		Actor          string         `json:"actor"`
		RiskAtDecision risk.Level     `json:"riskAtDecision"`
		SourcedFrom    string         `json:"sourcedFrom"`
		Findings       []risk.Finding `json:"findings,omitempty"`
		Cwd            string         `json:"cwd,omitempty"`
	}
	toolCompleted struct {
		ToolCallID    string   `json:"toolCallId"`
		ExitCode      *int     `json:"exitCode,omitempty"`
		StdoutBytes   int64    `json:"stdoutBytes"`
		StderrBytes   int64    `json:"stderrBytes"`
		DurationMs    int64    `json:"durationMs"`
		StdoutPreview string   `json:"stdoutPreview"`
		StderrPreview string   `json:"stderrPreview,omitempty"`
		Artifacts     []string `json:"artifacts"`
		// Injection is what the scanner found in the output the agent's
		// model is given (event.Injection).
		Injection *injectionFound `json:"injection,omitempty"`
	}
	injectionFound struct {
		Classes   []string        `json:"classes"`
		Spans     []injectionSpan `json:"spans"`
		Truncated bool            `json:"truncated,omitempty"`
	}
	injectionSpan struct {
		Field string `json:"field"`
		Class string `json:"class"`
		Start int    `json:"start"`
		End   int    `json:"end"`
	}
)

// PreviewBytes bounds an output preview, as the executor's.
const PreviewBytes = 4096

func entry(typ string, p any) journal.Entry {
	b, err := json.Marshal(p)
	if err != nil {
		panic("hookcmd: encoding a payload: " + err.Error()) // plain fields: cannot fail
	}
	return journal.Entry{Type: typ, Payload: b}
}

// maskedArgs is the call's input as recorded: secrets masked.
func maskedArgs(in *hook.Input) (json.RawMessage, []byte) {
	canon, err := permission.CanonicalArgs(in.ToolInput)
	if err != nil {
		canon = []byte("{}")
	}
	return secrets.MaskJSON(canon), canon
}

// decision is what a before event records: the call, then the decision
// (permission.resolved by the policy), or the question put to the person
// by the agent's own prompt (permission.requested) when it was asked.
func decision(in *hook.Input, cwd string, d permission.Decision) []journal.Entry {
	args, canon := maskedArgs(in)
	id := hook.ToolCallID(in, canon)
	if d.RiskAtDecision == risk.Unknown {
		d.RiskAtDecision = risk.Execute
	}
	if d.SourcedFrom == "" {
		d.SourcedFrom = permission.FromDefault
	}
	es := []journal.Entry{entry("model.tool_call_requested", toolCallRequested{ToolCallID: id, Tool: in.ToolName, Args: args})}
	if d.Decision == permission.Ask {
		return append(es, entry("permission.requested", permissionRequested{
			ToolCallID: id, Tool: in.ToolName, Args: args, RiskAtDecision: d.RiskAtDecision,
			SourcedFrom: string(d.SourcedFrom), SuggestedDecision: "ask", Reason: d.Reason,
			Findings: d.Findings, Options: []string{"allow_once", "deny"},
		}))
	}
	v := "deny"
	if d.Decision == permission.Allow {
		v = "allow"
	}
	return append(es, entry("permission.resolved", permissionResolved{
		ToolCallID: id, Decision: v, Reason: d.Reason, Actor: "policy", RiskAtDecision: d.RiskAtDecision,
		SourcedFrom: string(d.SourcedFrom), Findings: d.Findings, Cwd: cwd,
	}))
}

// outcome is what an after event records: the call's completion, with
// its output's size and a masked preview. Claude Code reports a shell
// call's stdout and stderr; other tools' responses are previewed as the
// JSON they were sent as. An exit code is recorded when the response has
// one. The scanner reads the whole response, every string in it
// (jsonText), whatever its fields: the agent's model may be given any of
// them (an MCP tool's structured result, an "output" beside an empty
// stdout); stdout and stderr are only what the previews show.
func outcome(in *hook.Input) []journal.Entry {
	_, canon := maskedArgs(in)
	p := toolCompleted{ToolCallID: hook.ToolCallID(in, canon), Artifacts: []string{}}
	var fields map[string]any
	_ = json.Unmarshal(in.ToolResponse, &fields)
	stdout, okOut := fields["stdout"].(string)
	stderr, _ := fields["stderr"].(string)
	if !okOut { // Gemini CLI's llmContent, or the response whole
		if s, ok := fields["llmContent"].(string); ok {
			stdout = s
		} else if len(in.ToolResponse) > 0 {
			stdout = string(in.ToolResponse)
		}
		if e, ok := fields["error"]; ok && e != nil {
			b, _ := json.Marshal(e)
			stderr = string(b)
		}
	}
	for _, k := range []string{"exitCode", "exit_code", "returnCode"} {
		if f, ok := fields[k].(float64); ok && f == float64(int(f)) {
			c := int(f)
			p.ExitCode = &c
			break
		}
	}
	p.StdoutBytes, p.StderrBytes = int64(len(stdout)), int64(len(stderr))
	p.StdoutPreview, p.StderrPreview = preview(stdout), preview(stderr)
	// A response is read by the model for its strings (a file's content
	// with real line breaks, not "\n"), all of them.
	seen := jsonText(in.ToolResponse)
	p.Injection = scanOutput(seen, p.StdoutPreview, p.StderrPreview)
	return []journal.Entry{entry("tool.completed", p)}
}

// jsonText is the string values of a JSON document, decoded, one per
// line, in document order (object keys sorted, as encoding/json decodes
// them); a document that does not decode is its own text. Keys are not
// included: the agent builds them, not the tool.
func jsonText(doc []byte) string {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return string(doc)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte('\n')
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(v[k])
			}
		}
	}
	walk(v)
	return b.String()
}

// scanOutput scans what the agent's model is given of the call, the
// whole response's text (unlike custom-agent's own context, the agent's is
// not cut to a preview), and returns the finding as tool.completed
// records it, or nil. The classes are those found in the whole output; the spans locate
// what of it lies in the recorded previews (masked and cut, they are
// scanned themselves), so a finding past the preview is a class without a
// span.
func scanOutput(text, outPreview, errPreview string) *injectionFound {
	whole := injection.ScanString(text)
	var found injectionFound
	for _, c := range injection.AllClasses() {
		if whole.Has(c) {
			found.Classes = append(found.Classes, string(c))
		}
	}
	if len(found.Classes) == 0 {
		return nil
	}
	found.Spans = []injectionSpan{}
	found.Truncated = whole.Truncated
	for _, f := range [...]struct{ field, text string }{{"stdoutPreview", outPreview}, {"stderrPreview", errPreview}} {
		for _, sp := range injection.ScanString(f.text).Spans {
			if !slices.Contains(found.Classes, string(sp.Class)) {
				// Found in the preview only (the cut or the masking made
				// it): the class list is the output's.
				continue
			}
			found.Spans = append(found.Spans, injectionSpan{Field: f.field, Class: string(sp.Class), Start: sp.Start, End: sp.End})
		}
	}
	return &found
}

// preview is the start of s, secrets masked (before it is cut, so that a
// secret across the cut is masked too), cut at a rune boundary.
func preview(s string) string {
	s = secrets.Mask(s)
	if len(s) > PreviewBytes {
		cut := PreviewBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "… (" + strconv.Itoa(len(s)-cut) + " more bytes)"
	}
	return s
}
