package app

import (
	"errors"
	"strings"
	"testing"
)

func TestModel(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name, spec string
		env        map[string]string
		wantName   string
		wantErr    string
	}{
		{"nothing set", "", nil, "", "OPENAI_API_KEY"},
		{"default from env", "", map[string]string{"CUSTOM_AGENT_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "k"}, "openai:gpt-4.1", ""},
		{"openai local server without key", "openai:qwen", map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}, "openai:qwen", ""},
		{"openai without key or url", "openai:gpt-4.1", nil, "", "OPENAI_API_KEY"},
		{"anthropic", "anthropic:claude-sonnet-4-5", map[string]string{"ANTHROPIC_API_KEY": "k"}, "anthropic:claude-sonnet-4-5", ""},
		{"anthropic without key", "anthropic:claude-sonnet-4-5", nil, "", "ANTHROPIC_API_KEY"},
		{"unknown provider", "gemini:pro", nil, "", "unknown model provider"},
		{"no name", "openai:", nil, "", "provider:name"},
		{"script missing", "script:/nonexistent.jsonl", nil, "", "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := Model(tc.spec, env(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Model(%q) error = %v, want one mentioning %q", tc.spec, err, tc.wantErr)
				}
				return
			}
			if err != nil || m.Name() != tc.wantName {
				t.Fatalf("Model(%q) = %v, %v", tc.spec, m, err)
			}
		})
	}
	if _, err := Model("", env(nil)); !errors.Is(err, ErrNoModel) {
		t.Fatalf("no model: %v", err)
	}
}
