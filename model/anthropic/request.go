package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/custom-agent/custom-agent/model"
)

// params maps a model.Request onto Messages parameters.
//
// The Messages API alternates user and assistant turns, and tool results
// are tool_result blocks in a user turn, so consecutive messages that land
// on the same side (several tool results, or tool results then the user's
// next words) are merged into one turn, in order. Empty text is left out,
// since the API refuses empty text blocks.
func (p *Provider) params(req model.Request) (anthropic.MessageNewParams, error) {
	maxTokens := p.opts.MaxTokens
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.opts.Model),
		MaxTokens: int64(maxTokens),
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	type turn struct {
		user   bool
		blocks []anthropic.ContentBlockParamUnion
	}
	var turns []turn
	for i, m := range req.Messages {
		user, blocks, err := contentBlocks(m)
		if err != nil {
			return params, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			continue
		}
		turns = append(turns, turn{user: user, blocks: blocks})
	}
	for _, t := range turns {
		if t.user {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(t.blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(t.blocks...))
		}
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return params, nil
}

// contentBlocks returns m as content blocks and whether they belong to a
// user turn.
func contentBlocks(m model.Message) (user bool, _ []anthropic.ContentBlockParamUnion, _ error) {
	var blocks []anthropic.ContentBlockParamUnion
	switch m.Role {
	case model.RoleUser:
		if m.Content != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
		return true, blocks, nil
	case model.RoleAssistant:
		if m.Content != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
		for _, tc := range m.ToolCalls {
			args := tc.Args
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, args, tc.Name))
		}
		return false, blocks, nil
	case model.RoleTool:
		if m.ToolCallID == "" {
			return false, nil, fmt.Errorf("tool message without a tool call id")
		}
		res := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
		if m.Content != "" {
			res.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
		}
		if m.IsError {
			res.IsError = anthropic.Bool(true)
		}
		return true, []anthropic.ContentBlockParamUnion{{OfToolResult: &res}}, nil
	default:
		return false, nil, fmt.Errorf("unknown role %q", m.Role)
	}
}

func toolParam(t model.ToolSpec) (anthropic.ToolParam, error) {
	schema := t.Schema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var obj map[string]any
	if err := json.Unmarshal(schema, &obj); err != nil || obj == nil {
		return anthropic.ToolParam{}, fmt.Errorf("anthropic: tool %q: schema is not a JSON object", t.Name)
	}
	tool := anthropic.ToolParam{
		Name: t.Name,
		// The schema goes over the wire as it is, not through the SDK's
		// narrower ToolInputSchemaParam fields.
		InputSchema: param.Override[anthropic.ToolInputSchemaParam](schema),
	}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	return tool, nil
}
