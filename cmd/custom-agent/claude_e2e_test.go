package main

import (
	"context"
	"encoding/json"
	"errors"
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

	"github.com/custom-agent/custom-agent/internal/testenv"
)

// claudeCode is the real Claude Code CLI, pinned by
// testdata/agents/package-lock.json and installed there by scripts/test
// (npm ci); a test that needs it skips without it, and fails in CI.
func claudeCode(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("testdata", "agents", "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if testenv.InCI() {
			t.Fatalf("Claude Code is not installed (%v), and CI must run every test: scripts/test installs it (npm ci in cmd/custom-agent/testdata/agents)", err)
		}
		t.Skipf("Claude Code is not installed: run npm ci in cmd/custom-agent/testdata/agents (%v)", err)
	}
	return bin
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
	claude := claudeCode(t)
	gate := buildGate(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, data := filepath.Join(base, "home"), filepath.Join(base, "data")
	proj := filepath.Join(home, "proj")
	victim := filepath.Join(proj, "victim")
	for path, content := range map[string]string{
		filepath.Join(proj, ".git", "HEAD"): "ref: refs/heads/main\n",
		victim:                              "still here\n",
		filepath.Join(home, ".config", "custom-agent", "policy.json"): `{"version": 1, "rules": [{"id": "no-rm-e2e", "tool": "shell", "command": "rm", "decision": "deny"}]}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CUSTOM_AGENT_DATA_DIR=" + data,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	if r := runBinary(t, self, proj, append(env, asCLI+"=1"), "", "hook", "install", "claude-code", "--command", gate+" hook claude-code"); r.code != 0 {
		t.Fatalf("hook install: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	api := &fakeAnthropic{command: "rm -rf victim"}
	srv := httptest.NewServer(api)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, claude, "-p", "Remove the file victim.", "--output-format", "json")
	c.Dir, c.Stdin = proj, strings.NewReader("")
	c.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-ant-e2e-not-a-key",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1", "DISABLE_BUG_COMMAND=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("claude -p: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var out struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil || out.SessionID == "" {
		t.Fatalf("claude's output is not its JSON result (%v):\n%s", err, stdout.String())
	}

	if b, err := os.ReadFile(victim); err != nil || string(b) != "still here\n" {
		t.Errorf("the denied rm ran: victim is %q, %v", b, err)
	}
	api.mu.Lock()
	results := api.results
	api.mu.Unlock()
	if len(results) != 1 {
		t.Fatalf("%d tool results came back, want 1 (%d requests):\n%s", len(results), api.calls, stderr.String())
	}
	var res struct {
		ToolUseID string          `json:"tool_use_id"`
		IsError   bool            `json:"is_error"`
		Content   json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(results[0], &res); err != nil {
		t.Fatal(err)
	}
	if res.ToolUseID != "toolu_e2e_1" || !res.IsError || !strings.Contains(string(res.Content), "Rule `no-rm-e2e`") || !strings.Contains(string(res.Content), "denies this call") {
		t.Errorf("the tool result does not carry the gate's deny:\n%s", results[0])
	}

	id := "claude-code-" + out.SessionID
	cli := func(args ...string) processResult {
		return runBinary(t, self, proj, append(env, asCLI+"=1"), "", args...)
	}
	s := cli("sessions", "--json")
	if s.code != 0 || !strings.Contains(s.stdout, `"id": "`+id+`"`) || !strings.Contains(s.stdout, `"source": "claude-code"`) {
		t.Errorf("sessions: exit %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	l := cli("log", "--json", id)
	if l.code != 0 || !strings.Contains(l.stdout, `"sessionSource":"claude-code"`) || !strings.Contains(l.stdout, `"decision":"deny"`) || !strings.Contains(l.stdout, "no-rm-e2e") {
		t.Errorf("log: exit %d\n%s%s", l.code, l.stdout, l.stderr)
	}
	if r := cli("audit", "verify", id); r.code != 0 {
		t.Errorf("audit verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Error("claude did not finish in time")
	}
}
