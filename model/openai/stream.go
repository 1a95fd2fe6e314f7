package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/custom-agent/custom-agent/model"
)

// streamState folds chat.completion.chunk values into model chunks. Text is
// passed on at once; tool calls are gathered by index until finish_reason,
// then checked and passed on in index order; the final chunk waits for the
// end of the stream, since the usage chunk follows finish_reason.
type streamState struct {
	calls []*pendingCall
	// slot maps a tool call's wire index to its position in calls.
	slot   map[int64]int
	finish string // "" until the first choice has finished
	usage  model.Usage
}

type pendingCall struct {
	index    int64
	id, name string
	args     bytes.Buffer
}

// feed takes one chunk and returns what can be passed on now.
func (s *streamState) feed(c openai.ChatCompletionChunk) ([]model.Chunk, error) {
	if c.JSON.Usage.Valid() {
		s.usage = model.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
	}
	var out []model.Chunk
	for _, ch := range c.Choices {
		if ch.Index != 0 { // we ask for one choice (n=1)
			continue
		}
		if s.finish != "" && (ch.Delta.Content != "" || len(ch.Delta.ToolCalls) > 0) {
			return out, fmt.Errorf("%w: openai: content after finish_reason %q", model.ErrMalformed, s.finish)
		}
		if ch.Delta.Content != "" {
			out = append(out, model.Chunk{Kind: model.ChunkText, Text: ch.Delta.Content})
		}
		for _, d := range ch.Delta.ToolCalls {
			s.addToolDelta(d)
		}
		if ch.FinishReason != "" && s.finish == "" {
			s.finish = ch.FinishReason
			calls, err := s.completeCalls()
			if err != nil {
				return out, err
			}
			out = append(out, calls...)
		}
	}
	return out, nil
}

// addToolDelta accumulates one tool call fragment. The id and name come
// with the first fragment of an index, the arguments spread over the rest.
// Some servers (Ollama among them) reuse index 0 for every call of a
// parallel batch, so a new id at a known index opens a new call.
func (s *streamState) addToolDelta(d openai.ChatCompletionChunkChoiceDeltaToolCall) {
	if s.slot == nil {
		s.slot = make(map[int64]int)
	}
	i, ok := s.slot[d.Index]
	if !ok || (d.ID != "" && s.calls[i].id != "" && d.ID != s.calls[i].id) {
		i = len(s.calls)
		s.calls = append(s.calls, &pendingCall{index: d.Index})
		s.slot[d.Index] = i
	}
	pc := s.calls[i]
	if pc.id == "" {
		pc.id = d.ID
	}
	if pc.name == "" {
		pc.name = d.Function.Name
	}
	pc.args.WriteString(d.Function.Arguments)
}

// completeCalls checks the gathered calls and returns them as chunks.
func (s *streamState) completeCalls() ([]model.Chunk, error) {
	out := make([]model.Chunk, 0, len(s.calls))
	for n, pc := range s.calls {
		if pc.name == "" {
			return nil, fmt.Errorf("%w: openai: tool call %d (index %d) has no function name", model.ErrMalformed, n, pc.index)
		}
		args, err := objectArgs(pc.args.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%w: openai: tool call %q (%s): %v", model.ErrMalformed, pc.name, pc.id, err)
		}
		id := pc.id
		if id == "" {
			// A few local servers leave ids out; the result message
			// still needs one to answer.
			id = fmt.Sprintf("call_%d", n)
		}
		out = append(out, model.Chunk{Kind: model.ChunkToolCall, ToolCall: model.ToolCall{ID: id, Name: pc.name, Args: args}})
	}
	return out, nil
}

// end is called when the stream is over: it returns the final chunk, or
// ErrMalformed when the model never finished.
func (s *streamState) end() (model.Chunk, error) {
	if s.finish == "" {
		return model.Chunk{}, fmt.Errorf("%w: openai: stream ended before the model finished (no finish_reason)", model.ErrMalformed)
	}
	return model.Chunk{Kind: model.ChunkDone, StopReason: s.stopReason(), Usage: s.usage}, nil
}

func (s *streamState) stopReason() string {
	switch s.finish {
	case "stop":
		if len(s.calls) > 0 {
			// Older Ollama and llama.cpp builds finish a tool call
			// with "stop".
			return "tool_use"
		}
		return "end_turn"
	case "tool_calls", "function_call":
		return "tool_use"
	case "length":
		return "max_tokens"
	default:
		return s.finish
	}
}

// objectArgs returns the arguments as compact JSON, "{}" when empty, or an
// error when they are not one JSON object.
func objectArgs(raw []byte) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("arguments are not valid JSON: %.200q", raw)
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("arguments are not a JSON object: %.200q", raw)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
