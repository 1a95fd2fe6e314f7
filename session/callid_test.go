package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/model/openai"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/session"
)

// seenRequests is a model that keeps the requests it is sent.
type seenRequests struct {
	*script.Model
	reqs []model.Request
}

func (m *seenRequests) Stream(ctx context.Context, r model.Request) iter.Seq2[model.Chunk, error] {
	m.reqs = append(m.reqs, r)
	return m.Model.Stream(ctx, r)
}

// TestRepeatedToolCallIDsAreRenamed: a model that gives two calls of one
// response the same id, and a later call an id used before, has each call
// recorded under an id of its own (the model's in modelId), and is sent
// back each call with its own result.
func TestRepeatedToolCallIDsAreRenamed(t *testing.T) {
	dir, cwd, home, store := newLogDirs(t)
	sm, err := script.Parse([]byte(`{"toolCalls": [{"id": "dup", "name": "shell", "args": {"command": "echo first"}}, {"id": "dup", "name": "shell", "args": {"command": "echo second"}}]}
{"toolCalls": [{"id": "dup", "name": "shell", "args": {"command": "echo third"}}]}
{"text": "done"}`))
	if err != nil {
		t.Fatal(err)
	}
	m := &seenRequests{Model: sm}
	ans := &answers{list: []string{"allow_once", "allow_once", "allow_once"}}
	cfg := restartConfig(t, dir, store, sm, ans, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	cfg.Model = m
	rules, err := policy.Open(policy.Options{Cwd: cwd, ConfigHome: filepath.Join(home, ".config"), Home: home, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	s := session.New(cfg, session.Info{Cwd: cwd, Home: home, Mode: permission.ModeDefault, Rules: rules, Env: []string{"PATH=" + os.Getenv("PATH")}})
	defer s.Close()
	for _, err := range s.RunTurn(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
	}
	type rec struct{ id, modelID string }
	var got []rec
	for e, err := range store.Read(context.Background(), "sess-1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		p, _ := e.Decode()
		if c, ok := p.(*event.ModelToolCallRequestedPayload); ok {
			got = append(got, rec{c.ToolCallID, c.ModelID})
		}
	}
	want := []rec{{"dup", ""}, {"dup_2", "dup"}, {"dup_3", "dup"}}
	if !slices.Equal(got, want) {
		t.Errorf("recorded calls %v, want %v", got, want)
	}
	if len(m.reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(m.reqs))
	}
	// The last request holds every call and its result, paired by id.
	calls, results := map[string]string{}, map[string]string{}
	for _, msg := range m.reqs[2].Messages {
		for _, c := range msg.ToolCalls {
			calls[c.ID] = string(c.Args)
		}
		if msg.Role == model.RoleTool {
			results[msg.ToolCallID] = msg.Content
		}
	}
	for id, word := range map[string]string{"dup": "first", "dup_2": "second", "dup_3": "third"} {
		if !strings.Contains(calls[id], "echo "+word) || !strings.Contains(results[id], word) {
			t.Errorf("call %s sent as %q with result %q, want echo %s and its output", id, calls[id], results[id], word)
		}
	}
}

// TestRepeatedToolCallIDsOverOpenAI: an OpenAI-compatible server that
// gives two calls of one response the same id. The session runs both, and
// the next request sends each call back with its own id and its own
// result, as the chat completions API pairs them.
func TestRepeatedToolCallIDsOverOpenAI(t *testing.T) {
	first, err := os.ReadFile(filepath.Join("..", "model", "openai", "testdata", "repeated_id.sse"))
	if err != nil {
		t.Fatal(err)
	}
	const final = `data: {"id":"c2","object":"chat.completion.chunk","created":1748000000,"model":"local","choices":[{"index":0,"delta":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}

data: [DONE]

`
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, b)
		w.Header().Set("Content-Type", "text/event-stream")
		if len(bodies) == 1 {
			_, _ = w.Write(first)
			return
		}
		_, _ = w.Write([]byte(final))
	}))
	defer srv.Close()
	p, err := openai.New(openai.Options{Model: "local", BaseURL: srv.URL + "/v1", APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir, cwd, home, store := newLogDirs(t)
	ans := &answers{list: []string{"allow_once", "deny"}}
	cfg := restartConfig(t, dir, store, nil, ans, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	cfg.Model = p
	rules, err := policy.Open(policy.Options{Cwd: cwd, ConfigHome: filepath.Join(home, ".config"), Home: home, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	s := session.New(cfg, session.Info{Cwd: cwd, Home: home, Mode: permission.ModeDefault, Rules: rules, Env: []string{"PATH=" + os.Getenv("PATH")}})
	defer s.Close()
	for _, err := range s.RunTurn(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests to the server, want 2", len(bodies))
	}
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(bodies[1], &req); err != nil {
		t.Fatal(err)
	}
	calls, results := map[string]string{}, map[string]string{}
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			calls[c.ID] = c.Function.Arguments
		}
		if m.Role == "tool" {
			results[m.ToolCallID] = fmt.Sprint(m.Content)
		}
	}
	if len(calls) != 2 || !strings.Contains(calls["call_0"], "echo hi") || !strings.Contains(calls["call_0_2"], "pwned") {
		t.Errorf("calls sent back: %v, want call_0 (echo hi) and call_0_2 (the denied one)", calls)
	}
	if !strings.Contains(results["call_0"], "hi") || !strings.Contains(results["call_0_2"], "Permission denied") {
		t.Errorf("results sent back: %v, want call_0's output and call_0_2's denial", results)
	}
	if _, err := os.Stat(filepath.Join(cwd, "pwned.txt")); err == nil {
		t.Error("the denied call ran")
	}
}
