package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/custom-agent/custom-agent/event"
)

// chunk is one Chat Completions stream chunk with the given choice delta.
func chunk(delta string, finish string) string {
	fin := "null"
	if finish != "" {
		fin = `"` + finish + `"`
	}
	return fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764493200,"model":"test-model","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, fin)
}

// TestRunAgainstOpenAICompatibleServer runs a whole turn with the openai
// provider against a local server speaking the Chat Completions streaming
// format: the model asks for a shell call (its arguments split over
// chunks), the call goes through the gate and runs, and the second request
// carries the tool result back.
func TestRunAgainstOpenAICompatibleServer(t *testing.T) {
	withoutBuiltinRules(t)
	var calls atomic.Int32
	var second string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		switch calls.Add(1) {
		case 1:
			io.WriteString(w, chunk(`{"role":"assistant","content":"Let me check."}`, ""))
			io.WriteString(w, chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}]}`, ""))
			io.WriteString(w, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"comm"}}]}`, ""))
			io.WriteString(w, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"and\":\"echo from-the-tool\"}"}}]}`, ""))
			io.WriteString(w, chunk(`{}`, "tool_calls"))
		default:
			second = string(body)
			io.WriteString(w, chunk(`{"role":"assistant","content":"The tool said hello."}`, ""))
			io.WriteString(w, chunk(`{}`, "stop"))
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	out, errOut, err := runWithInput(t, "allow_once\n", "--data-dir", t.TempDir(), "run", "--model", "openai:test-model", "--cwd", t.TempDir(), "--json", "say hello")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	var types []string
	var completed event.ToolCompletedPayload
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not an event: %q", line)
		}
		types = append(types, string(e.Type))
		if e.Type == event.ToolCompleted {
			json.Unmarshal(e.Payload, &completed)
		}
	}
	want := "session.started turn.started user.message policy.snapshot context.built model.delta model.tool_call_requested permission.requested permission.resolved tool.started tool.completed context.built model.delta turn.completed"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	if completed.StdoutPreview != "from-the-tool\n" {
		t.Fatalf("tool output %q", completed.StdoutPreview)
	}
	if !strings.Contains(second, `"tool_call_id":"call_1"`) || !strings.Contains(second, "from-the-tool") {
		t.Fatalf("the second request does not carry the tool result: %s", second)
	}
}
