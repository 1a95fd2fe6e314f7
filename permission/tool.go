package permission

import (
	"errors"
	"fmt"
	"slices"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Mode is the session's mode. The zero value means ModeDefault.
type Mode string

const (
	// ModeDefault decides every call by its risk and the policy.
	ModeDefault Mode = "default"
	// ModePlan lets the agent look but not touch: only calls whose risk,
	// after the arguments are judged, is read are allowed; all others are
	// denied, whatever the policy says.
	ModePlan Mode = "plan"
	// ModeAcceptEdits allows writes and patches inside the working
	// directory without asking, except protected and credential paths;
	// everything else is decided as in ModeDefault.
	ModeAcceptEdits Mode = "accept-edits"
	// ModeDontAsk turns every ask into a deny at once, with that reason:
	// for CI and headless use. Nothing waits for a person.
	ModeDontAsk Mode = "dont-ask"
)

// Modes lists every mode the engine knows, in the order a UI offers them.
var Modes = []Mode{ModeDefault, ModePlan, ModeAcceptEdits, ModeDontAsk}

// Valid reports whether m is a mode the engine knows. The empty mode is
// valid and means ModeDefault.
func (m Mode) Valid() bool { return m == "" || slices.Contains(Modes, m) }

// ErrUnknownMode is wrapped by ParseMode's error for a name that is not a
// mode.
var ErrUnknownMode = errors.New("unknown mode")

// ModeNames lists the modes for messages and help text: "default, plan,
// accept-edits or dont-ask".
const ModeNames = "default, plan, accept-edits or dont-ask"

// ParseMode returns the mode named s, or an error wrapping ErrUnknownMode
// that lists the modes: unknown mode "x" (want default, plan, accept-edits
// or dont-ask). The empty name is not a mode here.
func ParseMode(s string) (Mode, error) {
	if m := Mode(s); s != "" && m.Valid() {
		return m, nil
	}
	return "", fmt.Errorf("%w %q (want %s)", ErrUnknownMode, s, ModeNames)
}

func (m Mode) orDefault() Mode {
	if m == "" {
		return ModeDefault
	}
	return m
}

// ACP tool kinds (Agent Client Protocol, ToolKind), which editors use to
// choose an icon and wording.
const (
	KindRead    = "read"
	KindEdit    = "edit"
	KindDelete  = "delete"
	KindMove    = "move"
	KindSearch  = "search"
	KindExecute = "execute"
	KindFetch   = "fetch"
	KindOther   = "other"
)

// ToolInfo is a tool's metadata: what the router knows about it and the
// engine judges by. The argument roles (PathArgs, CommandArg, …) tell the
// engine which arguments to analyse; a tool that declares none is judged by
// its base Risk alone. MCP tools may only raise Risk, never lower it.
type ToolInfo struct {
	// Name is the full name the model calls it by, e.g. "read_file" or
	// "mcp__github__create_issue".
	Name string `json:"name"`
	// Namespace is "" for built-in tools and "mcp__<server>" for MCP tools.
	Namespace string `json:"namespace,omitempty"`
	// Risk is the base risk of any call (spec §3 step 1).
	Risk risk.Level `json:"risk"`
	// AllowedModes are the session modes the tool may run in; nil means
	// every mode. Plan mode further allows only read-risk calls.
	AllowedModes []Mode `json:"allowedModes,omitempty"`
	// Kind is the ACP tool kind.
	Kind string `json:"kind"`
	// PathArgs name string arguments that are file system paths.
	PathArgs []string `json:"pathArgs,omitempty"`
	// PathsWrite is set when the tool writes the paths in PathArgs.
	PathsWrite bool `json:"pathsWrite,omitempty"`
	// PathsRecursive is set when the tool reads every file beneath the
	// paths in PathArgs (search_text).
	PathsRecursive bool `json:"pathsRecursive,omitempty"`
	// PathDefaultsToCwd is set when an absent first path argument means the
	// working directory (list_files, search_text, …).
	PathDefaultsToCwd bool `json:"pathDefaultsToCwd,omitempty"`
	// CommandArg names the argument holding a shell command, if any.
	CommandArg string `json:"commandArg,omitempty"`
	// CwdArg names the argument holding the command's working directory,
	// judged like a path; absent means the session's cwd.
	CwdArg string `json:"cwdArg,omitempty"`
	// PatchArg names the argument holding a unified diff whose paths are
	// judged as writes.
	PatchArg string `json:"patchArg,omitempty"`
	// URLArg names the argument holding a URL.
	URLArg string `json:"urlArg,omitempty"`
	// ResourceArg names the argument holding an MCP resource URI (the
	// resource tool). A file: URI is judged by the path it names (in
	// PathArgs); any other is the server's to resolve, wherever it
	// fetches it from, so it is named as such, never as a local read.
	ResourceArg string `json:"resourceArg,omitempty"`
	// HeadersArg names the argument holding request headers (an object).
	HeadersArg string `json:"headersArg,omitempty"`
	// BodyArg names the argument holding data sent away; secrets in it
	// make the call credential.
	BodyArg string `json:"bodyArg,omitempty"`
	// GlobArg names an argument holding a glob of file names under the
	// first path argument (list_files, search_text); the files it may match
	// are judged like paths.
	GlobArg string `json:"globArg,omitempty"`
	// Changed is set on an MCP tool whose definition is not the one a rule
	// or an answer let run before (pinning): its rules, except those that
	// deny, and earlier approvals do not apply, and the call is asked.
	Changed *DefinitionChange `json:"changed,omitempty"`
	// StartsProcesses is set on a tool whose calls start processes
	// (shell, run_tests, get_diagnostics): an allowed call runs them in
	// the sandbox, and where the sandbox cannot be enforced the call is
	// asked (Request.Sandbox).
	StartsProcesses bool `json:"startsProcesses,omitempty"`
	// Schema is the JSON Schema (JSON text) of the arguments, used by the
	// router to validate a call before it reaches the engine. The engine
	// does not read it.
	Schema string `json:"-"`
}

// DefinitionChange names an MCP tool's definition (name, description,
// input schema, annotations) by hash: the one approved and the one the
// server offers now.
type DefinitionChange struct {
	Approved string `json:"approved"`
	Offered  string `json:"offered"`
}

// AllowsMode reports whether the tool may run in mode m.
func (t *ToolInfo) AllowsMode(m Mode) bool {
	return t.AllowedModes == nil || slices.Contains(t.AllowedModes, m.orDefault())
}

// The allowed modes of the built-in tools: a read tool runs in every mode;
// any other runs in every mode but plan (which allows only reads).
var (
	readModes  = []Mode{ModeDefault, ModePlan, ModeAcceptEdits, ModeDontAsk}
	otherModes = []Mode{ModeDefault, ModeAcceptEdits, ModeDontAsk}
)

// ReadModes are the modes a tool that only reads may run in: all of them.
// MCP read tools use it.
func ReadModes() []Mode { return slices.Clone(readModes) }

// ActingModes are the modes a tool above read risk may run in: every mode
// but plan. MCP tools use it.
func ActingModes() []Mode { return slices.Clone(otherModes) }

// builtins is the table of DESIGN.md §2, in its order.
var builtins = [...]ToolInfo{
	{Name: "read_file", Risk: risk.Read, AllowedModes: readModes, Kind: KindRead,
		PathArgs: []string{"path"}, Schema: schemaReadFile},
	{Name: "list_files", Risk: risk.Read, AllowedModes: readModes, Kind: KindSearch,
		PathArgs: []string{"path"}, PathDefaultsToCwd: true, GlobArg: "glob", Schema: schemaListFiles},
	{Name: "search_text", Risk: risk.Read, AllowedModes: readModes, Kind: KindSearch,
		PathArgs: []string{"path"}, PathDefaultsToCwd: true, PathsRecursive: true, GlobArg: "glob", Schema: schemaSearchText},
	// get_diagnostics runs checkers the project controls: eslint loads
	// eslint.config.js, tsc and eslint run from node_modules/.bin, ruff and
	// mypy read pyproject.toml plugins. That executes the repository's
	// code, so it is execute, asked by default and never run in plan mode
	// (white-box review A7).
	{Name: "get_diagnostics", Risk: risk.Execute, AllowedModes: otherModes, Kind: KindExecute,
		PathArgs: []string{"path"}, PathDefaultsToCwd: true, StartsProcesses: true, Schema: schemaGetDiagnostics},
	{Name: "write_file", Risk: risk.Write, AllowedModes: otherModes, Kind: KindEdit,
		PathArgs: []string{"path"}, PathsWrite: true, Schema: schemaWriteFile},
	{Name: "apply_patch", Risk: risk.Write, AllowedModes: otherModes, Kind: KindEdit,
		PatchArg: "patch", Schema: schemaApplyPatch},
	{Name: "shell", Risk: risk.Execute, AllowedModes: otherModes, Kind: KindExecute,
		CommandArg: "command", CwdArg: "cwd", StartsProcesses: true, Schema: schemaShell},
	{Name: "run_tests", Risk: risk.Execute, AllowedModes: otherModes, Kind: KindExecute,
		PathArgs: []string{"path"}, PathDefaultsToCwd: true, StartsProcesses: true, Schema: schemaRunTests},
	{Name: "http_get", Risk: risk.Network, AllowedModes: otherModes, Kind: KindFetch,
		URLArg: "url", HeadersArg: "headers", Schema: schemaHTTPGet},
	{Name: "http_post", Risk: risk.Network, AllowedModes: otherModes, Kind: KindFetch,
		URLArg: "url", HeadersArg: "headers", BodyArg: "body", Schema: schemaHTTPPost},
	// read_output reads a range of an output this session recorded (the
	// artifact store), never a file: a read with no argument to judge.
	{Name: "read_output", Risk: risk.Read, AllowedModes: readModes, Kind: KindRead, Schema: schemaReadOutput},
}

const schemaReadOutput = `{"type":"object","properties":{` +
	`"toolCallId":{"type":"string","minLength":1,"description":"the call whose output to read"},` +
	`"stream":{"type":"string","enum":["stdout","stderr"],"description":"with toolCallId: which stream; default stdout"},` +
	`"digest":{"type":"string","minLength":1,"description":"an artifact digest recorded in this session, instead of toolCallId"},` +
	`"offset":{"type":"integer","minimum":0,"description":"first byte to read, from 0"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":10240,"description":"most bytes to read; default 8192"}},` +
	`"additionalProperties":false}`

// Builtins returns the built-in tools in the order of DESIGN.md §2. The
// slice is a fresh copy; its ToolInfo values share their slices with the
// table, which callers must not modify.
func Builtins() []ToolInfo { return slices.Clone(builtins[:]) }

// Builtin returns the metadata of the built-in tool with the given name.
func Builtin(name string) (ToolInfo, bool) {
	for i := range builtins {
		if builtins[i].Name == name {
			return builtins[i], true
		}
	}
	return ToolInfo{}, false
}
