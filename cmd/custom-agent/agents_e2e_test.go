package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// installedAgent is the real agent CLI name (claude, gemini), pinned by
// testdata/agents/package-lock.json and installed there by scripts/test
// (npm ci); a test that needs it skips without it, and fails in CI.
func installedAgent(t *testing.T, name string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("testdata", "agents", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if testenv.InCI() {
			t.Fatalf("%s is not installed (%v), and CI must run every test: scripts/test installs it (npm ci in cmd/custom-agent/testdata/agents)", name, err)
		}
		t.Skipf("%s is not installed: run npm ci in cmd/custom-agent/testdata/agents (%v)", name, err)
	}
	if name == "gemini" {
		testenv.NeedProgram(t, "node")
	}
	return bin
}

// agentE2E is a project whose user policy denies rm (rule no-rm-e2e),
// with a file victim in it and the gate installed as the agent's hook by
// custom-agent hook install, and the programs and environment to run
// the agent and custom-agent there.
type agentE2E struct {
	self, home, proj, victim string
	env                      []string
}

func newAgentE2E(t *testing.T, agent string) *agentE2E {
	t.Helper()
	gate := buildGate(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &agentE2E{self: self, home: filepath.Join(base, "home")}
	e.proj = filepath.Join(e.home, "proj")
	e.victim = filepath.Join(e.proj, "victim")
	for path, content := range map[string]string{
		filepath.Join(e.proj, ".git", "HEAD"): "ref: refs/heads/main\n",
		e.victim:                              "still here\n",
		filepath.Join(e.home, ".config", "custom-agent", "policy.json"): `{"version": 1, "rules": [{"id": "no-rm-e2e", "tool": "shell", "command": "rm", "decision": "deny"}]}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.env = []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH"), "CUSTOM_AGENT_DATA_DIR=" + filepath.Join(base, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(e.home, ".config")}
	if r := e.cli(t, "hook", "install", agent, "--command", gate+" hook "+agent); r.code != 0 {
		t.Fatalf("hook install: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return e
}

// cli runs custom-agent in the project.
func (e *agentE2E) cli(t *testing.T, args ...string) processResult {
	t.Helper()
	return runBinary(t, e.self, e.proj, append(e.env, asCLI+"=1"), "", args...)
}

// run runs the agent in the project, with env added, and returns its
// standard output.
func (e *agentE2E) run(t *testing.T, env []string, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Dir, c.Stdin, c.Env = e.proj, strings.NewReader(""), append(append([]string{}, e.env...), env...)
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%s: %v (%v)\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), err, ctx.Err(), stdout.String(), stderr.String())
	}
	return stdout.String()
}

// checkDenied checks that the denied rm did not run, that result (what
// the agent sent the model back) carries the gate's reason, and that
// custom-agent sessions, log and audit verify show the agent's session,
// with its source.
func (e *agentE2E) checkDenied(t *testing.T, agent, result string) {
	t.Helper()
	if b, err := os.ReadFile(e.victim); err != nil || string(b) != "still here\n" {
		t.Errorf("the denied rm ran: victim is %q, %v", b, err)
	}
	if !strings.Contains(result, "Rule `no-rm-e2e`") || !strings.Contains(result, "denies this call") {
		t.Errorf("what the agent sent back does not carry the gate's deny:\n%s", result)
	}
	s := e.cli(t, "sessions", "--json")
	var list []struct {
		ID     string `json:"id"`
		Source string `json:"source"`
	}
	if err := json.Unmarshal([]byte(s.stdout), &list); s.code != 0 || err != nil || len(list) != 1 || list[0].Source != agent {
		t.Fatalf("sessions (want one, of %s): exit %d, %v\n%s%s", agent, s.code, err, s.stdout, s.stderr)
	}
	l := e.cli(t, "log", "--json", list[0].ID)
	if l.code != 0 || !strings.Contains(l.stdout, `"sessionSource":"`+agent+`"`) || !strings.Contains(l.stdout, `"decision":"deny"`) || !strings.Contains(l.stdout, "no-rm-e2e") {
		t.Errorf("log: exit %d\n%s%s", l.code, l.stdout, l.stderr)
	}
	if r := e.cli(t, "audit", "verify", list[0].ID); r.code != 0 {
		t.Errorf("audit verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// fakeAnthropic is a local server speaking the Anthropic Messages API as
// Claude Code calls it (POST /v1/messages, streamed as server-sent
// events): a request that offers the Bash tool and carries no tool result
// gets a tool_use of Bash running command; any other gets the text
// "done". It keeps the tool results it is sent.
type fakeAnthropic struct {
	command string
	mu      sync.Mutex
	results []json.RawMessage // the tool_result blocks received
	calls   int
}

func (f *fakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":10}`) // count_tokens and the like
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var blocks []json.RawMessage
	if n := len(req.Messages); n > 0 {
		_ = json.Unmarshal(req.Messages[n-1].Content, &blocks) // a string content is no block
	}
	answered := false
	f.mu.Lock()
	f.calls++
	for _, b := range blocks {
		var kind struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &kind) == nil && kind.Type == "tool_result" {
			f.results = append(f.results, b)
			answered = true
		}
	}
	f.mu.Unlock()
	bash := false
	for _, tl := range req.Tools {
		bash = bash || tl.Name == "Bash"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(typ string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	type obj = map[string]any
	send("message_start", obj{"type": "message_start", "message": obj{"id": "msg_e2e", "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": 10, "output_tokens": 1}}})
	stop := "end_turn"
	if bash && !answered {
		input, _ := json.Marshal(obj{"command": f.command, "description": "the end-to-end test's call"})
		send("content_block_start", obj{"type": "content_block_start", "index": 0,
			"content_block": obj{"type": "tool_use", "id": "toolu_e2e_1", "name": "Bash", "input": obj{}}})
		send("content_block_delta", obj{"type": "content_block_delta", "index": 0,
			"delta": obj{"type": "input_json_delta", "partial_json": string(input)}})
		stop = "tool_use"
	} else {
		send("content_block_start", obj{"type": "content_block_start", "index": 0, "content_block": obj{"type": "text", "text": ""}})
		send("content_block_delta", obj{"type": "content_block_delta", "index": 0, "delta": obj{"type": "text_delta", "text": "done"}})
	}
	send("content_block_stop", obj{"type": "content_block_stop", "index": 0})
	send("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": obj{"output_tokens": 5}})
	send("message_stop", obj{"type": "message_stop"})
}

// TestRealClaudeCode runs the real Claude Code CLI in print mode (-p)
// against a local server speaking the Anthropic Messages API, with
// custom-agent-gate installed as its PreToolUse hook by custom-agent hook
// install. The model asks for Bash `rm -rf victim`; a rule of the user's
// policy denies it. The gate's deny must reach Claude Code: the command
// does not run (victim is still there), and the next request carries our
// reason in the tool_result. Then custom-agent sessions shows the session
// with source claude-code, and the log has the decision.
//
// Claude Code runs offline with a made-up ANTHROPIC_API_KEY (the local
// server takes any) and without its telemetry, error reports, update
// checks and other nonessential traffic (the DISABLE_* variables and
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC).
func TestRealClaudeCode(t *testing.T) {
	claude := installedAgent(t, "claude")
	e := newAgentE2E(t, "claude-code")
	api := &fakeAnthropic{command: "rm -rf victim"}
	srv := httptest.NewServer(api)
	defer srv.Close()
	stdout := e.run(t, []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-ant-e2e-not-a-key",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1", "DISABLE_BUG_COMMAND=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"},
		claude, "-p", "Remove the file victim.", "--output-format", "json")
	var out struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || out.SessionID == "" {
		t.Fatalf("claude's output is not its JSON result (%v):\n%s", err, stdout)
	}
	api.mu.Lock()
	results := api.results
	api.mu.Unlock()
	if len(results) != 1 {
		t.Fatalf("%d tool results came back, want 1 (%d requests)", len(results), api.calls)
	}
	var res struct {
		ToolUseID string `json:"tool_use_id"`
		IsError   bool   `json:"is_error"`
	}
	if err := json.Unmarshal(results[0], &res); err != nil || res.ToolUseID != "toolu_e2e_1" || !res.IsError {
		t.Errorf("the tool result is not the failed toolu_e2e_1 (%v):\n%s", err, results[0])
	}
	e.checkDenied(t, "claude-code", string(results[0]))
	if r := e.cli(t, "log", "--json", "claude-code-"+out.SessionID); r.code != 0 {
		t.Errorf("the hook session is not claude's session %s: exit %d\n%s", out.SessionID, r.code, r.stderr)
	}
}

// fakeGemini is a local server speaking the Gemini API as Gemini CLI
// calls it (POST /v1beta/models/MODEL:streamGenerateContent?alt=sse,
// and :generateContent, :countTokens): a request that declares
// run_shell_command and carries no function response gets a
// functionCall of it running command; any other the text "done". It
// keeps the function responses it is sent.
type fakeGemini struct {
	command   string
	mu        sync.Mutex
	responses []json.RawMessage
	calls     int
}

func (f *fakeGemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || strings.HasSuffix(r.URL.Path, ":countTokens") {
		io.WriteString(w, `{"totalTokens":10}`)
		return
	}
	var req struct {
		Contents []struct {
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	answered := false
	f.mu.Lock()
	f.calls++
	if n := len(req.Contents); n > 0 {
		for _, p := range req.Contents[n-1].Parts {
			if fr, ok := p["functionResponse"]; ok {
				f.responses = append(f.responses, fr)
				answered = true
			}
		}
	}
	f.mu.Unlock()
	shell := false
	for _, tl := range req.Tools {
		for _, d := range tl.FunctionDeclarations {
			shell = shell || d.Name == "run_shell_command"
		}
	}
	type obj = map[string]any
	part := obj{"text": "done"}
	if shell && !answered {
		part = obj{"functionCall": obj{"name": "run_shell_command", "args": obj{"command": f.command, "description": "the end-to-end test's call"}}}
	}
	b, _ := json.Marshal(obj{
		"candidates":    []any{obj{"content": obj{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": obj{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
	})
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		return
	}
	w.Write(b)
}

// TestRealGeminiCLI is TestRealClaudeCode for Gemini CLI: gemini -p in
// YOLO mode (-y: Gemini CLI itself would run every call; only the gate's
// BeforeTool answer stands between the model and rm), against a local
// server speaking the Gemini API.
//
// Gemini CLI runs offline this way with GOOGLE_GEMINI_BASE_URL set to the
// local server, a made-up GEMINI_API_KEY, the API key chosen as its way to
// authenticate (security.auth.selectedType in ~/.gemini/settings.json),
// its usage statistics off, the project trusted (~/.gemini/
// trustedFolders.json: an untrusted folder turns YOLO off), and a model
// named (-m: the default "auto" first asks a classifier model to route).
func TestRealGeminiCLI(t *testing.T) {
	gemini := installedAgent(t, "gemini")
	e := newAgentE2E(t, "gemini-cli")
	for path, content := range map[string]string{
		filepath.Join(e.home, ".gemini", "settings.json"):       `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}`,
		filepath.Join(e.home, ".gemini", "trustedFolders.json"): `{"` + e.proj + `": "TRUST_FOLDER"}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	api := &fakeGemini{command: "rm -rf victim"}
	srv := httptest.NewServer(api)
	defer srv.Close()
	e.run(t, []string{"GOOGLE_GEMINI_BASE_URL=" + srv.URL, "GEMINI_API_KEY=e2e-not-a-key", "GEMINI_CLI_NO_RELAUNCH=1", "NO_COLOR=1"},
		gemini, "-m", "gemini-2.5-flash", "-y", "-p", "Remove the file victim.", "--output-format", "json")
	api.mu.Lock()
	responses := api.responses
	api.mu.Unlock()
	if len(responses) != 1 {
		t.Fatalf("%d function responses came back, want 1 (%d requests)", len(responses), api.calls)
	}
	e.checkDenied(t, "gemini-cli", string(responses[0]))
}
