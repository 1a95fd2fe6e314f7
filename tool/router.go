package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// Router resolves tool names to tools and validates arguments. Register
// tools before use; after that a Router is safe for concurrent use.
type Router struct {
	tools map[string]entry
}

type entry struct {
	tool   Tool
	info   permission.ToolInfo
	schema *jsonschema.Resolved
}

// NewRouter returns an empty router.
func NewRouter() *Router { return &Router{tools: map[string]entry{}} }

// ErrUnknownTool is wrapped by Resolve's error for a name no tool has.
var ErrUnknownTool = errors.New("unknown tool")

// ErrBadTool is wrapped by Add's error for a tool that cannot be
// registered: an empty or duplicate name, a name outside its namespace, no
// base risk, or a schema that is missing, not JSON, not a JSON Schema this
// router can check, or not of type object.
var ErrBadTool = errors.New("tool cannot be registered")

// Register adds a tool. It panics on a programmer's mistake (any error of
// Add); use Add for a tool from elsewhere, such as an MCP server.
func (r *Router) Register(t Tool) {
	if err := r.Add(t); err != nil {
		panic(err.Error())
	}
}

// Add adds a tool, or returns an error wrapping ErrBadTool that says what
// is wrong with it; the router is then unchanged.
func (r *Router) Add(t Tool) error {
	info := t.Info()
	switch {
	case info.Name == "":
		return fmt.Errorf("%w: a tool with no name", ErrBadTool)
	case info.Namespace != "" && !strings.HasPrefix(info.Name, info.Namespace+"__"):
		return fmt.Errorf("%w: %q is not in its namespace %q", ErrBadTool, info.Name, info.Namespace)
	case info.Risk == 0:
		return fmt.Errorf("%w: %q has no base risk", ErrBadTool, info.Name)
	}
	if _, dup := r.tools[info.Name]; dup {
		return fmt.Errorf("%w: %q registered twice", ErrBadTool, info.Name)
	}
	s, err := compileSchema(info.Schema)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", ErrBadTool, info.Name, err)
	}
	r.tools[info.Name] = entry{tool: t, info: info, schema: s}
	return nil
}

// Resolve returns the tool registered under name. An unknown name gives an
// error the model can act on: it lists the tools there are (those of the
// same namespace first, when the name has one).
func (r *Router) Resolve(name string) (Tool, error) {
	if e, ok := r.tools[name]; ok {
		return e.tool, nil
	}
	names := r.Names()
	if server, _, ok := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__"); ok && strings.HasPrefix(name, "mcp__") {
		prefix := "mcp__" + server + "__"
		var same []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				same = append(same, n)
			}
		}
		if len(same) > 0 {
			return nil, fmt.Errorf("%w %q: the tools of that server are %s", ErrUnknownTool, name, strings.Join(same, ", "))
		}
	}
	return nil, fmt.Errorf("%w %q: the available tools are %s", ErrUnknownTool, name, strings.Join(names, ", "))
}

// Names lists the registered tool names, sorted.
func (r *Router) Names() []string {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Infos returns the metadata of every registered tool, sorted by name.
func (r *Router) Infos() []permission.ToolInfo {
	out := make([]permission.ToolInfo, 0, len(r.tools))
	for _, n := range r.Names() {
		out = append(out, r.tools[n].info)
	}
	return out
}

// ArgsError says which argument is wrong and what was expected.
type ArgsError struct {
	Tool     string
	Problems []string // one per failing field, e.g. `"path": missing (required)`
}

func (e *ArgsError) Error() string {
	return fmt.Sprintf("invalid arguments for %s: %s", e.Tool, strings.Join(e.Problems, "; "))
}

// Validate decodes raw and checks it against the tool's schema. It returns
// the decoded arguments (numbers as float64), or an *ArgsError naming each
// wrong field and what was expected.
func (r *Router) Validate(name string, raw json.RawMessage) (map[string]any, error) {
	e, ok := r.tools[name]
	if !ok {
		_, err := r.Resolve(name)
		return nil, err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return nil, &ArgsError{Tool: name, Problems: []string{"arguments are not valid JSON: " + err.Error()}}
	}
	if ps := validate(e.schema, inst); len(ps) > 0 {
		return nil, &ArgsError{Tool: name, Problems: ps}
	}
	args, ok := inst.(map[string]any)
	if !ok {
		return nil, &ArgsError{Tool: name, Problems: []string{"arguments must be a JSON object"}}
	}
	if ps := controlProblems(e.info, args); len(ps) > 0 {
		return nil, &ArgsError{Tool: name, Problems: ps}
	}
	return args, nil
}

// controlProblems refuses a file path holding a NUL or another control
// character (issue 9 §3), in every argument the tool's metadata names as a
// path (PathArgs, CwdArg, GlobArg) and in every file name of a patch
// (permission.PatchPaths, the names the engine judges and the tool
// writes). No file name holds one legitimately; a NUL cuts the name short
// for the kernel and every C program (".env\x00.txt" opens .env), and the
// others hide text on a terminal. Refused here, the call never reaches the
// engine, so no judgement or rule is made from a name read two ways.
func controlProblems(info permission.ToolInfo, args map[string]any) []string {
	var out []string
	check := func(arg, what, s string) {
		if i := pathrisk.FirstControl(s); i >= 0 {
			out = append(out, fmt.Sprintf("%q: %s holds the control character %s at byte %d; file paths never contain control characters, so give the name without it",
				arg, what, controlName(s[i]), i))
		}
	}
	names := append(append([]string(nil), info.PathArgs...), info.CwdArg, info.GlobArg)
	for _, n := range names {
		if n == "" {
			continue
		}
		if s, ok := args[n].(string); ok {
			check(n, "the path", s)
		}
	}
	if info.PatchArg != "" {
		if s, ok := args[info.PatchArg].(string); ok {
			for _, p := range permission.PatchPaths(s) {
				check(info.PatchArg, fmt.Sprintf("the file name %q", p.Path), p.Path)
			}
		}
	}
	return out
}

// controlName names a control byte the way a person reads it.
func controlName(c byte) string {
	switch c {
	case 0:
		return "NUL (\\x00)"
	case '\t':
		return "tab (\\t)"
	case '\n':
		return "newline (\\n)"
	case '\r':
		return "carriage return (\\r)"
	case 0x1b:
		return "escape (\\x1b)"
	}
	return fmt.Sprintf("\\x%02x", c)
}
