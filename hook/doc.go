// Package hook speaks the hook formats of other coding agents, Claude Code
// (PreToolUse, PostToolUse) and Gemini CLI (BeforeTool, AfterTool), so
// that custom-agent's PermissionEngine can judge their tool calls as its
// own: it reads one hook event (Parse), maps the agent's tool onto ours
// (Map), and writes the answer in that agent's format (Answer).
//
// Every field of an event comes from a process a model drives, so it is
// treated as hostile: the input is bounded, must be valid UTF-8 and one
// JSON object; paths are made absolute against the event's cwd; a tool this
// package does not know maps to nothing, which the caller asks about and
// never allows. The package does no I/O beyond the reader it is given.
//
// Combining rule: a call that maps onto several of ours (read_many_files,
// a web_fetch naming several URLs) is decided by the strictest of their
// decisions; deny beats ask beats allow, and an unset decision is deny.
package hook
