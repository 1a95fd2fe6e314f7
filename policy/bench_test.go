package policy_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

// thousandRules is a policy of 1,000 rules over every kind of matcher.
func thousandRules() []policy.Rule {
	tools := []string{"shell", "read_file", "write_file", "http_get", "mcp__github__create_issue"}
	rules := make([]policy.Rule, 1000)
	for i := range rules {
		r := policy.Rule{ID: fmt.Sprintf("r%d", i), Tool: tools[i%len(tools)], Decision: []permission.Verdict{permission.Allow, permission.Ask, permission.Deny}[i%3]}
		switch r.Tool {
		case "shell":
			r.Command = fmt.Sprintf("tool%d sub", i)
		case "read_file", "write_file":
			r.Path = fmt.Sprintf("dir%d/**", i)
		case "http_get":
			r.URL = fmt.Sprintf("host%d.example.com", i)
		default:
			r.Args = map[string]string{"repo": fmt.Sprintf("org%d/*", i)}
		}
		rules[i] = r
	}
	return rules
}

// BenchmarkLoad1000 opens a store whose user file holds 1,000 rules: read,
// parse strictly with positions, check ids, compile each rule (once, when
// the file is checked) and join the levels into the policy.
func BenchmarkLoad1000(b *testing.B) {
	w := newWorld(b)
	src, err := json.MarshalIndent(policy.File{Version: policy.Version, Rules: thousandRules()}, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	w.writeUser(b, string(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := policy.Open(policy.Options{Cwd: w.repo, ConfigHome: w.cfg, Home: w.home})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Policy(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck1000 decides a non-shell call against the 1,000 rules, in a
// working directory whose path is all lower case and in one with capitals
// (deny and ask rules compare paths case-folded).
func BenchmarkCheck1000(b *testing.B) {
	w := newWorld(b)
	src, _ := json.Marshal(policy.File{Version: policy.Version, Rules: thousandRules()})
	w.writeUser(b, string(src))
	pol, err := w.open(b).Policy()
	if err != nil {
		b.Fatal(err)
	}
	t, _ := permission.Builtin("read_file")
	for _, cwd := range []string{"/home/me/src/app", "/Users/Me/Src/App"} {
		b.Run(cwd, func(b *testing.B) {
			req := permission.Request{Tool: t, Args: map[string]any{"path": "dir501/x.go"}, Cwd: cwd, Home: "/home/me", Policy: pol}
			var e permission.Engine
			b.ReportAllocs()
			for b.Loop() {
				if d := e.Check(req); d.Decision == permission.Unset {
					b.Fatal("unset")
				}
			}
		})
	}
}
