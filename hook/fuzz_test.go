package hook

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// FuzzParseMap feeds arbitrary events to Parse and Map. Invariants: no
// panic; an event that does not parse is never mapped; every path a
// mapped call names is absolute (or under the home, "~/"), so no path is
// judged relative to anything but the event's cwd; no answer to a
// destructive call is allow.
func FuzzParseMap(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"../x"}}`,
		`{"cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Glob","tool_input":{"pattern":"{a,/b}/../*"}}`,
		`{"cwd":"/p","hook_event_name":"BeforeTool","tool_name":"read_many_files","tool_input":{"paths":["~/x/*","/a/**"]}}`,
		`{"cwd":"/p","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls","directory":"../.."}}`,
		`{"cwd":"/p","hook_event_name":"PreToolUse","tool_name":"MultiEdit","tool_input":{"file_path":"a","edits":[{"new_string":1}]}}`,
		`{"cwd":"/p","hook_event_name":"BeforeTool","tool_name":"web_fetch","tool_input":{"prompt":"http://a http://b"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, a := range Agents {
			in, err := Parse(a, bytes.NewReader(b))
			if err != nil {
				continue
			}
			calls, err := Map(in)
			if err != nil {
				if len(calls) > 0 {
					t.Fatalf("calls with an error: %v", err)
				}
				continue
			}
			for _, c := range calls {
				for _, k := range append(append([]string{}, c.Tool.PathArgs...), c.Tool.CwdArg) {
					v, ok := c.Args[k].(string)
					if !ok || v == "" {
						continue
					}
					if !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") {
						t.Fatalf("%s %s: %s %q is not absolute", a, in.ToolName, k, v)
					}
				}
			}
			if ans := Decide(in, permission.Allow, "r", risk.Destructive, Options{}); ans.Verdict == permission.Allow {
				t.Fatal("a destructive call answered allow")
			}
		}
	})
}
