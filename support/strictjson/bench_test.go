package strictjson_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/custom-agent/custom-agent/support/strictjson"
)

// policyLike is a JSON document shaped like a policy file of n rules, as
// json.MarshalIndent writes one.
func policyLike(n int) []byte {
	type rule struct {
		ID       string            `json:"id"`
		Tool     string            `json:"tool"`
		Command  string            `json:"command,omitempty"`
		Path     string            `json:"path,omitempty"`
		Args     map[string]string `json:"args,omitempty"`
		Decision string            `json:"decision"`
	}
	rules := make([]rule, n)
	for i := range rules {
		rules[i] = rule{ID: fmt.Sprintf("r%d", i), Tool: "shell", Command: fmt.Sprintf("tool%d sub", i), Decision: "allow"}
		if i%3 == 0 {
			rules[i] = rule{ID: fmt.Sprintf("r%d", i), Tool: "mcp__github__create_issue", Args: map[string]string{"repo": fmt.Sprintf("org%d/*", i)}, Decision: "ask"}
		}
	}
	b, err := json.MarshalIndent(map[string]any{"version": 1, "rules": rules}, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkParse reads a document shaped like a policy file of 1,000
// rules into a tree.
func BenchmarkParse(b *testing.B) {
	src := policyLike(1000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := strictjson.Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}
