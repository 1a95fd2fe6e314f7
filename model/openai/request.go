package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/custom-agent/custom-agent/model"
)

// params maps a model.Request onto Chat Completions parameters.
//
// OpenAI's tool messages have no error flag, so a tool message with IsError
// has its content prefixed with "error: " for the model to see.
func (p *Provider) params(req model.Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{
		Model: p.opts.Model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{
			IncludeUsage: openai.Bool(true),
		},
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msg, err := message(m)
		if err != nil {
			return params, fmt.Errorf("openai: message %d: %w", i, err)
		}
		params.Messages = append(params.Messages, msg)
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	maxTokens := p.opts.MaxTokens
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	if maxTokens > 0 {
		if p.maxCompletionTokens {
			params.MaxCompletionTokens = openai.Int(int64(maxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(maxTokens))
		}
	}
	return params, nil
}

func message(m model.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case model.RoleUser:
		return openai.UserMessage(m.Content), nil
	case model.RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Args)
			if len(tc.Args) == 0 {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      tc.Name,
						Arguments: args,
					},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case model.RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message without a tool call id")
		}
		content := m.Content
		if m.IsError {
			content = "error: " + content
		}
		return openai.ToolMessage(content, m.ToolCallID), nil
	default:
		return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
	}
}

func toolParam(t model.ToolSpec) (openai.ChatCompletionToolUnionParam, error) {
	schema := openai.FunctionParameters{"type": "object", "properties": map[string]any{}}
	if len(t.Schema) > 0 {
		schema = nil
		if err := json.Unmarshal(t.Schema, &schema); err != nil || schema == nil {
			return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("openai: tool %q: schema is not a JSON object", t.Name)
		}
	}
	def := openai.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
	if t.Description != "" {
		def.Description = openai.String(t.Description)
	}
	return openai.ChatCompletionFunctionTool(def), nil
}
