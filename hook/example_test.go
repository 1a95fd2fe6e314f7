package hook_test

import (
	"fmt"
	"strings"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// A Claude Code PreToolUse event is parsed, its tool mapped onto ours, and
// the engine's verdict answered in Claude Code's format.
func Example() {
	in, err := hook.Parse(hook.ClaudeCode, strings.NewReader(
		`{"session_id":"s1","cwd":"/home/user/proj","hook_event_name":"PreToolUse",`+
			`"tool_name":"Edit","tool_input":{"file_path":"src/a.go","old_string":"x","new_string":"y"},"tool_use_id":"toolu_1"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	calls, _ := hook.Map(in)
	fmt.Println(calls[0].Tool.Name, calls[0].Args["path"], calls[0].Args["content"])
	ans := hook.Decide(in, permission.Ask, "write calls are asked by default.", risk.Write, hook.Options{})
	fmt.Print(string(ans.Stdout))
	fmt.Println(hook.SessionID(in.Agent, in.SessionID))
	// Output:
	// write_file /home/user/proj/src/a.go y
	// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"custom-agent: write calls are asked by default."}}
	// claude-code-s1
}

// Gemini CLI has no ask: one at write risk or below for a tool Gemini CLI
// confirms itself defers to its confirmation; one above is denied, since
// that confirmation can be answered "always"; with Strict every ask is
// denied.
func ExampleDecide_gemini() {
	in, _ := hook.Parse(hook.GeminiCLI, strings.NewReader(
		`{"session_id":"g","cwd":"/p","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"a","content":"x"}}`))
	fmt.Print(string(hook.Decide(in, permission.Ask, "write calls are asked by default.", risk.Write, hook.Options{}).Stdout))
	fmt.Print(string(hook.Decide(in, permission.Ask, "write calls are asked by default.", risk.Write, hook.Options{Strict: true}).Stdout))
	fmt.Print(string(hook.Decide(in, permission.Ask, "a git hook.", risk.Execute, hook.Options{}).Stdout))
	// Output:
	// {"systemMessage":"custom-agent: asks: write calls are asked by default."}
	// {"decision":"deny","reason":"custom-agent: write calls are asked by default. (asked; gemini-cli has no ask, and the hook runs with --strict, so it is denied)"}
	// {"decision":"deny","reason":"custom-agent: a git hook. (asked at execute risk; gemini-cli's own confirmation can be answered \"always\", after which it asks no more, so only an ask at write risk or below is left to it; this one is denied)"}
}
