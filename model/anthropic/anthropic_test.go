package anthropic_test

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

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/model/anthropic"
)

var update = flag.Bool("update", false, "rewrite the golden request files in testdata")

// The fixtures in testdata replay the Messages streaming wire format:
// "event: NAME" and "data: {...}" pairs for message_start,
// content_block_start/delta/stop, ping, message_delta, message_stop, and
// error. See testdata/README.md for where the shapes come from.

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
				done("end_turn", 25, 15),
			},
		},
		{
			name:    "one tool call with input split over many chunks",
			fixture: "tool_call.sse",
			want: []model.Chunk{
				call("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "shell", `{"command":"go test ./...","timeout":60}`),
				done("tool_use", 472, 89),
			},
		},
		{
			name:    "text then a tool call",
			fixture: "text_then_tool.sse",
			want: []model.Chunk{
				text("I"), text("'ll"), text(" check"), text(" the"), text(" weather"), text(" in"), text(" San Francisco for you"), text("."),
				call("toolu_017QoD96fYwGzCWvLfaPADWg", "get_weather", `{"city":"San Francisco"}`),
				done("tool_use", 394, 79),
			},
		},
		{
			name:    "two tool_use blocks",
			fixture: "two_tools.sse",
			want: []model.Chunk{
				text("Reading both files."),
				call("toolu_01A09q90qw90lq917835lq9", "read_file", `{"path":"go.mod"}`),
				call("toolu_01B5dkF4sPb2gGYYhWfNq3vb", "read_file", `{"path":"main.go"}`),
				done("tool_use", 580, 120),
			},
		},
		{
			name:    "tool call as API version 2026-10-21 streams it",
			fixture: "v2_tool_use.sse",
			want:    []model.Chunk{call("toolu_echo_1", "echo", `{"text":"hello"}`), done("tool_use", 31, 40)},
		},
		{
			name:    "tool call without input gets {}",
			fixture: "empty_input.sse",
			want:    []model.Chunk{call("toolu_01Gs", "git_status", `{}`), done("tool_use", 300, 30)},
		},
		{
			name:    "max tokens reached",
			fixture: "max_tokens.sse",
			want:    []model.Chunk{text("Once"), text(" upon"), text(" a"), done("max_tokens", 12, 3)},
		},
		{
			name:    "thinking is not passed on",
			fixture: "thinking.sse",
			want:    []model.Chunk{text("Hi"), text(" there."), done("end_turn", 40, 30)},
		},
		{
			name:    "a data line that is not JSON",
			fixture: "bad_json.sse",
			want:    []model.Chunk{text("Hel")},
			wantErr: model.ErrMalformed,
			errText: "not valid JSON",
		},
		{
			name:    "tool input that never becomes valid JSON",
			fixture: "bad_input.sse",
			wantErr: model.ErrMalformed,
			errText: `tool call "shell" (toolu_01Bi): input is not valid JSON`,
		},
		{
			name:    "stream cut mid-way",
			fixture: "truncated.sse",
			wantErr: model.ErrMalformed,
			errText: "stream ended before message_stop",
		},
		{
			name:    "an error event in the stream",
			fixture: "error_event.sse",
			want:    []model.Chunk{text("Hi")},
			errText: "overloaded_error: Overloaded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(sseHandler(t, tt.fixture))
			t.Cleanup(srv.Close)
			p := newProvider(t, anthropic.Options{BaseURL: srv.URL, APIKey: "sk-ant-test"})

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
			body:    `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			errText: []string{"401 Unauthorized", "authentication_error: invalid x-api-key", "check ANTHROPIC_API_KEY"},
		},
		{
			name:    "404 unknown model",
			status:  http.StatusNotFound,
			body:    `{"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}}`,
			errText: []string{"404 Not Found", "model: claude-9", "check the model name"},
		},
		{
			name:    "500 server error",
			status:  http.StatusInternalServerError,
			body:    `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			errText: []string{"500 Internal Server Error", "api_error: Internal server error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Request-Id", "req_test")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			p := newProvider(t, anthropic.Options{BaseURL: srv.URL, APIKey: "sk-ant-bad"})

			got, err := collect(p.Stream(t.Context(), sampleRequest()))
			if len(got) != 0 {
				t.Errorf("chunks before the error: %v", got)
			}
			for _, s := range append(tt.errText, "request-id req_test") {
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
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		serveFixture(t, w, "text.sse")
	}))
	t.Cleanup(srv.Close)
	p := newProvider(t, anthropic.Options{BaseURL: srv.URL, APIKey: "k", MaxRetries: 1})

	got, err := collect(p.Stream(t.Context(), sampleRequest()))
	if err != nil || len(got) == 0 || got[len(got)-1].Kind != model.ChunkDone {
		t.Fatalf("Stream after one 529 = %v, %v; want a whole answer", got, err)
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
		for _, e := range events[:5] { // message_start, block start, ping, two deltas
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
		select { // hang like a slow model until the client goes away
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	p := newProvider(t, anthropic.Options{BaseURL: srv.URL, APIKey: "k"})

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
		opts anthropic.Options // BaseURL "" means Anthropic's own, reached through a redirecting client
		req  model.Request
	}{
		{
			name: "conversation",
			opts: anthropic.Options{Model: "claude-sonnet-4-5", APIKey: "sk-ant-test"},
			req:  sampleRequest(),
		},
		{
			name: "max_tokens_from_request",
			opts: anthropic.Options{Model: "claude-haiku-4-5", APIKey: "sk-ant-test", BaseURL: "LOCAL", MaxTokens: 8192},
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
		opts    anthropic.Options
		errText string // "" means New succeeds
	}{
		{"key and model", anthropic.Options{Model: "claude-sonnet-4-5", APIKey: "sk-ant-x"}, ""},
		{"no key", anthropic.Options{Model: "claude-sonnet-4-5"}, "set ANTHROPIC_API_KEY"},
		{"no key even with a base URL", anthropic.Options{Model: "claude-sonnet-4-5", BaseURL: "http://localhost:8080"}, "set ANTHROPIC_API_KEY"},
		{"no model", anthropic.Options{APIKey: "sk-ant-x"}, "--model anthropic:NAME"},
		{"base URL without scheme", anthropic.Options{Model: "m", APIKey: "k", BaseURL: "localhost:8080"}, "ANTHROPIC_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := anthropic.New(tt.opts)
			if tt.errText == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got, want := p.Name(), "anthropic:"+tt.opts.Model; got != want {
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
	env := map[string]string{"ANTHROPIC_API_KEY": " sk-ant-env\n", "OPENAI_API_KEY": "sk-other"}
	got := anthropic.FromEnv("claude-sonnet-4-5", func(k string) string { return env[k] })
	want := anthropic.Options{Model: "claude-sonnet-4-5", APIKey: "sk-ant-env", Timeout: model.DefaultTimeout}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromEnv (-want +got):\n%s", diff)
	}
}

// sampleRequest has every kind of message and a tool. Two tool results in
// a row and then the user's next words must become one user turn.
func sampleRequest() model.Request {
	return model.Request{
		System: "You are a coding agent.",
		Messages: []model.Message{
			{Role: model.RoleUser, Content: "Run the tests."},
			{Role: model.RoleAssistant, Content: "I'll run them.", ToolCalls: []model.ToolCall{
				{ID: "toolu_1", Name: "shell", Args: json.RawMessage(`{"command":"go test ./..."}`)},
				{ID: "toolu_2", Name: "git_status"},
			}},
			{Role: model.RoleTool, ToolCallID: "toolu_1", Content: "ok  \texample.com/x\t0.01s"},
			{Role: model.RoleTool, ToolCallID: "toolu_2", Content: "denied by the user", IsError: true},
			{Role: model.RoleUser, Content: "Go on."},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "toolu_3", Name: "shell", Args: json.RawMessage(`{"command":"ls"}`)},
			}},
			{Role: model.RoleTool, ToolCallID: "toolu_3"},
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

func newProvider(t *testing.T, opts anthropic.Options) *anthropic.Provider {
	t.Helper()
	if opts.Model == "" {
		opts.Model = "claude-sonnet-4-5"
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = -1
	}
	p, err := anthropic.New(opts)
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
	return streamtest.SSEHandler(t, "/v1/messages", fixture)
}

func record(t *testing.T, r *http.Request) recordedRequest {
	return streamtest.Record(t, r, "X-Api-Key", "Anthropic-Version", "Authorization", "Content-Type", "Accept")
}

func golden(t *testing.T, path string, got recordedRequest) {
	streamtest.Golden(t, path, got, *update)
}
