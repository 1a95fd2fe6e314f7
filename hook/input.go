package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxInput bounds the bytes of one event. A Write of a larger file is
// refused rather than judged on a part of it.
const MaxInput = 4 << 20

// Errors a caller may branch on; each is wrapped with what was wrong.
var (
	ErrEmpty        = errors.New("no hook event on standard input")
	ErrTooLarge     = fmt.Errorf("hook event larger than %d bytes", MaxInput)
	ErrMalformed    = errors.New("malformed hook event")
	ErrUnknownEvent = errors.New("unknown hook event")
)

// Input is one hook event as the agent sent it, checked. Nothing in it is
// trusted: it comes from the agent a model drives.
type Input struct {
	Agent Agent
	// Event is hook_event_name; Stage what it means here.
	Event string
	Stage Stage
	// SessionID is the agent's session_id as sent (possibly empty).
	SessionID string
	// ToolName is tool_name; ToolInput is tool_input decoded as
	// encoding/json decodes into any, never nil.
	ToolName  string
	ToolInput map[string]any
	// ToolUseID is Claude Code's tool_use_id ("" from Gemini CLI).
	ToolUseID string
	// PermissionMode is Claude Code's permission_mode ("" when absent).
	PermissionMode string
	// Cwd is the event's cwd: absolute and clean.
	Cwd string
	// ToolResponse is the after event's tool_response, as sent.
	ToolResponse json.RawMessage
}

// wire is the JSON of both agents' tool events (Gemini CLI sends a subset
// of Claude Code's fields, with the same names).
type wire struct {
	SessionID      *string         `json:"session_id"`
	HookEventName  *string         `json:"hook_event_name"`
	ToolName       *string         `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      *string         `json:"tool_use_id"`
	PermissionMode *string         `json:"permission_mode"`
	Cwd            *string         `json:"cwd"`
	ToolResponse   json.RawMessage `json:"tool_response"`
}

// Parse reads one event of agent a from r: at most MaxInput bytes of
// valid UTF-8 holding exactly one JSON object, whose hook_event_name is a
// tool event of a, with a tool_name, an object tool_input and an absolute
// cwd. An error wraps ErrEmpty, ErrTooLarge, ErrMalformed or
// ErrUnknownEvent.
func Parse(a Agent, r io.Reader) (*Input, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the hook event: %w", err)
	}
	if len(b) > MaxInput {
		return nil, ErrTooLarge
	}
	return parse(a, b)
}

// MaxAfterInput bounds the bytes of an after event (PostToolUse,
// AfterTool) that is parsed whole. Such an event is not refused past
// MaxInput: its tool already ran and its output reached the agent's
// model, so refusing it would only lose what the output holds.
const MaxAfterInput = 64 << 20

// ParseLarge parses b, an event of agent a larger than MaxInput (up to
// MaxAfterInput; longer is cut there): only an after event is taken, a
// before event is ErrTooLarge (a Write of a larger file is refused rather
// than judged on a part of it). An error wraps ErrTooLarge, ErrEmpty,
// ErrMalformed or ErrUnknownEvent; Peek then tells what can be read of
// the event.
func ParseLarge(a Agent, b []byte) (*Input, error) {
	if len(b) > MaxAfterInput {
		return nil, fmt.Errorf("%w: an after event is parsed up to %d bytes", ErrTooLarge, MaxAfterInput)
	}
	in, err := parse(a, b)
	if err != nil {
		return nil, err
	}
	if in.Stage != After {
		return nil, ErrTooLarge
	}
	return in, nil
}

// Head is what Peek reads of an event that does not parse whole.
type Head struct {
	// Stage and Event are hook_event_name's, ok when it is one of the
	// agent's; SessionID and ToolUseID are as sent ("" when absent or
	// not read).
	Event     string
	Stage     Stage
	ok        bool
	SessionID string
	ToolUseID string
	// HasSession says that a session_id was read.
	HasSession bool
}

// Known reports whether hook_event_name was read and is one of the
// agent's events.
func (h Head) Known() bool { return h.ok }

// IsAfter reports whether the head is of an after event.
func (h Head) IsAfter() bool { return h.ok && h.Stage == After }

// Peek reads the top-level fields of the event b (possibly cut, or too
// large to parse whole) up to the first value that does not decode: the
// small fields (session_id, hook_event_name, tool_use_id) come before the
// tool's response in both agents' events. It is used only to mark a
// session whose output could not be scanned, never to judge a call.
// Quick stops as soon as hook_event_name and session_id were read.
func Peek(a Agent, b []byte, quick bool) Head {
	var h Head
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h
	}
	for dec.More() {
		if quick && h.ok && h.HasSession {
			return h
		}
		t, err := dec.Token()
		if err != nil {
			return h
		}
		key, _ := t.(string)
		var dst *string
		switch key {
		case "session_id":
			dst = &h.SessionID
		case "hook_event_name":
			dst = &h.Event
		case "tool_use_id":
			dst = &h.ToolUseID
		}
		if dst == nil {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return h
			}
			continue
		}
		var v *string
		if dec.Decode(&v) != nil {
			return h
		}
		*dst = deref(v)
		switch key {
		case "session_id":
			h.HasSession = v != nil
		case "hook_event_name":
			h.Stage, h.ok = StageOf(a, h.Event)
		}
	}
	return h
}

// parse checks and decodes the whole event b.
func parse(a Agent, b []byte) (*Input, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, ErrEmpty
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrMalformed)
	}
	if bytes.TrimSpace(b)[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var w wire
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrMalformed)
	}
	if w.HookEventName == nil {
		return nil, fmt.Errorf("%w: no hook_event_name", ErrMalformed)
	}
	in := &Input{Agent: a, Event: *w.HookEventName}
	var ok bool
	if in.Stage, ok = StageOf(a, in.Event); !ok {
		before, after := a.EventNames()
		return nil, fmt.Errorf("%w %q for %s (this hook answers %s and %s)", ErrUnknownEvent, in.Event, a, before, after)
	}
	if w.ToolName == nil || *w.ToolName == "" {
		return nil, fmt.Errorf("%w: no tool_name", ErrMalformed)
	}
	in.ToolName = *w.ToolName
	var err error
	if in.ToolInput, err = object(w.ToolInput); err != nil {
		return nil, fmt.Errorf("%w: tool_input: %v", ErrMalformed, err)
	}
	if w.Cwd == nil || !filepath.IsAbs(*w.Cwd) || strings.ContainsRune(*w.Cwd, 0) {
		return nil, fmt.Errorf("%w: cwd is missing or not an absolute path", ErrMalformed)
	}
	in.Cwd = filepath.Clean(*w.Cwd)
	in.SessionID = deref(w.SessionID)
	in.ToolUseID = deref(w.ToolUseID)
	in.PermissionMode = deref(w.PermissionMode)
	if in.Stage == After && len(w.ToolResponse) > 0 && !bytes.Equal(w.ToolResponse, []byte("null")) {
		in.ToolResponse = w.ToolResponse
	}
	return in, nil
}

// object decodes raw as a JSON object; absent is an error.
func object(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return nil, errors.New("missing")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
