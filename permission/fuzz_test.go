package permission_test

import (
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// FuzzCheck feeds arbitrary strings to every argument the engine reads:
// Check must not panic, must return a set decision, must never allow what
// it judged destructive, and must stay fast on inputs up to 64 KiB.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"", "ls", "rm -rf /", "~/.ssh/id_rsa", "../../etc", "--- a/x\n+++ b/x\n", "http://169.254.169.254/", "$((", "l/../x"} {
		f.Add(uint8(0), s, "")
	}
	tools := permission.Builtins()
	p, err := permission.Compile([]permission.Rule{
		{ID: "a", Level: permission.LevelUser, Tool: "*", Decision: permission.Allow},
		{ID: "b", Level: permission.LevelUser, Tool: "shell", Command: "rm", Decision: permission.Ask},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which uint8, s, resolved string) {
		if len(s) > 64<<10 || len(resolved) > 4<<10 {
			t.Skip()
		}
		info := tools[int(which)%len(tools)]
		args := map[string]any{}
		for _, k := range []string{"path", "command", "patch", "url", "body", "glob", "cwd", "pattern", "content"} {
			args[k] = s
		}
		req := permission.Request{
			Tool: info, Args: args, Cwd: testCwd, Home: testHome, Policy: p,
			Resolved: map[string]string{testCwd + "/" + s: "/" + resolved, testCwd + "/l": "/" + resolved},
		}
		start := time.Now()
		d := permission.Engine{}.Check(req)
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("Check took %v on %d bytes", el, len(s))
		}
		if d.Decision == permission.Unset || d.Reason == "" {
			t.Fatalf("unset or unexplained decision %+v", d)
		}
		if d.RiskAtDecision == risk.Destructive && d.Allowed() {
			t.Fatalf("destructive call allowed: %+v", d)
		}
		_ = permission.PathsToResolve(req)
	})
}
