package script

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/model"
)

func collect(t *testing.T, m *Model) ([]model.Chunk, error) {
	t.Helper()
	var out []model.Chunk
	for c, err := range m.Stream(context.Background(), model.Request{}) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func TestReplay(t *testing.T) {
	t.Parallel()
	m, err := Parse([]byte(`{"text": "我来跑 npm test。", "toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "npm test"}}, {"name": "read_file", "args": {"path": "a"}}]}
# a comment

{"text": "测试全过。"}
`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(t, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Chunk{
		{Kind: model.ChunkText, Text: "我来跑 npm test。"},
		{Kind: model.ChunkToolCall, ToolCall: model.ToolCall{ID: "tc_1", Name: "shell", Args: []byte(`{"command": "npm test"}`)}},
		{Kind: model.ChunkToolCall, ToolCall: model.ToolCall{ID: "tc_1_2", Name: "read_file", Args: []byte(`{"path": "a"}`)}},
		{Kind: model.ChunkDone, StopReason: "tool_use"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("first response (-want +got):\n%s", diff)
	}
	got, _ = collect(t, m)
	if len(got) != 2 || got[1].StopReason != "end_turn" {
		t.Fatalf("second response: %+v", got)
	}
	_, err = collect(t, m)
	if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "2 lines") {
		t.Fatalf("exhausted: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"not json":       "{\"text\": \"a\"}\n{nope}\n",
		"unknown field":  `{"txt": "a"}`,
		"no name":        `{"toolCalls": [{"args": {}}]}`,
		"args not obj":   `{"toolCalls": [{"name": "shell", "args": "ls"}]}`,
		"empty script":   "\n# only a comment\n",
		"array for line": `[{"text": "a"}]`,
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := Parse([]byte(src)); err == nil {
				t.Fatal("Parse accepted it")
			} else if name == "not json" && !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("error does not name the line: %v", err)
			}
		})
	}
}
