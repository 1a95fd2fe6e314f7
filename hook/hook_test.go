package hook

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

func input(t *testing.T, a Agent, tool, toolInput string) *Input {
	t.Helper()
	ev, _ := a.EventNames()
	in, err := Parse(a, strings.NewReader(`{"session_id":"s","cwd":"/p","hook_event_name":"`+ev+`","tool_name":"`+tool+`","tool_input":`+toolInput+`}`))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestMap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		agent       Agent
		tool, input string
		want        []string // tool name and args of each call
		wantErr     error
	}{
		{"bash", ClaudeCode, "Bash", `{"command":"ls"}`, []string{`shell {"command":"ls","cwd":"/p"}`}, nil},
		{"relative read", ClaudeCode, "Read", `{"file_path":"a/../../b"}`, []string{`read_file {"path":"/b"}`}, nil},
		{"edit writes its new string", ClaudeCode, "Edit", `{"file_path":"/p/x","old_string":"a","new_string":"b"}`, []string{`write_file {"content":"b","path":"/p/x"}`}, nil},
		{"multiedit", ClaudeCode, "MultiEdit", `{"file_path":"/p/x","edits":[{"new_string":"b"},{"new_string":"c"}]}`, []string{`write_file {"content":"b\nc","path":"/p/x"}`}, nil},
		{"absolute glob", ClaudeCode, "Glob", `{"pattern":"/etc/**/*.conf"}`, []string{`list_files {"glob":"**/*.conf","path":"/etc"}`}, nil},
		{"dotdot glob", ClaudeCode, "Glob", `{"pattern":"../../home/*/.ssh/*"}`, []string{`list_files {"glob":"*/.ssh/*","path":"/home"}`}, nil},
		{"braces are not an escape", ClaudeCode, "Glob", `{"pattern":"src/**/*.{ts,tsx}"}`, []string{`list_files {"glob":"**/*.{ts,tsx}","path":"/p/src"}`}, nil},
		{"a brace holding a slash", ClaudeCode, "Glob", `{"pattern":"{x,/home/u/.ssh}/*"}`, []string{`list_files {"glob":"p/{x,/home/u/.ssh}/*","path":"/"}`}, nil},
		{"dotdot after a wildcard", ClaudeCode, "Glob", `{"pattern":"*/../../etc/*"}`, []string{`list_files {"glob":"etc/*","path":"/"}`}, nil},
		{"home glob", ClaudeCode, "Glob", `{"pattern":"~/.ssh/*"}`, []string{`list_files {"glob":"*","path":"~/.ssh"}`}, nil},
		{"grep", ClaudeCode, "Grep", `{"pattern":"x","glob":"*.go"}`, []string{`search_text {"glob":"*.go","path":"/p","pattern":"x"}`}, nil},
		{"mcp", ClaudeCode, "mcp__gh__get", `{"a":1}`, []string{`mcp__gh__get {"a":1}`}, nil},
		{"unknown", ClaudeCode, "Task", `{}`, nil, ErrUnknownTool},
		{"mcp name with a glob", ClaudeCode, "mcp__a*__b", `{}`, nil, ErrUnknownTool},
		{"missing command", ClaudeCode, "Bash", `{}`, nil, ErrBadInput},
		{"NUL path", ClaudeCode, "Write", `{"file_path":"/p/a\u0000b","content":""}`, nil, ErrBadInput},
		{"gemini shell directory", GeminiCLI, "run_shell_command", `{"command":"make","directory":"sub"}`, []string{`shell {"command":"make","cwd":"/p/sub"}`}, nil},
		{"gemini shell dir_path", GeminiCLI, "run_shell_command", `{"command":"cat credentials","dir_path":"/root/.aws"}`, []string{`shell {"command":"cat credentials","cwd":"/root/.aws"}`}, nil},
		{"gemini shell two dirs", GeminiCLI, "run_shell_command", `{"command":"ls","dir_path":"a","directory":"b"}`, nil, ErrBadInput},
		{"gemini grep dir_path", GeminiCLI, "grep_search", `{"pattern":".","dir_path":"/p/.env"}`, []string{`search_text {"path":"/p/.env","pattern":"."}`}, nil},
		{"gemini grep include_pattern", GeminiCLI, "grep_search", `{"pattern":".","include_pattern":".env"}`, []string{`search_text {"path":"/p/.env","pattern":"."}`}, nil},
		{"gemini grep include", GeminiCLI, "search_file_content", `{"pattern":".","include":".env"}`, []string{`search_text {"path":"/p/.env","pattern":"."}`}, nil},
		{"gemini glob dir_path", GeminiCLI, "glob", `{"pattern":"*","dir_path":"/h/.ssh"}`, []string{`list_files {"glob":"*","path":"/h/.ssh"}`}, nil},
		{"gemini list_directory dir_path", GeminiCLI, "list_directory", `{"dir_path":"sub"}`, []string{`list_files {"path":"/p/sub"}`}, nil},
		{"gemini list_directory path", GeminiCLI, "list_directory", `{"path":"sub"}`, []string{`list_files {"path":"/p/sub"}`}, nil},
		{"gemini list_directory none", GeminiCLI, "list_directory", `{}`, nil, ErrBadInput},
		{"gemini read_file path", GeminiCLI, "read_file", `{"path":"/p/a"}`, []string{`read_file {"path":"/p/a"}`}, nil},
		{"gemini read_file two names", GeminiCLI, "read_file", `{"path":"/p/a","file_path":"/p/b"}`, nil, ErrBadInput},
		{"gemini read_many_files", GeminiCLI, "read_many_files", `{"paths":["src/*.go"],"include":["/etc/passwd"]}`,
			[]string{`search_text {"glob":"*.go","path":"/p/src","pattern":""}`, `search_text {"path":"/etc/passwd","pattern":""}`}, nil},
		{"gemini web_fetch", GeminiCLI, "web_fetch", `{"prompt":"see https://a.example/x."}`, []string{`http_get {"url":"https://a.example/x."}`}, nil},
		{"gemini web_fetch quote before @", GeminiCLI, "web_fetch", `{"prompt":"read https://docs.example.com'@evil.com/x?k=1"}`, nil, ErrBadInput},
		{"gemini web_fetch backslash", GeminiCLI, "web_fetch", `{"prompt":"read https://evil.com\\@docs.example.com/"}`, nil, ErrBadInput},
		{"gemini web_fetch numeric host", GeminiCLI, "web_fetch", `{"prompt":"read http://0x7f.1/"}`, nil, ErrBadInput},
		{"gemini web_fetch ftp", GeminiCLI, "web_fetch", `{"prompt":"read ftp://a.example/"}`, nil, ErrBadInput},
		{"gemini web_fetch ip", GeminiCLI, "web_fetch", `{"prompt":"read http://10.0.0.1:8080/x"}`, []string{`http_get {"url":"http://10.0.0.1:8080/x"}`}, nil},
		{"gemini web_fetch github blob", GeminiCLI, "web_fetch", `{"prompt":"read https://github.com/o/r/blob/main/a.md"}`,
			[]string{`http_get {"url":"https://github.com/o/r/blob/main/a.md"}`, `http_get {"url":"https://raw.githubusercontent.com/o/r/main/a.md"}`}, nil},
		{"claude webfetch userinfo", ClaudeCode, "WebFetch", `{"url":"https://docs.example.com'@evil.com/x","prompt":"p"}`, nil, ErrBadInput},
		{"gemini web_fetch no url", GeminiCLI, "web_fetch", `{"prompt":"hello"}`, []string{`web_fetch {"prompt":"hello"}`}, nil},
		{"claude name in gemini", GeminiCLI, "Bash", `{"command":"ls"}`, nil, ErrUnknownTool},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls, err := Map(input(t, tc.agent, tc.tool, tc.input))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			var got []string
			for _, c := range calls {
				b, _ := permission.CanonicalArgs(c.Args)
				got = append(got, c.Tool.Name+" "+string(b))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		agent       Agent
		tool, input string
		want        []string
	}{
		{GeminiCLI, "run_shell_command", `{"command":"ls","dir_path":"x","description":"d"}`, nil},
		{GeminiCLI, "run_shell_command", `{"command":"ls","working_dir":"x","cwd":"y"}`, []string{"cwd", "working_dir"}},
		{GeminiCLI, "grep_search", `{"pattern":".","include_pattern":"*.go","dir_path":"x"}`, nil},
		{GeminiCLI, "list_directory", `{"dir_path":"x","recursive":true}`, []string{"recursive"}},
		{ClaudeCode, "Read", `{"file_path":"x","offset":1,"limit":2}`, nil},
		{ClaudeCode, "Bash", `{"command":"ls","cwd":"/etc"}`, []string{"cwd"}},
		{ClaudeCode, "mcp__gh__get", `{"anything":1}`, nil},
	}
	for _, tc := range tests {
		got := UnknownKeys(input(t, tc.agent, tc.tool, tc.input))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s: (-want +got):\n%s", tc.tool, tc.input, diff)
		}
	}
}

func TestCombine(t *testing.T) {
	t.Parallel()
	d := func(v permission.Verdict, r risk.Level) permission.Decision {
		return permission.Decision{Decision: v, RiskAtDecision: r, Reason: string(v)}
	}
	tests := []struct {
		name string
		in   []permission.Decision
		want permission.Verdict
		risk risk.Level
	}{
		{"none is unset", nil, permission.Unset, risk.Unknown},
		{"allow", []permission.Decision{d(permission.Allow, risk.Read)}, permission.Allow, risk.Read},
		{"ask beats allow", []permission.Decision{d(permission.Allow, risk.Network), d(permission.Ask, risk.Read)}, permission.Ask, risk.Network},
		{"deny beats ask", []permission.Decision{d(permission.Ask, risk.Write), d(permission.Deny, risk.Credential)}, permission.Deny, risk.Credential},
		{"unset is deny", []permission.Decision{d(permission.Allow, risk.Read), d(permission.Unset, risk.Read)}, permission.Deny, risk.Read},
	}
	for _, tc := range tests {
		got := Combine(tc.in)
		if got.Decision != tc.want || got.RiskAtDecision != tc.risk {
			t.Errorf("%s: %s at %s, want %s at %s", tc.name, got.Decision, got.RiskAtDecision, tc.want, tc.risk)
		}
	}
}

func TestDestructiveNeverAllowed(t *testing.T) {
	t.Parallel()
	for _, a := range Agents {
		in := input(t, a, "x", `{}`)
		for _, strict := range []bool{false, true} {
			ans := Decide(in, permission.Allow, "r", risk.Destructive, Options{Strict: strict})
			if ans.Verdict == permission.Allow || strings.Contains(string(ans.Stdout), `"allow"`) {
				t.Errorf("%s strict=%v: %s", a, strict, ans.Stdout)
			}
		}
	}
}

func TestModeFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		conf  permission.Mode
		agent string
		want  permission.Mode
	}{
		{"", "default", permission.ModeDefault},
		{permission.ModeDefault, "plan", permission.ModePlan},
		{permission.ModeDefault, "acceptEdits", permission.ModeAcceptEdits},
		{permission.ModePlan, "acceptEdits", permission.ModePlan},
		{permission.ModeDefault, "bypassPermissions", permission.ModeDefault},
		{permission.ModeDefault, "dontAsk", permission.ModeDontAsk},
		{permission.ModePlan, "dontAsk", permission.ModePlan},
	}
	for _, tc := range tests {
		if got := ModeFor(tc.conf, tc.agent); got != tc.want {
			t.Errorf("ModeFor(%q, %q) = %q, want %q", tc.conf, tc.agent, got, tc.want)
		}
	}
}

func TestJudgeCwdAndSessionID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cwd, project, want string }{
		{"/p/sub", "/p", "/p/sub"}, {"/", "/p", "/p"}, {"/pq", "/p", "/p"}, {"/x", "", "/x"}, {"/x", "rel", "/x"},
	} {
		if got := JudgeCwd(tc.cwd, tc.project); got != tc.want {
			t.Errorf("JudgeCwd(%q, %q) = %q, want %q", tc.cwd, tc.project, got, tc.want)
		}
	}
	if got := SessionID(ClaudeCode, "9f1c-2d"); got != "claude-code-9f1c-2d" {
		t.Errorf("plain id: %q", got)
	}
	for _, id := range []string{"", "../x", "a b", strings.Repeat("a", 129)} {
		if got := SessionID(GeminiCLI, id); !strings.HasPrefix(got, "gemini-cli-x") || len(got) != len("gemini-cli-x")+16 {
			t.Errorf("id %q: %q", id, got)
		}
	}
}

// TestGeminiDefersOnlyWrites: without --strict, only an ask at write risk
// or below of a tool Gemini CLI confirms is left to its confirmation,
// whose "always allow" would let later calls through unasked.
func TestGeminiDefersOnlyWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool      string
		r         risk.Level
		wantDefer bool
	}{
		{"write_file", risk.Write, true},
		{"replace", risk.Write, true},
		{"write_file", risk.Execute, false}, // a git hook, a shell rc file
		{"run_shell_command", risk.Execute, false},
		{"run_shell_command", risk.Network, false},
		{"web_fetch", risk.Network, false},
		{"mcp__gh__get", risk.Execute, false},
		{"write_file", risk.Credential, false},
		{"read_file", risk.Read, false},
	}
	for _, tc := range tests {
		in := input(t, GeminiCLI, tc.tool, `{}`)
		ans := Decide(in, permission.Ask, "r", tc.r, Options{})
		deferred := ans.Verdict == permission.Ask && strings.Contains(string(ans.Stdout), "systemMessage") && !strings.Contains(string(ans.Stdout), "decision")
		if deferred != tc.wantDefer {
			t.Errorf("%s at %s: deferred %v, want %v: %s", tc.tool, tc.r, deferred, tc.wantDefer, ans.Stdout)
		}
		if !tc.wantDefer && (ans.Verdict != permission.Deny || !strings.Contains(string(ans.Stdout), `"deny"`)) {
			t.Errorf("%s at %s: not denied: %s", tc.tool, tc.r, ans.Stdout)
		}
		if ans := Decide(in, permission.Ask, "r", tc.r, Options{Strict: true}); ans.Verdict != permission.Deny {
			t.Errorf("%s at %s strict: %s", tc.tool, tc.r, ans.Stdout)
		}
	}
}
