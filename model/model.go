// Package model is the ModelGateway: one port through which a turn streams
// a model's answer, whatever serves it (OpenAI-compatible Chat Completions,
// Anthropic Messages, or a scripted JSONL file for deterministic turns).
//
// A Gateway yields text as it streams and each tool call only once its
// streamed arguments are complete, so the session can record
// model.tool_call_requested with whole arguments.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
)

// Role is who said a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool's result, answering one tool call
)

// Message is one entry of the conversation sent to a model.
type Message struct {
	Role    Role
	Content string
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall
	// ToolCallID names the call a tool message answers.
	ToolCallID string
	// IsError marks a tool message that reports a failure or a denial.
	IsError bool
}

// ToolCall is a complete tool call: its arguments are a whole JSON object.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON Schema of the arguments (an object)
}

// Request is one model call.
type Request struct {
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0: the provider's default
}

// ChunkKind says what a Chunk carries.
type ChunkKind int

const (
	// ChunkText is streamed assistant text (a delta).
	ChunkText ChunkKind = iota + 1
	// ChunkToolCall is one complete tool call.
	ChunkToolCall
	// ChunkDone ends the response: StopReason and Usage are set.
	ChunkDone
)

// Chunk is one item of a streamed response.
type Chunk struct {
	Kind       ChunkKind
	Text       string
	ToolCall   ToolCall
	StopReason string // "end_turn", "tool_use", "max_tokens", … as the provider says
	Usage      Usage
}

// Usage is what the provider reports of token use (zero when unknown).
type Usage struct {
	InputTokens  int64 `json:"inputTokens,omitempty"`
	OutputTokens int64 `json:"outputTokens,omitempty"`
}

// Gateway streams model responses.
//
// Stream may be called concurrently. The sequence ends after a ChunkDone, or
// with an error (yielded once, last): a transport failure, a malformed or
// truncated stream (ErrMalformed), or ctx's error. A stream that ends
// without a ChunkDone is an error, never a silent end.
type Gateway interface {
	Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
	// Name is "provider:model", recorded in session.started.
	Name() string
}

var (
	// ErrMalformed: the provider's stream broke its own wire format or
	// ended early.
	ErrMalformed = errors.New("malformed model stream")
	// ErrNotConfigured: the provider lacks a key, base URL or model name.
	ErrNotConfigured = errors.New("model provider not configured")
)
