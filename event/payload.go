package event

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/secrets"
)

// Type names an event type. The set is closed: Seal refuses unknown types.
type Type string

// The event types of DESIGN.md §3.
const (
	SessionStarted         Type = "session.started"
	TurnStarted            Type = "turn.started"
	UserMessage            Type = "user.message"
	ContextBuilt           Type = "context.built"
	ModelDelta             Type = "model.delta"
	ModelToolCallRequested Type = "model.tool_call_requested"
	PermissionRequested    Type = "permission.requested"
	PermissionResolved     Type = "permission.resolved"
	ToolStarted            Type = "tool.started"
	ToolCompleted          Type = "tool.completed"
	ToolFailed             Type = "tool.failed"
	TurnCompleted          Type = "turn.completed"
	PolicyChanged          Type = "policy.changed"
	// ToolDefinitionChanged: an MCP tool's definition is not the one
	// pinned when it was first let run (mcp pinning).
	ToolDefinitionChanged Type = "tool.definition_changed"
	// ModeChanged: the session's mode changed between turns (/mode,
	// ACP session/set_mode, run --mode on a resumed session).
	ModeChanged Type = "session.mode_changed"
	// SkillActivated: a use_skill call was allowed and ran; from now on
	// the skill's allowed tools are the engine's AllowedTools input.
	SkillActivated Type = "skill.activated"
	// SkillEnded: the active skill no longer narrows the tools (another
	// skill was activated, the turn or session ended, the user ended it).
	SkillEnded Type = "skill.ended"
	// PolicySnapshot: the rules the engine is given, whole, recorded
	// when a session's turn starts and whenever they change, before the
	// next decision under them (package replay).
	PolicySnapshot Type = "policy.snapshot"
	// ModelReplyFlagged: the model's own reply text (its model.delta
	// events of one model call) holds what the injection scanner flags,
	// such as an echoed spoofed closer or a data-carrying image. A flag
	// only: it taints nothing (docs/injection.md says why).
	ModelReplyFlagged Type = "model.reply_flagged"
)

// Types lists every event type in the order a turn usually emits them.
var Types = []Type{
	SessionStarted, TurnStarted, UserMessage, ContextBuilt, ModelDelta,
	ModelToolCallRequested, PermissionRequested, PermissionResolved,
	ToolStarted, ToolCompleted, ToolFailed, TurnCompleted, PolicyChanged,
}

// MCPTypes lists the event types only MCP servers give rise to: a session
// with built-in tools alone never records them. Every type is in Types or
// here.
var MCPTypes = []Type{ToolDefinitionChanged}

// SessionTypes lists the event types a session records only when its mode
// changes or a skill is used, and the policy snapshot only a session (not
// an executor alone) records. Every type
// is in Types, MCPTypes or here.
var SessionTypes = []Type{ModeChanged, SkillActivated, SkillEnded, PolicySnapshot, ModelReplyFlagged}

// Known reports whether t is one of Types, MCPTypes or SessionTypes.
func (t Type) Known() bool {
	_, ok := newPayload[t]
	return ok
}

// Payload is the typed body of an event.
type Payload interface {
	EventType() Type
	// Validate reports a missing required field; a payload that fails it
	// is a programmer error and never reaches the log.
	Validate() error
}

// Actor says who caused an event: the user, the model, the policy (a
// decision made without a person), a tool, or the system (timeouts,
// restarts, cancellation, bookkeeping).
type Actor string

const (
	ActorUser   Actor = "user"
	ActorModel  Actor = "model"
	ActorPolicy Actor = "policy"
	ActorTool   Actor = "tool"
	ActorSystem Actor = "system"
	// ActorAuto answered a question automatically, on a standing
	// instruction the person gave before it was asked (demo --yes): no
	// person saw it. Its approvals are never reused as prior approvals.
	ActorAuto Actor = "auto"
)

type (
	// SessionStartedPayload opens a session.
	SessionStartedPayload struct {
		Cwd   string `json:"cwd"`
		Mode  string `json:"mode"`
		Model string `json:"model"`
		// Sandbox is "off" when the person turned the sandbox off, or
		// "unavailable: why" when it cannot be enforced here (calls that
		// start processes are then asked); empty when it is on.
		Sandbox string `json:"sandbox,omitempty"`
		// SessionSource names the agent whose hook decisions the session
		// records (claude-code, gemini-cli); empty for custom-agent's own
		// sessions.
		SessionSource string `json:"sessionSource,omitempty"`
	}
	// TurnStartedPayload opens a turn and says where and how it runs: a
	// session may be resumed in another directory, with another model or
	// mode. Logs written before these fields existed have "{}".
	TurnStartedPayload struct {
		Cwd   string `json:"cwd,omitempty"`
		Model string `json:"model,omitempty"`
		Mode  string `json:"mode,omitempty"`
		// CwdChangedFrom is set on the first turn of a session resumed in
		// another directory than its last turn ran in: that directory. The
		// session rules and approvals made there do not hold here.
		CwdChangedFrom string `json:"cwdChangedFrom,omitempty"`
	}
	// UserMessagePayload is what the person typed.
	UserMessagePayload struct {
		Content string `json:"content"`
		// Includes are the MCP resources the person included with the
		// message (mcp://SERVER/URI, from run --include or @server:uri),
		// in order. The n-th (from 1) is read right after this event as
		// the call IncludeCallID(turnId, n), through the gate; its result
		// is attached to this message in the model's context.
		Includes []string `json:"includes,omitempty"`
	}
	// ContextBuiltPayload records what the ContextBuilder sent the model.
	ContextBuiltPayload struct {
		MessageCount        int `json:"messageCount"`
		ToolResultsIncluded int `json:"toolResultsIncluded"`
	}
	// ModelDeltaPayload is streamed model text (deltas may be coalesced).
	ModelDeltaPayload struct {
		Text string `json:"text"`
	}
	// ModelToolCallRequestedPayload is a tool call whose streamed arguments
	// are complete.
	ModelToolCallRequestedPayload struct {
		ToolCallID string          `json:"toolCallId"`
		Tool       string          `json:"tool"`
		Args       json.RawMessage `json:"args"`
		// ModelID is the id the model gave the call when the session
		// recorded it under another (ToolCallID): the model repeated an
		// id of the session, and ids are unique in a session.
		ModelID string `json:"modelId,omitempty"`
	}
	// PermissionRequestedPayload is an ask put to a person.
	PermissionRequestedPayload struct {
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
		// SessionRule and ProjectRule are the rules the allow_session and
		// allow_project answers would make, as shown to the person.
		SessionRule json.RawMessage `json:"sessionRule,omitempty"`
		ProjectRule json.RawMessage `json:"projectRule,omitempty"`
		// NoRuleReason says why neither rule is offered, when a person
		// should be told (the arguments hold a secret).
		NoRuleReason string `json:"noRuleReason,omitempty"`
		// Facts are what the question was decided from (package replay).
		Facts *DecisionFacts `json:"facts,omitempty"`
	}
	// PermissionResolvedPayload is the final decision for a tool call.
	PermissionResolvedPayload struct {
		ToolCallID     string         `json:"toolCallId"`
		Decision       string         `json:"decision"`
		Reason         string         `json:"reason"`
		Actor          Actor          `json:"actor"`
		RiskAtDecision risk.Level     `json:"riskAtDecision"`
		SourcedFrom    string         `json:"sourcedFrom"`
		Option         string         `json:"option,omitempty"`
		Findings       []risk.Finding `json:"findings,omitempty"`
		// Cwd is the directory the decision was made in: an approval
		// holds as a prior approval there only (DESIGN.md §6).
		Cwd string `json:"cwd,omitempty"`
		// Facts are what the decision was made from, when no question
		// was asked (an asked call has them on permission.requested).
		Facts *DecisionFacts `json:"facts,omitempty"`
		// UI names the approval UI a person answered in ("terminal",
		// "stdin", "acp", "web" …); empty for an answer nobody gave in
		// a UI (policy, timeout, cancellation, restart).
		UI string `json:"ui,omitempty"`
	}
	// ToolStartedPayload marks the moment a tool began to run.
	ToolStartedPayload struct {
		ToolCallID string          `json:"toolCallId"`
		Tool       string          `json:"tool"`
		Args       json.RawMessage `json:"args"`
		// Sandbox is set on a tool that starts processes: the profile
		// they run under, or why they run without one.
		Sandbox *SandboxInfo `json:"sandbox,omitempty"`
	}
	// SandboxInfo names what confines a call's processes. Words says it
	// in a few words.
	SandboxInfo struct {
		// Profile is "read-only" or "workspace"; "none" when the
		// processes run unconfined, and Why says why.
		Profile string `json:"profile"`
		Network bool   `json:"network,omitempty"`
		// Digest identifies the profile's whole content (sha256:…).
		Digest string `json:"digest,omitempty"`
		Why    string `json:"why,omitempty"`
	}
	// ToolCompletedPayload is a tool that ran to the end (a non-zero exit
	// code is still a completion).
	ToolCompletedPayload struct {
		ToolCallID    string `json:"toolCallId"`
		ExitCode      *int   `json:"exitCode,omitempty"`
		StdoutBytes   int64  `json:"stdoutBytes"`
		StderrBytes   int64  `json:"stderrBytes"`
		DurationMs    int64  `json:"durationMs"`
		StdoutPreview string `json:"stdoutPreview"`
		StderrPreview string `json:"stderrPreview,omitempty"`
		// StdoutTail and StderrTail are the end of a stream longer than
		// its preview (at most ~6 KiB, secrets masked): what a long output
		// ends with reaches the model too. Nil when the preview holds the
		// whole stream, and in logs written before tails existed.
		StdoutTail *OutputTail `json:"stdoutTail,omitempty"`
		StderrTail *OutputTail `json:"stderrTail,omitempty"`
		Artifacts  []Artifact  `json:"artifacts"`
		// Truncated is set when part of the output is not in the artifact
		// store: how many bytes of each stream were dropped (past the
		// cap on stored output, or all of a stream the store failed to
		// keep). Nil when everything was kept.
		Truncated *StreamBytes `json:"truncated,omitempty"`
		// Summary is the tool's short structured result, e.g.
		// {"runner":"go","passed":12,"failed":1} for run_tests.
		Summary json.RawMessage `json:"summary,omitempty"`
		// SandboxHint tells the model that a failure may be the
		// sandbox's denial (EACCES, EROFS, no network), and what the
		// profile allows.
		SandboxHint string     `json:"sandboxHint,omitempty"`
		Injection   *Injection `json:"injection,omitempty"`
	}
	// ToolFailedPayload is a call that could not be resolved, validated or
	// run.
	ToolFailedPayload struct {
		ToolCallID string `json:"toolCallId"`
		Stage      string `json:"stage"`
		Error      string `json:"error"`
		DurationMs int64  `json:"durationMs"`
		// Injection is what the scanner found in Error (which may hold
		// the tool's stderr), when it found something.
		Injection *Injection `json:"injection,omitempty"`
	}
	// TurnCompletedPayload closes a turn.
	TurnCompletedPayload struct {
		StopReason string `json:"stopReason"`
		Error      string `json:"error,omitempty"`
	}
	// PolicyChangedPayload records a rule added or removed.
	PolicyChangedPayload struct {
		Level string          `json:"level"`
		Op    string          `json:"op"`
		Rule  json.RawMessage `json:"rule"`
		// Cwd is the directory the rule was made in: a session rule is
		// restored on resume only there (DESIGN.md §6).
		Cwd string `json:"cwd,omitempty"`
	}
	// ToolDefinitionChangedPayload records that an MCP server offers a
	// tool under a pinned name with another definition than the one
	// approved. It is recorded once per change, before the call that
	// meets it is decided (and asked).
	ToolDefinitionChangedPayload struct {
		// ToolCallID is the call that met the change.
		ToolCallID string `json:"toolCallId,omitempty"`
		Server     string `json:"server"`
		// Tool is the tool's name on its server; FullName is what the
		// model calls it by (mcp__server__tool).
		Tool     string `json:"tool"`
		FullName string `json:"fullName"`
		OldHash  string `json:"oldHash"`
		NewHash  string `json:"newHash"`
	}
	// ModeChangedPayload records a change of the session's mode. It is
	// recorded between turns; the next call is decided in the new mode.
	ModeChangedPayload struct {
		From string `json:"from"`
		To   string `json:"to"`
		// By says who changed it: user (a slash command, the editor,
		// a flag) or system.
		By Actor `json:"by"`
	}
	// SkillActivatedPayload records that a skill became active.
	SkillActivatedPayload struct {
		// ToolCallID is the use_skill call that activated it.
		ToolCallID string `json:"toolCallId"`
		Name       string `json:"name"`
		// Source is where the skill was found: "project" or "user".
		Source string `json:"source"`
		// Path is the skill's SKILL.md.
		Path string `json:"path"`
		// AllowedTools is what the engine's AllowedTools input is from the
		// next call on: the skill's allowed-tools in our tool names,
		// narrowed by the skill active before it, if any. ["*"]: the
		// skill has no allowed-tools and narrows nothing. Empty: no tool
		// may be called (the skill lists none, or nothing is left).
		AllowedTools []string `json:"allowedTools"`
		// Digest is the SHA-256 of the SKILL.md that was read.
		Digest string `json:"digest"`
	}
	// SkillEndedPayload records that the active skill ended.
	SkillEndedPayload struct {
		Name   string `json:"name"`
		Reason string `json:"reason"`
	}
)

// Artifact names a blob in the artifact store holding a tool's whole output.
type Artifact struct {
	Name   string `json:"name"` // "stdout", "stderr", …
	Digest string `json:"digest"`
	Bytes  int64  `json:"bytes"` // bytes stored
	// Truncated is set when the stream was longer than the store keeps;
	// the event's byte count says how long it was.
	Truncated bool `json:"truncated,omitempty"`
	// InEvent is set when the stream is the event's own preview, byte for
	// byte (it fitted, was valid UTF-8 and had nothing masked): the
	// artifact store holds no copy, and Digest is the preview's SHA-256.
	InEvent bool `json:"inEvent,omitempty"`
}

// InEventOutput returns the output an artifact marked InEvent names (its
// stream's preview), checked against the artifact's digest.
func (p *ToolCompletedPayload) InEventOutput(a Artifact) (string, error) {
	if !a.InEvent {
		return "", fmt.Errorf("artifact %q is not kept in its event", a.Name)
	}
	text := p.StdoutPreview
	if a.Name == "stderr" {
		text = p.StderrPreview
	}
	if err := CheckInEvent(text, a.Digest); err != nil {
		return "", err
	}
	return text, nil
}

// CheckInEvent reports whether an output an event holds whole (an
// Artifact with InEvent) hashes to the digest the event names for it.
func CheckInEvent(text, digest string) error {
	sum := sha256.Sum256([]byte(text))
	if digest != "sha256:"+hex.EncodeToString(sum[:]) {
		return fmt.Errorf("the output the event holds does not hash to its digest %s", digest)
	}
	return nil
}

// OutputTail is the end of an output stream.
type OutputTail struct {
	// From is the byte offset in the stream where Text begins.
	From int64 `json:"from"`
	// Omitted is how many bytes lie between the preview and Text (the
	// preview ends at From-Omitted); 0 when the two together hold the whole
	// stream.
	Omitted int64  `json:"omitted"`
	Text    string `json:"text"`
}

// StreamBytes counts bytes per output stream.
type StreamBytes struct {
	Stdout int64 `json:"stdout,omitempty"`
	Stderr int64 `json:"stderr,omitempty"`
}

// Injection is what the prompt-injection scanner (package injection)
// found in the text of a tool result that the model is shown.
type Injection struct {
	// Classes are the classes found (injection.Class ids), in the
	// scanner's order, each once.
	Classes []string `json:"classes"`
	// Spans locate every finding: the payload field that holds it
	// (stdoutPreview, stdoutTail, stderrPreview, stderrTail, summary,
	// error) and its byte range in that field's text.
	Spans []InjectionSpan `json:"spans"`
	// Truncated is set when the scanner found more than it keeps.
	Truncated bool `json:"truncated,omitempty"`
}

// InjectionFields returns the texts of a completed call the model is
// shown, by the field names Injection spans use.
func (p ToolCompletedPayload) InjectionFields() map[string]string {
	f := map[string]string{"stdoutPreview": p.StdoutPreview, "stderrPreview": p.StderrPreview, "summary": string(p.Summary)}
	if p.StdoutTail != nil {
		f["stdoutTail"] = p.StdoutTail.Text
	}
	if p.StderrTail != nil {
		f["stderrTail"] = p.StderrTail.Text
	}
	return f
}

// InjectionSpan is one finding of the scanner.
type InjectionSpan struct {
	Field string `json:"field"`
	Class string `json:"class"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// validate checks that the classes are named and every span lies within
// the field it names; fields maps a field name to its text.
func (in *Injection) validate(fields map[string]string) error {
	if in == nil {
		return nil
	}
	if len(in.Classes) == 0 {
		return errors.New("field \"injection\": no classes")
	}
	for _, sp := range in.Spans {
		text, ok := fields[sp.Field]
		if !ok {
			return fmt.Errorf("field \"injection\": span in unknown field %q", sp.Field)
		}
		if sp.Class == "" || sp.Start < 0 || sp.Start >= sp.End || sp.End > len(text) {
			return fmt.Errorf("field \"injection\": span %s [%d,%d) of %q out of range (%d bytes)", sp.Class, sp.Start, sp.End, sp.Field, len(text))
		}
	}
	return nil
}

// Values a few fields may take.
const (
	StageResolve  = "resolve"
	StageValidate = "validate"
	StageExecute  = "execute"

	StopFinal     = "final"
	StopCancelled = "cancelled"
	StopError     = "error"
	StopMaxSteps  = "max_steps"
)

var newPayload = map[Type]func() Payload{
	SessionStarted:         func() Payload { return &SessionStartedPayload{} },
	TurnStarted:            func() Payload { return &TurnStartedPayload{} },
	UserMessage:            func() Payload { return &UserMessagePayload{} },
	ContextBuilt:           func() Payload { return &ContextBuiltPayload{} },
	ModelDelta:             func() Payload { return &ModelDeltaPayload{} },
	ModelToolCallRequested: func() Payload { return &ModelToolCallRequestedPayload{} },
	PermissionRequested:    func() Payload { return &PermissionRequestedPayload{} },
	PermissionResolved:     func() Payload { return &PermissionResolvedPayload{} },
	ToolStarted:            func() Payload { return &ToolStartedPayload{} },
	ToolCompleted:          func() Payload { return &ToolCompletedPayload{} },
	ToolFailed:             func() Payload { return &ToolFailedPayload{} },
	TurnCompleted:          func() Payload { return &TurnCompletedPayload{} },
	PolicyChanged:          func() Payload { return &PolicyChangedPayload{} },
	ToolDefinitionChanged:  func() Payload { return &ToolDefinitionChangedPayload{} },
	ModeChanged:            func() Payload { return &ModeChangedPayload{} },
	SkillActivated:         func() Payload { return &SkillActivatedPayload{} },
	SkillEnded:             func() Payload { return &SkillEndedPayload{} },
	PolicySnapshot:         func() Payload { return &PolicySnapshotPayload{} },
	ModelReplyFlagged:      func() Payload { return &ModelReplyFlaggedPayload{} },
}

// PolicyOpRevokeApproval is the op of a policy.changed of level session
// that revokes one prior approval (a call a person allowed, which the
// session allowed again unasked); its rule is a RevokedApproval.
const PolicyOpRevokeApproval = "revoke_approval"

// RevokedApproval names the prior approval a policy.changed revokes by
// Seq, the seq of the permission.resolved that made it; Tool and Args (the
// call's arguments as the log holds them, masked of secrets) are for
// display only and never matched. An event written before Seq existed
// (seq 0) named the approval by Args, the call's canonical arguments
// (permission.CanonicalArgs); readers still honour it by those.
type RevokedApproval struct {
	Seq  uint64          `json:"seq,omitempty"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
}

// RevokedApprovalOf reads the approval a policy.changed revokes; ok is
// false for any other change.
func RevokedApprovalOf(p *PolicyChangedPayload) (RevokedApproval, bool) {
	var r RevokedApproval
	if p.Level != "session" || p.Op != PolicyOpRevokeApproval || json.Unmarshal(p.Rule, &r) != nil {
		return RevokedApproval{}, false
	}
	if r.Seq == 0 && (r.Tool == "" || len(r.Args) == 0) {
		return RevokedApproval{}, false
	}
	return r, true
}

// Names reports whether r names the prior approval made by the
// permission.resolved at seq, of tool with canonical arguments canon
// (an event without Seq names it by tool and canon).
func (r RevokedApproval) Names(seq uint64, tool string, canon []byte) bool {
	if r.Seq != 0 {
		return r.Seq == seq
	}
	return r.Tool == tool && bytes.Equal(r.Args, canon)
}

// Decode returns the event's typed payload (a pointer to one of the
// *Payload structs of this package).
func (e Event) Decode() (Payload, error) {
	if e.V != Version {
		return nil, fmt.Errorf("event seq %d: envelope version %d is not supported (want %d)", e.Seq, e.V, Version)
	}
	mk, ok := newPayload[e.Type]
	if !ok {
		return nil, fmt.Errorf("event seq %d: unknown type %q", e.Seq, e.Type)
	}
	p := mk()
	if err := json.Unmarshal(e.Payload, p); err != nil {
		return nil, fmt.Errorf("event seq %d (%s): %w", e.Seq, e.Type, err)
	}
	return p, nil
}

// Actor returns who caused the event.
func (e Event) Actor() Actor {
	switch e.Type {
	case UserMessage:
		return ActorUser
	case ModelDelta, ModelToolCallRequested:
		return ActorModel
	case PermissionRequested:
		return ActorPolicy
	case PermissionResolved:
		var p struct {
			Actor Actor `json:"actor"`
		}
		if json.Unmarshal(e.Payload, &p) == nil && p.Actor != "" {
			return p.Actor
		}
		return ActorSystem
	case ToolStarted, ToolCompleted, ToolFailed:
		return ActorTool
	case PolicyChanged:
		return ActorUser
	case ModeChanged:
		var p struct {
			By Actor `json:"by"`
		}
		if json.Unmarshal(e.Payload, &p) == nil && p.By != "" {
			return p.By
		}
		return ActorSystem
	case SkillActivated:
		return ActorTool
	}
	return ActorSystem
}

var errMissing = errors.New("missing required field")

func required(fields ...[2]string) error {
	for _, f := range fields {
		if f[1] == "" {
			return fmt.Errorf("%w %q", errMissing, f[0])
		}
	}
	return nil
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("field %q: %q is not one of %v", field, v, allowed)
}

func requireArgs(args json.RawMessage) error {
	if len(args) == 0 {
		return fmt.Errorf("%w %q", errMissing, "args")
	}
	return nil
}

func (SessionStartedPayload) EventType() Type         { return SessionStarted }
func (TurnStartedPayload) EventType() Type            { return TurnStarted }
func (UserMessagePayload) EventType() Type            { return UserMessage }
func (ContextBuiltPayload) EventType() Type           { return ContextBuilt }
func (ModelDeltaPayload) EventType() Type             { return ModelDelta }
func (ModelToolCallRequestedPayload) EventType() Type { return ModelToolCallRequested }
func (PermissionRequestedPayload) EventType() Type    { return PermissionRequested }
func (PermissionResolvedPayload) EventType() Type     { return PermissionResolved }
func (ToolStartedPayload) EventType() Type            { return ToolStarted }
func (ToolCompletedPayload) EventType() Type          { return ToolCompleted }
func (ToolFailedPayload) EventType() Type             { return ToolFailed }
func (TurnCompletedPayload) EventType() Type          { return TurnCompleted }
func (PolicyChangedPayload) EventType() Type          { return PolicyChanged }
func (ToolDefinitionChangedPayload) EventType() Type  { return ToolDefinitionChanged }
func (ModeChangedPayload) EventType() Type            { return ModeChanged }
func (SkillActivatedPayload) EventType() Type         { return SkillActivated }
func (SkillEndedPayload) EventType() Type             { return SkillEnded }
func (PolicySnapshotPayload) EventType() Type         { return PolicySnapshot }
func (ModelReplyFlaggedPayload) EventType() Type      { return ModelReplyFlagged }

func (p SessionStartedPayload) Validate() error {
	return required([2]string{"cwd", p.Cwd}, [2]string{"mode", p.Mode})
}

// Validate accepts the old empty form ({}, still written by tools that
// predate the fields); once any field is set, cwd and mode are required,
// cwd is absolute, and cwdChangedFrom names another absolute directory.
func (p TurnStartedPayload) Validate() error {
	if p == (TurnStartedPayload{}) {
		return nil
	}
	if err := required([2]string{"cwd", p.Cwd}, [2]string{"mode", p.Mode}); err != nil {
		return err
	}
	if !isAbs(p.Cwd) {
		return fmt.Errorf("field \"cwd\": %q is not an absolute path", p.Cwd)
	}
	if p.CwdChangedFrom != "" && (!isAbs(p.CwdChangedFrom) || p.CwdChangedFrom == p.Cwd) {
		return fmt.Errorf("field \"cwdChangedFrom\": %q is not another absolute path than cwd", p.CwdChangedFrom)
	}
	return nil
}

// isAbs reports whether a recorded directory is absolute (on Unix or
// Windows), without asking the file system.
func isAbs(dir string) bool {
	return strings.HasPrefix(dir, "/") || (len(dir) > 2 && dir[1] == ':' && (dir[2] == '\\' || dir[2] == '/'))
}
func (p UserMessagePayload) Validate() error {
	for _, ref := range p.Includes {
		if !strings.HasPrefix(ref, "mcp://") {
			return fmt.Errorf("field \"includes\": %q is not mcp://SERVER/URI", ref)
		}
	}
	return nil
}

// IncludeCallID is the tool call id of the n-th (from 1) resource included
// with a turn's user message.
func IncludeCallID(turnID string, n int) string { return fmt.Sprintf("%s_include_%d", turnID, n) }
func (ContextBuiltPayload) Validate() error     { return nil }
func (ModelDeltaPayload) Validate() error       { return nil }
func (p ModelToolCallRequestedPayload) Validate() error {
	if err := required([2]string{"toolCallId", p.ToolCallID}, [2]string{"tool", p.Tool}); err != nil {
		return err
	}
	return requireArgs(p.Args)
}
func (p PermissionRequestedPayload) Validate() error {
	if err := required([2]string{"toolCallId", p.ToolCallID}, [2]string{"tool", p.Tool},
		[2]string{"reason", p.Reason}, [2]string{"sourcedFrom", p.SourcedFrom}); err != nil {
		return err
	}
	if p.RiskAtDecision == risk.Unknown {
		return fmt.Errorf("%w %q", errMissing, "riskAtDecision")
	}
	if err := oneOf("suggestedDecision", p.SuggestedDecision, "ask"); err != nil {
		return err
	}
	return requireArgs(p.Args)
}
func (p PermissionResolvedPayload) Validate() error {
	if err := required([2]string{"toolCallId", p.ToolCallID}, [2]string{"reason", p.Reason},
		[2]string{"sourcedFrom", p.SourcedFrom}); err != nil {
		return err
	}
	if p.RiskAtDecision == risk.Unknown {
		return fmt.Errorf("%w %q", errMissing, "riskAtDecision")
	}
	if err := oneOf("decision", p.Decision, "allow", "deny"); err != nil {
		return err
	}
	return oneOf("actor", string(p.Actor), string(ActorUser), string(ActorPolicy), string(ActorSystem), string(ActorAuto))
}
func (p ToolStartedPayload) Validate() error {
	if err := required([2]string{"toolCallId", p.ToolCallID}, [2]string{"tool", p.Tool}); err != nil {
		return err
	}
	return requireArgs(p.Args)
}
func (p ToolCompletedPayload) Validate() error {
	if err := required([2]string{"toolCallId", p.ToolCallID}); err != nil {
		return err
	}
	if p.StdoutBytes < 0 || p.StderrBytes < 0 {
		return errors.New("field \"stdoutBytes\"/\"stderrBytes\": negative byte count")
	}
	var dropped StreamBytes
	if p.Truncated != nil {
		dropped = *p.Truncated
		if dropped.Stdout == 0 && dropped.Stderr == 0 {
			return errors.New("field \"truncated\": present but drops no bytes (omit it when everything was kept)")
		}
		if dropped.Stdout < 0 || dropped.Stderr < 0 || dropped.Stdout > p.StdoutBytes || dropped.Stderr > p.StderrBytes {
			return fmt.Errorf("field \"truncated\": %+v is not between 0 and the stream's byte count (stdout %d, stderr %d)", dropped, p.StdoutBytes, p.StderrBytes)
		}
	}
	for _, t := range []struct {
		name  string
		tail  *OutputTail
		total int64
	}{{"stdoutTail", p.StdoutTail, p.StdoutBytes}, {"stderrTail", p.StderrTail, p.StderrBytes}} {
		if t.tail != nil && (t.tail.Omitted < 0 || t.tail.From < t.tail.Omitted || t.tail.From >= t.total) {
			return fmt.Errorf("field %q: from %d and omitted %d do not fit a stream of %d bytes", t.name, t.tail.From, t.tail.Omitted, t.total)
		}
	}
	for _, a := range p.Artifacts {
		if a.Bytes < 0 {
			return fmt.Errorf("artifact %q: negative byte count", a.Name)
		}
		var total, cut int64
		var preview string
		switch a.Name {
		case "stdout":
			total, cut, preview = p.StdoutBytes, dropped.Stdout, p.StdoutPreview
		case "stderr":
			total, cut, preview = p.StderrBytes, dropped.Stderr, p.StderrPreview
		default:
			if a.InEvent {
				return fmt.Errorf("artifact %q: inEvent names a stream the event has no preview of", a.Name)
			}
			continue
		}
		if a.InEvent {
			if a.Truncated || cut > 0 || a.Bytes != total || int64(len(preview)) != total {
				return fmt.Errorf("artifact %q: inEvent, but the %d-byte preview is not the whole %d-byte stream (%d bytes named)", a.Name, len(preview), total, a.Bytes)
			}
			if err := CheckInEvent(preview, a.Digest); err != nil {
				return fmt.Errorf("artifact %q: %w", a.Name, err)
			}
			continue
		}
		if a.Truncated != (cut > 0) {
			return fmt.Errorf("artifact %q: truncated is %v but the event's \"truncated\" drops %d bytes of it", a.Name, a.Truncated, cut)
		}
		if a.Truncated && a.Bytes+cut != total {
			return fmt.Errorf("artifact %q: %d bytes stored and %d dropped do not add up to the %d the stream printed", a.Name, a.Bytes, cut, total)
		}
	}
	return p.Injection.validate(p.InjectionFields())
}
func (p ToolFailedPayload) Validate() error {
	if err := required([2]string{"toolCallId", p.ToolCallID}, [2]string{"error", p.Error}); err != nil {
		return err
	}
	if err := p.Injection.validate(map[string]string{"error": p.Error}); err != nil {
		return err
	}
	return oneOf("stage", p.Stage, StageResolve, StageValidate, StageExecute)
}
func (p TurnCompletedPayload) Validate() error {
	return oneOf("stopReason", p.StopReason, StopFinal, StopCancelled, StopError, StopMaxSteps)
}
func (p PolicyChangedPayload) Validate() error {
	if err := required([2]string{"level", p.Level}, [2]string{"op", p.Op}); err != nil {
		return err
	}
	return requireArgs(p.Rule)
}

// Validate requires the server, the tool, its full name and two different
// hashes.
func (p ToolDefinitionChangedPayload) Validate() error {
	if err := required([2]string{"server", p.Server}, [2]string{"tool", p.Tool}, [2]string{"fullName", p.FullName},
		[2]string{"oldHash", p.OldHash}, [2]string{"newHash", p.NewHash}); err != nil {
		return err
	}
	if p.OldHash == p.NewHash {
		return fmt.Errorf("field \"newHash\": %q is the old hash: the definition did not change", p.NewHash)
	}
	return nil
}

// Validate requires both modes, different, and who changed it.
func (p ModeChangedPayload) Validate() error {
	if err := required([2]string{"from", p.From}, [2]string{"to", p.To}); err != nil {
		return err
	}
	if p.From == p.To {
		return fmt.Errorf("field \"to\": %q is the mode already in force", p.To)
	}
	return oneOf("by", string(p.By), string(ActorUser), string(ActorSystem))
}

// Validate requires the call, the skill's name, source, path, digest and
// a tool list (which may be empty, never absent).
func (p SkillActivatedPayload) Validate() error {
	if err := required([2]string{"toolCallId", p.ToolCallID}, [2]string{"name", p.Name},
		[2]string{"path", p.Path}, [2]string{"digest", p.Digest}); err != nil {
		return err
	}
	if p.AllowedTools == nil {
		return fmt.Errorf("%w %q", errMissing, "allowedTools")
	}
	return oneOf("source", p.Source, "project", "user")
}

// Validate requires the skill's name and why it ended.
func (p SkillEndedPayload) Validate() error {
	return required([2]string{"name", p.Name}, [2]string{"reason", p.Reason})
}

// Words names the confinement as the terminal, the editor and the log show
// it: "read-only sandbox", "workspace sandbox with network", "no sandbox".
func (s *SandboxInfo) Words() string {
	switch {
	case s == nil:
		return ""
	case s.Profile == "none" || s.Profile == "":
		return "no sandbox"
	case s.Network:
		return s.Profile + " sandbox with network"
	}
	return s.Profile + " sandbox"
}

// DecisionFacts are what one decision was made from, recorded with it so
// that package replay can decide it again from the log alone: the
// permission.Request the engine was given, without its policy (recorded in
// the policy.snapshot whose digest Policy names) and its history of prior
// approvals (rebuilt from the log, checked against History).
type DecisionFacts struct {
	// Engine is permission.EngineVersion of the engine that decided;
	// Build is the binary's version (buildinfo).
	Engine int    `json:"engine"`
	Build  string `json:"build,omitempty"`
	// Request is the permission.Request as JSON, without policy and
	// history, secrets masked as in the call's args.
	Request json.RawMessage `json:"request"`
	// Masked is set when masking changed Request: the arguments held a
	// secret the log does not keep, so the call cannot be decided again
	// exactly.
	Masked bool `json:"masked,omitempty"`
	// Policy is the digest of the policy.snapshot in force ("" when the
	// caller records none); History the digest of the prior approvals
	// given ("" when none).
	Policy  string `json:"policy,omitempty"`
	History string `json:"history,omitempty"`
	// Decision, Rule: the engine's verdict (allow, ask or deny) and the
	// rule behind it, as JSON ({id, level, source, decision}), if any.
	Decision string          `json:"decision"`
	Rule     json.RawMessage `json:"rule,omitempty"`
}

// PolicySnapshotPayload is the policy the engine is given, whole: every
// rule of every level in the engine's order, the project rules that do not
// count because the project is not trusted, and the built-in rules by
// digest (they are part of the build, like the engine).
type PolicySnapshotPayload struct {
	// Digest identifies the snapshot (sha256: of Rules, Ignored and
	// Builtin); DecisionFacts.Policy names it.
	Digest string         `json:"digest"`
	Rules  []SnapshotRule `json:"rules"`
	// Ignored are project allow rules the engine does not see, because
	// the project (or the rule) is not trusted.
	Ignored []SnapshotRule `json:"ignored,omitempty"`
	// Builtin is set when the built-in rules are on.
	Builtin *BuiltinRules `json:"builtin,omitempty"`
	// Project is the project whose policy file counts, if any.
	Project *SnapshotProject `json:"project,omitempty"`
}

// SnapshotRule is one rule of a snapshot: the permission.Rule as JSON
// (id, level, source file, matchers, decision) and how it counts.
type SnapshotRule struct {
	Rule json.RawMessage `json:"rule"`
	Line int             `json:"line,omitempty"`
	// TightenOnly: an ask rule of an untrusted project, which only
	// tightens.
	TightenOnly bool `json:"tightenOnly,omitempty"`
}

// BuiltinRules names the built-in rules a snapshot includes.
type BuiltinRules struct {
	Count  int    `json:"count"`
	Digest string `json:"digest"`
}

// SnapshotProject says where the project policy is and whether the user
// trusts the project (its allow rules count only then).
type SnapshotProject struct {
	Root    string `json:"root"`
	File    string `json:"file,omitempty"`
	Trusted bool   `json:"trusted"`
}

// Validate requires the digest and a rule list (which may be empty).
func (p PolicySnapshotPayload) Validate() error {
	if err := required([2]string{"digest", p.Digest}); err != nil {
		return err
	}
	if p.Rules == nil {
		return fmt.Errorf("%w %q", errMissing, "rules")
	}
	return nil
}

// ModelReplyFlaggedPayload is what the injection scanner found in the text
// of one model response: the model.delta texts recorded after the last
// context.built, joined, Bytes long. Spans are byte ranges of that text.
type ModelReplyFlaggedPayload struct {
	Classes   []string    `json:"classes"`
	Spans     []ReplySpan `json:"spans"`
	Truncated bool        `json:"truncated,omitempty"`
	Bytes     int         `json:"bytes"`
}

// ReplySpan is one finding in a model reply.
type ReplySpan struct {
	Class string `json:"class"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// Validate requires classes and spans inside the reply.
func (p ModelReplyFlaggedPayload) Validate() error {
	if len(p.Classes) == 0 {
		return fmt.Errorf("%w %q", errMissing, "classes")
	}
	for _, sp := range p.Spans {
		if sp.Class == "" || sp.Start < 0 || sp.Start >= sp.End || sp.End > p.Bytes {
			return fmt.Errorf("field \"spans\": span %s [%d,%d) out of range (%d bytes)", sp.Class, sp.Start, sp.End, p.Bytes)
		}
	}
	return nil
}

// MaskedQuestion reports whether the arguments of the call q asks about
// held a secret, which the log keeps masked: its facts say so, or, in a log
// written before questions carried facts, the arguments show the mask. An
// approval of such a call cannot be rebuilt from the log: the masked form
// would match the literal "[REDACTED]" text of another call.
func MaskedQuestion(q *PermissionRequestedPayload) bool {
	if q.Facts != nil {
		return q.Facts.Masked
	}
	return strings.Contains(string(q.Args), secrets.Redacted)
}
