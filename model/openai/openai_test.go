package openai_test

import (
	"github.com/custom-agent/custom-agent/model/internal/streamtest"

	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/openai/openai-go/v3"

	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/model/openai"
)

var update = flag.Bool("update", false, "rewrite the golden request files in testdata")

// The fixtures in testdata replay the Chat Completions streaming wire
// format: "data: {chat.completion.chunk}" events, a finish_reason on the
// last content chunk, a usage chunk with empty choices (stream_options
// include_usage), then "data: [DONE]".

func TestStream(t *testing.T) {
	t.Parallel()
	text := func(s string) model.Chunk { return model.Chunk{Kind: model.ChunkText, Text: s} }
	call := func(id, name, args string) model.Chunk {
		return model.Chunk{Kind: model.ChunkToolCall, ToolCall: model.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}}
	}
	done := func(reason string, in, out int64) model.Chunk {
		return model.Chunk{Kind: model.ChunkDone, StopReason: reason, Usage: model.Usage{InputTokens: in, OutputTokens: out}}
	}
	tests := []struct {
		name    string
		fixture string
		want    []model.Chunk
		wantErr error  // errors.Is target, nil for a clean end
		errText string // a substring the error must contain
	}{
		{
			name:    "plain text over many chunks",
			fixture: "text.sse",
			want: []model.Chunk{
				text("Hello"), text("!"), text(" How"), text(" can"), text(" I"), text(" help"), text(" you"), text(" today"), text("?"),
				done("end_turn", 19, 10),
			},
		},
		{
			name:    "one tool call with arguments split over many chunks",
			fixture: "tool_call.sse",
			want: []model.Chunk{
				call("call_DdmO9pD3xa9XTPNJ32zg2hcA", "shell", `{"command":"go test ./...","timeout":60}`),
				done("tool_use", 82, 24),
			},
		},
		{
			name:    "two tool calls one after the other",
			fixture: "parallel_tools.sse",
			want: []model.Chunk{
				call("call_aIvx6jOUPVqjv4iR2WKLDe4w", "read_file", `{"path":"go.mod"}`),
				call("call_Yc4YxXoaXRIQKw1bWkRtk3Nb", "read_file", `{"path":"main.go"}`),
				done("tool_use", 120, 51),
			},
		},
		{
			name:    "two tool calls interleaved by index",
			fixture: "interleaved_tools.sse",
			want: []model.Chunk{
				call("call_1", "read_file", `{"path":"go.mod"}`),
				call("call_2", "list_dir", `{"path":"."}`),
				done("tool_use", 120, 40),
			},
		},
		{
			name:    "index 0 reused with new ids and finish_reason stop (Ollama)",
			fixture: "ollama_index_reuse.sse",
			want: []model.Chunk{
				call("call_hd8f2kqz", "read_file", `{"path":"go.mod"}`),
				call("call_p0x1m3aa", "read_file", `{"path":"go.sum"}`),
				done("tool_use", 210, 38),
			},
		},
		{
			// Two calls under one id (a server bug, or a hostile
			// endpoint): both are passed on as they came; the session
			// makes ids unique (session/callid.go).
			name:    "two tool calls sharing one id",
			fixture: "repeated_id.sse",
			want: []model.Chunk{
				call("call_0", "shell", `{"command":"echo hi"}`),
				call("call_0", "shell", `{"command":"echo pwned > pwned.txt"}`),
				done("tool_use", 30, 12),
			},
		},
		{
			name:    "text then a tool call",
			fixture: "text_then_tool.sse",
			want: []model.Chunk{
				text("I"), text("'ll"), text(" run"), text(" the"), text(" tests"), text("."),
				call("call_FXoAjBUMcVv1k40fficJ9cSs", "shell", `{"command":"npm test"}`),
				done("tool_use", 64, 31),
			},
		},
		{
			name:    "max tokens reached",
			fixture: "length.sse",
			want:    []model.Chunk{text("Once"), text(" upon"), text(" a"), done("max_tokens", 12, 3)},
		},
		{
			name:    "tool call without arguments gets {}",
			fixture: "empty_args.sse",
			want:    []model.Chunk{call("call_Ox5mDzWjVhCslQzqFqJmHCke", "git_status", `{}`), done("tool_use", 50, 7)},
		},
		{
			name:    "a data line that is not JSON",
			fixture: "bad_json.sse",
			want:    []model.Chunk{text("Hel")},
			wantErr: model.ErrMalformed,
			errText: "not a valid chat.completion.chunk",
		},
		{
			name:    "tool arguments that never become valid JSON",
			fixture: "bad_args.sse",
			wantErr: model.ErrMalformed,
			errText: `tool call "shell" (call_9): arguments are not valid JSON`,
		},
		{
			name:    "stream cut mid-way",
			fixture: "truncated.sse",
			wantErr: model.ErrMalformed,
			errText: "stream ended before the model finished",
		},
		{
			name:    "an error object in the stream",
			fixture: "error_event.sse",
			want:    []model.Chunk{text("Hi")},
			errText: "The server had an error while processing your request",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(sseHandler(t, tt.fixture))
			t.Cleanup(srv.Close)
			p := newProvider(t, openai.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})

			got, err := collect(p.Stream(t.Context(), sampleRequest()))
			if err != nil {
				t.Logf("error: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			checkErr(t, err, tt.wantErr, tt.errText)
		})
	}
}

func TestStreamHTTPErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		errText []string
	}{
		{
			name:    "401 bad key",
			status:  http.StatusUnauthorized,
			body:    `{"error":{"message":"Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			errText: []string{"401 Unauthorized", "Incorrect API key provided", "check OPENAI_API_KEY"},
		},
		{
			name:    "404 unknown model",
			status:  http.StatusNotFound,
			body:    `{"error":{"message":"The model ` + "`gpt-9`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			errText: []string{"404 Not Found", "does not exist", "check the model name"},
		},
		{
			name:    "500 server error",
			status:  http.StatusInternalServerError,
			body:    `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
			errText: []string{"500 Internal Server Error", "The server had an error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			p := newProvider(t, openai.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-bad"})

			got, err := collect(p.Stream(t.Context(), sampleRequest()))
			if len(got) != 0 {
				t.Errorf("chunks before the error: %v", got)
			}
			for _, s := range tt.errText {
				checkErr(t, err, nil, s)
			}
			var apiErr *sdk.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status {
				t.Errorf("errors.As(*sdk.Error) = %v, want status %d", apiErr, tt.status)
			}
		})
	}
}

func TestStreamRetries(t *testing.T) {
	t.Parallel()
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		serveFixture(t, w, "text.sse")
	}))
	t.Cleanup(srv.Close)
	p := newProvider(t, openai.Options{BaseURL: srv.URL + "/v1", MaxRetries: 1})

	got, err := collect(p.Stream(t.Context(), sampleRequest()))
	if err != nil || len(got) == 0 || got[len(got)-1].Kind != model.ChunkDone {
		t.Fatalf("Stream after one 503 = %v, %v; want a whole answer", got, err)
	}
	if n := attempts.Load(); n != 2 {
		t.Errorf("attempts = %d, want 2", n)
	}
}

func TestStreamCancel(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		events := readEvents(t, "text.sse")
		for _, e := range events[:3] {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
		select { // hang like a slow model until the client goes away
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	p := newProvider(t, openai.Options{BaseURL: srv.URL + "/v1"})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got []model.Chunk
	var err error
	start := time.Now()
	for c, e := range p.Stream(ctx, sampleRequest()) {
		if e != nil {
			err = e
			break
		}
		got = append(got, c)
		if len(got) == 2 {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(got) != 2 {
		t.Errorf("got %d chunks, want the 2 sent before the cancel", len(got))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Stream took %v to notice the cancel", d)
	}
}

// TestRequest checks what goes over the wire against golden files. Run
// with -update to rewrite them.
func TestRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts openai.Options // BaseURL "" means OpenAI's own, reached through a redirecting client
		req  model.Request
	}{
		{
			name: "openai_conversation",
			opts: openai.Options{Model: "gpt-4.1", APIKey: "sk-test", MaxTokens: 1024},
			req:  sampleRequest(),
		},
		{
			name: "local_no_key",
			opts: openai.Options{Model: "qwen3:8b", BaseURL: "LOCAL/v1"},
			req: model.Request{
				Messages:  []model.Message{{Role: model.RoleUser, Content: "hi"}},
				MaxTokens: 256,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reqs := make(chan recordedRequest, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reqs <- record(t, r)
				serveFixture(t, w, "text.sse")
			}))
			t.Cleanup(srv.Close)
			opts := tt.opts
			if opts.BaseURL == "" {
				opts.HTTPClient = redirectTo(t, srv.URL)
			} else {
				opts.BaseURL = strings.Replace(opts.BaseURL, "LOCAL", srv.URL, 1)
			}
			p := newProvider(t, opts)
			if _, err := collect(p.Stream(t.Context(), tt.req)); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "request_"+tt.name+".json"), <-reqs)
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    openai.Options
		errText string // "" means New succeeds
	}{
		{"key only", openai.Options{Model: "gpt-4.1", APIKey: "sk-x"}, ""},
		{"local server without key", openai.Options{Model: "llama3", BaseURL: "http://localhost:11434/v1"}, ""},
		{"neither key nor base URL", openai.Options{Model: "gpt-4.1"}, "set OPENAI_API_KEY"},
		{"no model", openai.Options{APIKey: "sk-x"}, "--model openai:NAME"},
		{"base URL without scheme", openai.Options{Model: "m", BaseURL: "localhost:11434/v1"}, "OPENAI_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := openai.New(tt.opts)
			if tt.errText == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got, want := p.Name(), "openai:"+tt.opts.Model; got != want {
					t.Errorf("Name() = %q, want %q", got, want)
				}
				return
			}
			checkErr(t, err, model.ErrNotConfigured, tt.errText)
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OPENAI_BASE_URL": "http://localhost:8080/v1 ", "OPENAI_API_KEY": "sk-env", "CUSTOM_AGENT_MODEL_TIMEOUT": "45s"}
	got := openai.FromEnv("gpt-4.1", func(k string) string { return env[k] })
	want := openai.Options{Model: "gpt-4.1", BaseURL: "http://localhost:8080/v1", APIKey: "sk-env", Timeout: 45 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromEnv (-want +got):\n%s", diff)
	}
}

// sampleRequest has every kind of message and a tool.
func sampleRequest() model.Request {
	return model.Request{
		System: "You are a coding agent.",
		Messages: []model.Message{
			{Role: model.RoleUser, Content: "Run the tests."},
			{Role: model.RoleAssistant, Content: "I'll run them.", ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "shell", Args: json.RawMessage(`{"command":"go test ./..."}`)},
				{ID: "call_2", Name: "git_status"},
			}},
			{Role: model.RoleTool, ToolCallID: "call_1", Content: "ok  \texample.com/x\t0.01s"},
			{Role: model.RoleTool, ToolCallID: "call_2", Content: "denied by the user", IsError: true},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "call_3", Name: "shell", Args: json.RawMessage(`{"command":"ls"}`)},
			}},
			{Role: model.RoleTool, ToolCallID: "call_3", Content: "go.mod\nmain.go"},
		},
		Tools: []model.ToolSpec{{
			Name:        "shell",
			Description: "Run a shell command.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`),
		}, {
			Name: "git_status",
		}},
	}
}

func newProvider(t *testing.T, opts openai.Options) *openai.Provider {
	t.Helper()
	if opts.Model == "" {
		opts.Model = "gpt-4o"
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = -1
	}
	p, err := openai.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	collect    = streamtest.Collect
	checkErr   = streamtest.CheckErr
	readEvents = streamtest.ReadEvents
	redirectTo = streamtest.RedirectTo
)

type recordedRequest = streamtest.Request

func serveFixture(t *testing.T, w http.ResponseWriter, fixture string) {
	streamtest.ServeFixture(t, w, fixture)
}

func sseHandler(t *testing.T, fixture string) http.HandlerFunc {
	return streamtest.SSEHandler(t, "/v1/chat/completions", fixture)
}

func record(t *testing.T, r *http.Request) recordedRequest {
	return streamtest.Record(t, r, "Authorization", "Content-Type", "Accept")
}

func golden(t *testing.T, path string, got recordedRequest) {
	streamtest.Golden(t, path, got, *update)
}

// TestStreamRetriesAreCounted: an error after retries says how many
// attempts were made (issue 24 item 8: a 500 retried without saying so).
func TestStreamRetriesAreCounted(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After-Ms", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"boom","type":"server_error"}}`)
	}))
	t.Cleanup(srv.Close)
	p := newProvider(t, openai.Options{BaseURL: srv.URL + "/v1", MaxRetries: 2})
	_, err := collect(p.Stream(t.Context(), sampleRequest()))
	if err == nil || !strings.Contains(err.Error(), "500 Internal Server Error") || !strings.Contains(err.Error(), "(after 3 attempts)") {
		t.Fatalf("err = %v; want the status and (after 3 attempts)", err)
	}
	p1 := newProvider(t, openai.Options{BaseURL: srv.URL + "/v1"})
	if _, err := collect(p1.Stream(t.Context(), sampleRequest())); err == nil || strings.Contains(err.Error(), "attempts") {
		t.Fatalf("no retry, err = %v; want no count", err)
	}
}
