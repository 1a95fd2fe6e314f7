package skill

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/skill/toolinfo"
)

// ToolName is the tool the model activates a skill with (toolinfo.Name).
const ToolName = toolinfo.Name

// claudeTools maps Claude Code's tool names to ours. Edit and MultiEdit
// change a file in place, which we do with apply_patch or by writing the
// whole file, so they map to both.
var claudeTools = map[string][]string{
	"Read":      {"read_file"},
	"Grep":      {"search_text"},
	"Glob":      {"list_files"},
	"LS":        {"list_files"},
	"Write":     {"write_file"},
	"Edit":      {"apply_patch", "write_file"},
	"MultiEdit": {"apply_patch", "write_file"},
	"Bash":      {"shell"},
	"WebFetch":  {"http_get"},
}

var patternRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9_]+)\((.*)\)$`) })

// MapTools turns allowed-tools as written into the list the engine narrows
// to, and says how each entry that is not one of our tool names was read.
//
//   - A Claude Code name maps to ours (Read to read_file, Bash to shell …)
//     without a note.
//   - A pattern in parentheses (Bash(git diff:*), Read(./src/**)) is read
//     as its tool: the engine narrows by tool name only, so the pattern
//     narrows nothing, and every call of that tool is still decided by the
//     policy (a shell command is asked by default). It is noted.
//   - A name no tool has is kept (it matches no tool, so it allows
//     nothing) and noted; MCP names (mcp__server__tool) and globs
//     (mcp__github__*) are kept as written.
//
// The result never lists a name twice, and is empty (not nil) for an empty
// list.
func MapTools(declared []string) (tools, notes []string) {
	tools = []string{}
	add := func(names ...string) {
		for _, n := range names {
			if !slices.Contains(tools, n) {
				tools = append(tools, n)
			}
		}
	}
	for _, d := range declared {
		name, pattern := d, ""
		if m := patternRE().FindStringSubmatch(d); m != nil {
			name, pattern = m[1], m[2]
		}
		mapped, isClaude := claudeTools[name]
		switch {
		case isClaude:
			add(mapped...)
		case known(name):
			add(name)
		default:
			add(d)
			notes = append(notes, fmt.Sprintf("%s: no tool has this name, so it allows nothing", d))
			continue
		}
		what := strings.Join(mapped, " and ")
		if !isClaude {
			what = name
		}
		if pattern != "" {
			notes = append(notes, fmt.Sprintf("%s: read as %s; the pattern %q narrows nothing, so every %s call is still decided by the policy", d, what, pattern, what))
		}
	}
	return tools, notes
}

// known reports whether name is one of our tools, an MCP tool's name or a
// glob of tool names.
func known(name string) bool {
	if _, ok := permission.Builtin(name); ok || name == ToolName {
		return true
	}
	return strings.HasPrefix(name, "mcp__") || strings.ContainsAny(name, "*?[{")
}
