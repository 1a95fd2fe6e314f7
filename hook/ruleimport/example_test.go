package ruleimport_test

import (
	"fmt"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/ruleimport"
)

func ExampleTranslate() {
	res, _ := ruleimport.Translate(hook.ClaudeCode, []byte(`{"permissions": {
		"allow": ["Bash(npm run test:*)", "Bash(docker * up)"],
		"deny": ["Read(./.env)"]}}`), ruleimport.Options{})
	for _, r := range res.Rules {
		fmt.Printf("%s -> %s %s %q%s\n", r.From, r.Rule.Decision, r.Rule.Tool, r.Rule.Command+r.Rule.Path, map[bool]string{true: " (note)"}[r.Note != ""])
	}
	for _, s := range res.Skipped {
		fmt.Printf("left out %s: %s\n", s.From, s.Why)
	}
	// Output:
	// deny Read(./.env) -> deny {read_file,list_files,search_text} ".env" (note)
	// allow Bash(npm run test:*) -> allow shell "npm run test"
	// left out allow Bash(docker * up): a wildcard inside a command has no exact counterpart, and an allow is never widened
}
