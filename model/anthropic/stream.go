package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/custom-agent/custom-agent/model"
)

// streamState folds Messages stream events into model chunks: text deltas
// pass through, tool_use input is gathered per content block and passed on
// at content_block_stop, and message_stop ends the response.
type streamState struct {
	started bool
	blocks  map[int64]*block // open content blocks by index
	reason  string
	usage   model.Usage
	stopped bool // message_stop seen; nothing more is read
}

type block struct {
	kind     string // "text", "tool_use", "thinking", …
	id, name string
	input    bytes.Buffer
}

func (s *streamState) feed(ev anthropic.MessageStreamEventUnion) ([]model.Chunk, error) {
	if !s.started && ev.Type != "message_start" {
		return nil, fmt.Errorf("%w: anthropic: %s before message_start", model.ErrMalformed, ev.Type)
	}
	switch ev.Type {
	case "message_start":
		if s.started {
			return nil, fmt.Errorf("%w: anthropic: a second message_start", model.ErrMalformed)
		}
		s.started = true
		s.blocks = make(map[int64]*block)
		u := ev.Message.Usage
		s.usage = model.Usage{
			InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			OutputTokens: u.OutputTokens,
		}
	case "content_block_start":
		if _, open := s.blocks[ev.Index]; open {
			return nil, fmt.Errorf("%w: anthropic: content block %d started twice", model.ErrMalformed, ev.Index)
		}
		cb := ev.ContentBlock
		b := &block{kind: cb.Type, id: cb.ID, name: cb.Name}
		s.blocks[ev.Index] = b
		if b.kind == "tool_use" && (b.id == "" || b.name == "") {
			return nil, fmt.Errorf("%w: anthropic: tool_use block %d without id or name", model.ErrMalformed, ev.Index)
		}
		if b.kind == "text" && cb.Text != "" {
			return []model.Chunk{{Kind: model.ChunkText, Text: cb.Text}}, nil
		}
	case "content_block_delta":
		b, ok := s.blocks[ev.Index]
		if !ok {
			return nil, fmt.Errorf("%w: anthropic: delta for content block %d, which is not open", model.ErrMalformed, ev.Index)
		}
		switch ev.Delta.Type {
		case "text_delta":
			if ev.Delta.Text != "" {
				return []model.Chunk{{Kind: model.ChunkText, Text: ev.Delta.Text}}, nil
			}
		case "input_json_delta":
			b.input.WriteString(ev.Delta.PartialJSON)
		}
		// thinking, signature and citation deltas are not passed on.
	case "content_block_stop":
		b, ok := s.blocks[ev.Index]
		if !ok {
			return nil, fmt.Errorf("%w: anthropic: stop for content block %d, which is not open", model.ErrMalformed, ev.Index)
		}
		delete(s.blocks, ev.Index)
		if b.kind != "tool_use" {
			return nil, nil
		}
		args, err := objectArgs(b.input.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%w: anthropic: tool call %q (%s): %v", model.ErrMalformed, b.name, b.id, err)
		}
		return []model.Chunk{{Kind: model.ChunkToolCall, ToolCall: model.ToolCall{ID: b.id, Name: b.name, Args: args}}}, nil
	case "message_delta":
		s.reason = string(ev.Delta.StopReason)
		// message_delta usage is cumulative; input counts appear there
		// only on newer API versions.
		if u := ev.Usage; u.OutputTokens > 0 || u.InputTokens > 0 {
			s.usage.OutputTokens = u.OutputTokens
			if in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; in > 0 {
				s.usage.InputTokens = in
			}
		}
	case "message_stop":
		if len(s.blocks) > 0 {
			return nil, fmt.Errorf("%w: anthropic: message_stop with %d content blocks still open", model.ErrMalformed, len(s.blocks))
		}
		if s.reason == "" {
			return nil, fmt.Errorf("%w: anthropic: message_stop without a stop_reason", model.ErrMalformed)
		}
		s.stopped = true
		return []model.Chunk{{Kind: model.ChunkDone, StopReason: s.reason, Usage: s.usage}}, nil
	}
	return nil, nil
}

// objectArgs returns tool input as compact JSON, "{}" when empty, or an
// error when it is not one JSON object.
func objectArgs(raw []byte) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("input is not valid JSON: %.200q", raw)
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("input is not a JSON object: %.200q", raw)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
