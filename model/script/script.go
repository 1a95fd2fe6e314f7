// Package script is a model that answers from a JSONL file, one response per
// line, for deterministic turns (tests, demos, reproducing a session):
//
//	{"text": "我来跑 npm test。", "toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "npm test"}}]}
//	{"text": "测试全过。"}
//
// Each process starts at the first line and consumes one line per model
// call. A response without toolCalls ends the turn. Running out of lines is
// an error that says so. See docs/script-model.md.
package script

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/model"
)

// Response is one line of a script.
type Response struct {
	Text      string     `json:"text,omitempty"`
	ToolCalls []toolCall `json:"toolCalls,omitempty"`
}

type toolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Model replays a script. It is safe for concurrent use; calls consume lines
// in the order they arrive.
type Model struct {
	name string
	mu   sync.Mutex
	resp []Response
	next int
}

var _ model.Gateway = (*Model)(nil)

// ErrExhausted: the script has no line left for this model call.
var ErrExhausted = errors.New("script model has no more responses")

// Load reads and checks a script file. Every line must be a JSON object
// with only the fields text and toolCalls; each tool call needs a name and
// object args (id defaults to "tc_<line>_<n>"). Blank lines and lines
// starting with # are skipped.
func Load(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script model: %w", err)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("script model %s: %w", path, err)
	}
	m.name = "script:" + path
	return m, nil
}

// Parse reads a script from memory.
func Parse(b []byte) (*Model, error) {
	m := &Model{name: "script"}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		var r Response
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("line %d: %w (want {\"text\": …, \"toolCalls\": [{\"id\", \"name\", \"args\"}]})", line, err)
		}
		for i := range r.ToolCalls {
			tc := &r.ToolCalls[i]
			if tc.Name == "" {
				return nil, fmt.Errorf("line %d: tool call %d has no name", line, i+1)
			}
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("tc_%d_%d", line, i+1)
			}
			if len(tc.Args) == 0 || string(tc.Args) == "null" {
				tc.Args = json.RawMessage(`{}`)
			}
			var obj map[string]any
			if err := json.Unmarshal(tc.Args, &obj); err != nil {
				return nil, fmt.Errorf("line %d: tool call %q: args must be a JSON object: %w", line, tc.Name, err)
			}
		}
		m.resp = append(m.resp, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(m.resp) == 0 {
		return nil, errors.New("no responses: write one JSON object per line")
	}
	return m, nil
}

// Name implements model.Gateway.
func (m *Model) Name() string { return m.name }

// Remaining is how many responses are left.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.resp) - m.next
}

// Stream implements model.Gateway: the next line's text, then its tool
// calls, then the end.
func (m *Model) Stream(ctx context.Context, _ model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		m.mu.Lock()
		if m.next >= len(m.resp) {
			n := len(m.resp)
			m.mu.Unlock()
			yield(model.Chunk{}, fmt.Errorf("%w: all %d lines were used; add a line for this model call", ErrExhausted, n))
			return
		}
		r := m.resp[m.next]
		m.next++
		m.mu.Unlock()
		if r.Text != "" && !yield(model.Chunk{Kind: model.ChunkText, Text: r.Text}, nil) {
			return
		}
		for _, tc := range r.ToolCalls {
			if !yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: model.ToolCall{ID: tc.ID, Name: tc.Name, Args: tc.Args}}, nil) {
				return
			}
		}
		stop := "end_turn"
		if len(r.ToolCalls) > 0 {
			stop = "tool_use"
		}
		yield(model.Chunk{Kind: model.ChunkDone, StopReason: stop}, nil)
	}
}
