package app

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/custom-agent/custom-agent/model"
)

// TestBaseURLVariablesReachTheServer: ANTHROPIC_BASE_URL and OPENAI_BASE_URL,
// as the README documents them, send the requests of the model that Model
// builds to that server, with the key from the environment (in x-api-key or
// Authorization, as the SDK sends it).
func TestBaseURLVariablesReachTheServer(t *testing.T) {
	t.Parallel()
	const anthropicSSE = "event: message_start\n" +
		`data: {"type":"message_start","message":{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"local"}}` + "\n\n" +
		"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
		"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}` + "\n\n" +
		"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"
	const openaiSSE = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"local"},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	tests := []struct {
		spec, urlVar, keyVar, path, body string
	}{
		{"anthropic:claude-sonnet-4-5", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "/v1/messages", anthropicSSE},
		{"openai:qwen", "OPENAI_BASE_URL", "OPENAI_API_KEY", "/v1/chat/completions", openaiSSE},
	}
	for _, tc := range tests {
		t.Run(tc.urlVar, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Api-Key")+r.Header.Get("Authorization"))
				mu.Unlock()
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			base := srv.URL
			if tc.urlVar == "OPENAI_BASE_URL" {
				base += "/v1" // as for Ollama: http://localhost:11434/v1
			}
			env := map[string]string{tc.urlVar: base, tc.keyVar: "key-from-env"}
			m, err := Model(tc.spec, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			for c, err := range m.Stream(t.Context(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				text.WriteString(c.Text)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || !strings.HasPrefix(got[0], "POST "+tc.path+" ") || !strings.Contains(got[0], "key-from-env") {
				t.Fatalf("the local server got %q, want one POST %s with the key", got, tc.path)
			}
			if text.String() != "local" {
				t.Fatalf("streamed text %q, want the local server's", text.String())
			}
		})
	}
}
