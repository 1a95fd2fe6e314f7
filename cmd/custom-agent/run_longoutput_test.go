package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLongOutputTailReachesTheModel (issue 10 item 6): a failure printed at
// the end of a 400-line output reaches the next Chat Completions request,
// with the count of the bytes left out and how to read them, and the
// terminal shows it too.
func TestLongOutputTailReachesTheModel(t *testing.T) {
	const failure = "--- FAIL: TestLast (0.01s): want 2, got 3"
	var calls atomic.Int32
	var second string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		switch calls.Add(1) {
		case 1:
			args, _ := json.Marshal(map[string]string{"command": `for i in $(seq 1 400); do echo "=== RUN TestCase$i ... ok"; done; echo '` + failure + `'; exit 1`})
			call, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
				"function": map[string]string{"name": "shell", "arguments": string(args)}}}})
			io.WriteString(w, chunk(string(call), ""))
			io.WriteString(w, chunk(`{}`, "tool_calls"))
		default:
			second = string(body)
			io.WriteString(w, chunk(`{"role":"assistant","content":"TestLast fails."}`, ""))
			io.WriteString(w, chunk(`{}`, "stop"))
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	out, errOut, err := runWithInput(t, "allow_once\n", "--data-dir", t.TempDir(), "run", "--model", "openai:test-model", "--cwd", t.TempDir(), "run the tests")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(second), &req); err != nil {
		t.Fatalf("second request: %v", err)
	}
	var result string
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == "call_1" {
			result = m.Content
		}
	}
	for _, want := range []string{"=== RUN TestCase1 ... ok\n", failure, "[exit code 1]", "bytes of stdout omitted", `read_output {"toolCallId":"call_1","stream":"stdout","offset":`} {
		if !strings.Contains(result, want) {
			t.Errorf("the tool result sent to the model lacks %q:\n%s", want, result)
		}
	}
	if strings.Contains(result, "=== RUN TestCase165 ") {
		t.Errorf("the middle of the output was sent whole: %d bytes", len(result))
	}
	if !strings.Contains(out, failure) || !strings.Contains(out, "bytes not shown") {
		t.Errorf("the terminal does not show the end of the output:\n%s", out)
	}
}
