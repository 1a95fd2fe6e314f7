package hook

import (
	"slices"
	"strings"
)

// knownKeys are the tool_input keys of each agent's tool that the mapping
// reads, or that are known to change nothing of what the call touches
// (a description, a timeout, an output limit, a filter that only narrows).
// Any other key may change what the call touches (the agents rename
// parameters: Gemini CLI's directory and path became dir_path, include
// include_pattern), so a call with one is not allowed on what the mapping
// saw: see UnknownKeys. MCP tools are not listed: all their input is
// judged.
var knownKeys = map[Agent]map[string][]string{
	ClaudeCode: {
		"Bash":         {"command", "description", "timeout", "run_in_background", "dangerouslyDisableSandbox"},
		"Read":         {"file_path", "offset", "limit", "pages"},
		"NotebookRead": {"notebook_path", "cell_id"},
		"Write":        {"file_path", "content"},
		"Edit":         {"file_path", "old_string", "new_string", "replace_all"},
		"MultiEdit":    {"file_path", "edits"},
		"NotebookEdit": {"notebook_path", "new_source", "cell_id", "cell_type", "edit_mode"},
		"Glob":         {"pattern", "path"},
		"Grep": {"pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C",
			"multiline", "head_limit", "offset"},
		"LS":        {"path", "ignore"},
		"WebFetch":  {"url", "prompt"},
		"WebSearch": {"query", "allowed_domains", "blocked_domains"},
		"TodoWrite": {"todos"},
	},
	GeminiCLI: {
		"run_shell_command": {"command", "description", "dir_path", "directory", "is_background"},
		"read_file":         {"file_path", "absolute_path", "path", "offset", "limit"},
		"read_many_files":   {"paths", "include", "exclude", "recursive", "useDefaultExcludes", "file_filtering_options"},
		"write_file":        {"file_path", "content", "modified_by_user", "ai_proposed_content"},
		"replace": {"file_path", "old_string", "new_string", "expected_replacements", "instruction",
			"modified_by_user", "ai_proposed_content"},
		"glob": {"pattern", "dir_path", "path", "case_sensitive", "respect_git_ignore", "respect_gemini_ignore"},
		"search_file_content": {"pattern", "dir_path", "path", "include_pattern", "include", "exclude_pattern",
			"names_only", "case_sensitive", "fixed_strings", "context", "after", "before", "max_matches_per_file",
			"total_max_matches"},
		"list_directory":    {"dir_path", "path", "ignore", "file_filtering_options"},
		"web_fetch":         {"prompt"},
		"google_web_search": {"query"},
		"write_todos":       {"todos"},
	},
}

func init() {
	g := knownKeys[GeminiCLI]
	g["grep_search"] = g["search_file_content"]
}

// UnknownKeys returns, sorted, the keys of in's tool_input that the
// mapping of its tool does not know. A call with one must not be allowed
// on what the mapping judged: the key may name a directory, a file or a
// pattern the mapping never saw. An MCP tool or a tool the mapping does
// not know has none (the first is judged on its whole input, the second
// is asked anyway).
func UnknownKeys(in *Input) []string {
	known, ok := knownKeys[in.Agent][in.ToolName]
	if _, mcp := mcpTool(in.ToolName); mcp {
		return nil
	} else if !ok {
		known = nil // a tool mapped but not listed: none of its keys is known
	}
	var out []string
	for k := range in.ToolInput {
		if !slices.Contains(known, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// UnknownKeysReason says why a call with unknown keys is not allowed.
func UnknownKeysReason(in *Input, keys []string) string {
	return in.ToolName + "'s input has " + plural(len(keys), "key") + " custom-agent does not know (" +
		strings.Join(keys, ", ") + "), which may change what the call touches and is not judged, so the call is not allowed unasked"
}

func plural(n int, word string) string {
	if n == 1 {
		return "a " + word
	}
	return "keys"
}
