package mcp

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolNamesAreLettersDigitsAndPunctuation: a tool name is matched as a
// rule's glob and shown in questions, so a server's tool named "*" (which
// "allow for this session" would turn into a rule covering every tool of
// the server), or one holding control or bidi characters, is left out.
func TestToolNamesAreLettersDigitsAndPunctuation(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"list_issues", true}, {"get-file.v2", true}, {"A1", true},
		{"*", false}, {"list*", false}, {"a?b", false}, {"[ab]", false}, {"a/b", false},
		{"list\x1b[2K\rmcp__github__list_issues", false}, {"name\u202e", false}, {"", false},
		{string(make([]byte, 129)), false},
	} {
		if got := validToolName(c.name); got != c.ok {
			t.Errorf("validToolName(%q) = %v, want %v", c.name, got, c.ok)
		}
	}
	if _, err := newTool(&Server{Name: "evil"}, &sdk.Tool{Name: "*", InputSchema: map[string]any{"type": "object"}}, nil); err == nil {
		t.Error("a tool named * was taken")
	}
	if _, err := newTool(&Server{Name: "ok"}, &sdk.Tool{Name: "list_issues", InputSchema: map[string]any{"type": "object"}}, nil); err != nil {
		t.Errorf("an ordinary tool was left out: %v", err)
	}
}
