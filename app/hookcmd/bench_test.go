package hookcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/hook"
)

// BenchmarkRun is one hook call in process, judged and recorded: what the
// hook costs beyond starting the process.
//
//	go test ./app/hookcmd -run '^$' -bench Run
func BenchmarkRun(b *testing.B) {
	dir := b.TempDir()
	b.Setenv("HOME", filepath.Join(dir, "home"))
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	event := `{"session_id":"bench","cwd":"` + proj + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"t"}`
	for _, rec := range []bool{true, false} {
		name := "record"
		if !rec {
			name = "no-record"
		}
		b.Run(name, func(b *testing.B) {
			o := Options{DataDir: filepath.Join(dir, "data"), NoRecord: !rec, Getenv: func(string) string { return "" }}
			for b.Loop() {
				if ans := Run(hook.ClaudeCode, strings.NewReader(event), o); ans.Code != 0 {
					b.Fatal(string(ans.Stderr))
				}
			}
		})
	}
}
