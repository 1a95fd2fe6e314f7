package mcp

import (
	"errors"
	"strings"
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

// TestStartErrorsAreEscaped: what a server answered (a JSON-RPC error
// message, from a remote server too) is printed to the terminal as part of
// the error, escaped: no title set, no line erased, no query answered.
func TestStartErrorsAreEscaped(t *testing.T) {
	e := &StartError{Server: "evil", Err: errors.New("listing its tools: boom \x1b]0;PWNED\x07\x1b[6n\x1b[2K\rfake line")}
	got := e.Error()
	if strings.ContainsAny(got, "\x1b\x07\r") {
		t.Errorf("the error holds raw control characters: %q", got)
	}
	if !strings.Contains(got, `\x1b]0;PWNED`) {
		t.Errorf("the server's text is not shown escaped: %q", got)
	}
}
