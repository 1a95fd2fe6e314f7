package hook

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Call is one of our tool calls an agent's call maps onto.
type Call struct {
	Tool permission.ToolInfo
	Args map[string]any
}

var (
	// ErrUnknownTool: the agent's tool maps onto none of ours; the call is
	// asked, never allowed.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrBadInput: the tool is known but its input is not what it takes
	// (a missing or mistyped argument); the call is denied.
	ErrBadInput = errors.New("tool input not understood")
)

// Tools that are not built into custom-agent but that the agents have. Each
// is judged by its base risk and the arguments whose role it names.
var (
	// webSearch sends a query to a search service: network, and a secret
	// in the query makes it credential.
	webSearch = permission.ToolInfo{Name: "web_search", Risk: risk.Network, Kind: permission.KindFetch,
		AllowedModes: permission.ActingModes(), BodyArg: "query"}
	// webFetchPrompt is Gemini's web_fetch when its prompt names no URL
	// that could be judged.
	webFetchPrompt = permission.ToolInfo{Name: "web_fetch", Risk: risk.Network, Kind: permission.KindFetch,
		AllowedModes: permission.ActingModes(), BodyArg: "prompt"}
	// todoList is the agent's own to-do list (Claude Code's TodoWrite,
	// Gemini CLI's write_todos): it touches no file, runs nothing and
	// sends nothing.
	todoList = permission.ToolInfo{Name: "todo_list", Risk: risk.Read, Kind: permission.KindOther,
		AllowedModes: permission.ReadModes()}
)

// mcpName is an MCP tool's name as both agents write it; a name with
// other characters (a glob, a space) is not taken for one.
// It is compiled on first use: a hook process pays for what it uses only.
var mcpName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^mcp__([A-Za-z0-9_.-]+?)__([A-Za-z0-9_.-]+)$`)
})

// mcpTool is an MCP tool of the agent: its server and schema are unknown
// here, so it is judged at execute, as custom-agent judges an MCP tool
// whose annotations say nothing, and runs in no plan mode.
func mcpTool(name string) (permission.ToolInfo, bool) {
	if !strings.HasPrefix(name, "mcp__") {
		return permission.ToolInfo{}, false
	}
	m := mcpName().FindStringSubmatch(name)
	if m == nil {
		return permission.ToolInfo{}, false
	}
	return permission.ToolInfo{Name: name, Namespace: "mcp__" + m[1], Risk: risk.Execute,
		Kind: permission.KindOther, AllowedModes: permission.ActingModes()}, true
}

// Map returns the calls of ours that in's tool call is judged as. Paths
// are made absolute against in.Cwd. An error wraps ErrUnknownTool or
// ErrBadInput.
func Map(in *Input) ([]Call, error) {
	m := mapper{in: in}
	var calls []Call
	var err error
	switch in.Agent {
	case ClaudeCode:
		calls, err = m.claude()
	case GeminiCLI:
		calls, err = m.gemini()
	default:
		err = fmt.Errorf("%w: agent %q", ErrUnknownTool, in.Agent)
	}
	if err == nil && len(calls) == 0 {
		err = fmt.Errorf("%w: %s maps onto no call", ErrBadInput, in.ToolName)
	}
	return calls, err
}

type mapper struct {
	in  *Input
	err error // the first argument error
}

func builtin(name string) permission.ToolInfo {
	t, ok := permission.Builtin(name)
	if !ok {
		panic("hook: no built-in tool " + name) // a programmer's mistake
	}
	return t
}

func (m *mapper) claude() ([]Call, error) {
	in := m.in
	var c []Call
	switch in.ToolName {
	case "Bash":
		c = m.shell(m.str("command", true), in.Cwd)
	case "Read":
		c = m.one("read_file", "path", m.path("file_path", true))
	case "NotebookRead":
		c = m.one("read_file", "path", m.path("notebook_path", true))
	case "Write":
		c = m.write(m.path("file_path", true), m.str("content", false))
	case "Edit":
		c = m.write(m.path("file_path", true), m.str("new_string", false))
	case "MultiEdit":
		c = m.write(m.path("file_path", true), m.newStrings())
	case "NotebookEdit":
		c = m.write(m.path("notebook_path", true), m.str("new_source", false))
	case "Glob":
		c = m.glob(m.str("pattern", true), m.path("path", false))
	case "Grep":
		c = m.search(m.str("pattern", true), m.path("path", false), m.str("glob", false))
	case "LS":
		c = m.one("list_files", "path", m.path("path", true))
	case "WebFetch":
		u := m.str("url", true)
		if why := cleanURL(u); m.err == nil && why != "" {
			m.fail("the URL %q %s; Claude Code would fetch what its own URL parser makes of it, which is not judged", u, why)
		}
		c = []Call{{Tool: builtin("http_get"), Args: map[string]any{"url": u}}}
	case "WebSearch":
		c = []Call{{Tool: webSearch, Args: map[string]any{"query": m.str("query", true)}}}
	case "TodoWrite":
		c = []Call{{Tool: todoList, Args: map[string]any{}}}
	default:
		return m.mcp()
	}
	if m.err != nil {
		return nil, m.err
	}
	return c, nil
}

func (m *mapper) gemini() ([]Call, error) {
	in := m.in
	var c []Call
	switch in.ToolName {
	case "run_shell_command":
		dir := m.anyPath(false, "dir_path", "directory")
		if dir == "" {
			dir = in.Cwd
		}
		c = m.shell(m.str("command", true), dir)
	case "read_file":
		c = m.one("read_file", "path", m.anyPath(true, "file_path", "absolute_path", "path"))
	case "read_many_files":
		c = m.readMany()
	case "write_file":
		c = m.write(m.path("file_path", true), m.str("content", false))
	case "replace":
		c = m.write(m.path("file_path", true), m.str("new_string", false))
	case "glob":
		c = m.glob(m.str("pattern", true), m.anyPath(false, "dir_path", "path"))
	case "search_file_content", "grep_search":
		c = m.search(m.str("pattern", true), m.anyPath(false, "dir_path", "path"), m.anyStr("include_pattern", "include"))
	case "list_directory":
		c = m.one("list_files", "path", m.anyPath(true, "dir_path", "path"))
	case "web_fetch":
		c = m.webFetch(m.str("prompt", true))
	case "google_web_search":
		c = []Call{{Tool: webSearch, Args: map[string]any{"query": m.str("query", true)}}}
	case "write_todos":
		c = []Call{{Tool: todoList, Args: map[string]any{}}}
	default:
		return m.mcp()
	}
	if m.err != nil {
		return nil, m.err
	}
	return c, nil
}

func (m *mapper) mcp() ([]Call, error) {
	t, ok := mcpTool(m.in.ToolName)
	if !ok {
		return nil, fmt.Errorf("%w %q: %s's tool maps onto none of custom-agent's, so it is asked", ErrUnknownTool, m.in.ToolName, m.in.Agent)
	}
	return []Call{{Tool: t, Args: m.in.ToolInput}}, nil
}

func (m *mapper) fail(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("%w: %s: %s", ErrBadInput, m.in.ToolName, fmt.Sprintf(format, args...))
	}
}

// str returns the string argument key; a missing required one, or one that
// is not a string, is an error.
func (m *mapper) str(key string, required bool) string {
	v, ok := m.in.ToolInput[key]
	if !ok || v == nil {
		if required {
			m.fail("no %s", key)
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		m.fail("%s is not a string", key)
		return ""
	}
	if required && s == "" {
		m.fail("%s is empty", key)
	}
	return s
}

// path returns the path argument key made absolute against the event's
// cwd ("~" paths are left for the engine, which reads them as the home).
func (m *mapper) path(key string, required bool) string {
	return m.abs(key, m.str(key, required))
}

func (m *mapper) abs(key, p string) string {
	switch {
	case p == "":
		return ""
	case strings.ContainsRune(p, 0):
		m.fail("%s holds a NUL byte", key)
		return ""
	case filepath.IsAbs(p), p == "~", strings.HasPrefix(p, "~/"):
		return filepath.Clean(p)
	}
	return filepath.Join(m.in.Cwd, p)
}

// anyPath returns the one path the tool takes under one of several names
// (Gemini CLI has renamed them over its versions: read_file's path,
// absolute_path and file_path; directory and path became dir_path). Two
// names naming different paths is an error: the call is not guessed at.
func (m *mapper) anyPath(required bool, keys ...string) string {
	var got, from string
	for _, k := range keys {
		p := m.path(k, false)
		if p == "" {
			continue
		}
		if got != "" && p != got {
			m.fail("%s and %s name different paths", from, k)
			return ""
		}
		got, from = p, k
	}
	if got == "" && required {
		m.fail("no %s", keys[0])
	}
	return got
}

// anyStr is anyPath for an optional string that is not a path (Gemini
// CLI's include became include_pattern).
func (m *mapper) anyStr(keys ...string) string {
	var got, from string
	for _, k := range keys {
		s := m.str(k, false)
		if s == "" {
			continue
		}
		if got != "" && s != got {
			m.fail("%s and %s differ", from, k)
			return ""
		}
		got, from = s, k
	}
	return got
}

func (m *mapper) one(tool, arg, v string) []Call {
	return []Call{{Tool: builtin(tool), Args: map[string]any{arg: v}}}
}

func (m *mapper) shell(command, dir string) []Call {
	return []Call{{Tool: builtin("shell"), Args: map[string]any{"command": command, "cwd": dir}}}
}

// write is a write of the file with the new content it is given, so that
// the engine judges the path and what is written to it.
func (m *mapper) write(path, content string) []Call {
	return []Call{{Tool: builtin("write_file"), Args: map[string]any{"path": path, "content": content}}}
}

// newStrings joins a MultiEdit's new strings: what it writes.
func (m *mapper) newStrings() string {
	edits, ok := m.in.ToolInput["edits"].([]any)
	if !ok {
		m.fail("edits is not a list")
		return ""
	}
	var b strings.Builder
	for i, e := range edits {
		o, ok := e.(map[string]any)
		if !ok {
			m.fail("edit %d is not an object", i)
			return ""
		}
		s, ok := o["new_string"].(string)
		if !ok {
			m.fail("edit %d has no string new_string", i)
			return ""
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String()
}

// glob lists the names a glob matches: list_files under the pattern's
// fixed leading directories (an absolute pattern or one with ".." leads
// there), with the rest as its glob.
func (m *mapper) glob(pattern, dir string) []Call {
	if m.err != nil {
		return nil
	}
	base, rest := m.splitGlob(pattern, dir)
	args := map[string]any{"path": base}
	if rest != "" {
		args["glob"] = rest
	}
	return []Call{{Tool: builtin("list_files"), Args: args}}
}

// search reads every file under dir (default the cwd) whose name matches
// glob, for the pattern.
func (m *mapper) search(pattern, dir, glob string) []Call {
	if dir == "" {
		dir = m.in.Cwd
	}
	args := map[string]any{"pattern": pattern, "path": dir}
	if glob != "" {
		base, rest := m.splitGlob(glob, dir)
		args["path"] = base
		if rest != "" {
			args["glob"] = rest
		}
	}
	return []Call{{Tool: builtin("search_text"), Args: args}}
}

// splitGlob splits a glob pattern into the directory its fixed leading
// elements name (against dir, default the cwd) and the rest. A pattern
// under "~/" stays under the home, which the engine knows. A rest that
// could lead elsewhere (a ".." after a wildcard, a brace group holding a
// "/") is judged from the root, so the engine sees it may reach outside.
func (m *mapper) splitGlob(pattern, dir string) (base, rest string) {
	if dir == "" {
		dir = m.in.Cwd
	}
	full, root := pattern, "/"
	switch {
	case strings.HasPrefix(pattern, "~/"):
		full, root = pattern[2:], "~/"
	case !filepath.IsAbs(pattern):
		full = dir + "/" + pattern
	}
	parts := strings.Split(full, "/")
	i := 0
	for i < len(parts) && !strings.ContainsAny(parts[i], `*?[]{}\`) {
		i++
	}
	base = filepath.Clean("/" + strings.Join(parts[:i], "/"))
	if root == "~/" {
		base = "~" + strings.TrimSuffix(base, "/")
	}
	rest = strings.Join(parts[i:], "/")
	if escapes(rest) {
		return "/", strings.TrimPrefix(filepath.Clean("/"+strings.Join(parts, "/")), "/")
	}
	return base, rest
}

// escapes reports whether the wildcard part of a glob may name a path
// outside the directory it is under.
func escapes(rest string) bool {
	for _, el := range strings.Split(rest, "/") {
		if el == ".." {
			return true
		}
	}
	depth := 0
	for _, c := range rest {
		switch c {
		case '{':
			depth++
		case '}':
			depth = max(depth-1, 0)
		case '/':
			if depth > 0 {
				return true
			}
		}
	}
	return false
}

// readMany reads each path or glob of Gemini CLI's read_many_files, a
// directory whole: each is a recursive read.
func (m *mapper) readMany() []Call {
	var entries []string
	for _, key := range []string{"paths", "include"} {
		v, ok := m.in.ToolInput[key]
		if !ok || v == nil {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			m.fail("%s is not a list", key)
			return nil
		}
		for _, e := range list {
			s, ok := e.(string)
			if !ok || s == "" || strings.ContainsRune(s, 0) {
				m.fail("%s holds an entry that is not a path", key)
				return nil
			}
			entries = append(entries, s)
		}
	}
	if len(entries) == 0 {
		m.fail("no paths")
		return nil
	}
	var c []Call
	for _, e := range entries {
		base, rest := m.splitGlob(e, "")
		args := map[string]any{"pattern": "", "path": base}
		if rest != "" {
			args["glob"] = rest
		}
		c = append(c, Call{Tool: builtin("search_text"), Args: args})
	}
	return c
}

// webFetch judges each URL Gemini CLI's web_fetch prompt names as an
// http_get. Gemini CLI takes every whitespace-separated token holding
// "://" for a URL and parses it with WHATWG's URL parser, so each such
// token is judged whole, as it is fetched; one whose host that parser
// could read otherwise than Go does (see cleanURL) makes the call
// understood no further: it is denied. A prompt that names no URL (or
// more than maxURLs, which are not all judged) is judged as data sent
// away, at network risk.
func (m *mapper) webFetch(prompt string) []Call {
	if m.err != nil {
		return nil
	}
	var urls []string
	for _, tok := range strings.Fields(prompt) {
		if !strings.Contains(tok, "://") {
			continue
		}
		if why := cleanURL(tok); why != "" {
			m.fail("the prompt's URL %q %s; gemini-cli would fetch what its own URL parser makes of it, which is not judged", tok, why)
			return nil
		}
		urls = append(urls, tok)
	}
	var c []Call
	if len(urls) == 0 || len(urls) > maxURLs {
		c = append(c, Call{Tool: webFetchPrompt, Args: map[string]any{"prompt": prompt}})
		urls = urls[:min(len(urls), maxURLs)]
	}
	for _, u := range urls {
		c = append(c, Call{Tool: builtin("http_get"), Args: map[string]any{"url": u}})
		if raw := githubRaw(u); raw != "" {
			c = append(c, Call{Tool: builtin("http_get"), Args: map[string]any{"url": raw}})
		}
	}
	return c
}

// githubRaw is the URL Gemini CLI fetches instead of a GitHub blob page:
// the file on raw.githubusercontent.com, judged too.
func githubRaw(u string) string {
	p, err := url.Parse(u)
	if err != nil || !strings.EqualFold(p.Hostname(), "github.com") || !strings.Contains(p.Path, "/blob/") {
		return ""
	}
	p.Host = "raw.githubusercontent.com"
	p.Path = strings.Replace(p.Path, "/blob/", "/", 1)
	p.RawPath = ""
	return p.String()
}

// cleanURL returns "" when u is an http or https URL whose host every
// parser reads alike, else what is wrong with it. Go's net/url and WHATWG's
// URL parser (what Gemini CLI and Claude Code use) disagree on a
// backslash (WHATWG reads it as "/"), on quotes and angle brackets before
// an "@", on percent-escapes and non-ASCII letters in a host (WHATWG
// decodes and maps them) and on numeric hosts (WHATWG reads "0x7f.1" as
// 127.0.0.1). So the authority must hold none of those, and no user
// name or password.
func cleanURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return "is not an http or https URL"
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if strings.ContainsAny(rest, `\`) {
		return "holds a backslash, which the agent's URL parser reads as \"/\""
	}
	if strings.ContainsAny(authority, "'\"`<>@%") {
		return "has a host that parsers read differently (a quote, angle bracket, \"@\" or percent-escape before the path)"
	}
	p, err := url.Parse(u)
	if err != nil {
		return "does not parse as a URL"
	}
	host := p.Hostname()
	if host == "" || p.User != nil {
		return "names no plain host"
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == ':') {
			return "has a host with characters other than ASCII letters, digits, '.' and '-'"
		}
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if last := labels[len(labels)-1]; last != "" && '0' <= last[0] && last[0] <= '9' {
		// A numeric host: only a dotted quad as Go writes it reads alike.
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is4() || ip.String() != host {
			return "has a numeric host that parsers read differently"
		}
	}
	return ""
}

// maxURLs bounds the URLs of one web_fetch prompt judged one by one.
const maxURLs = 20
