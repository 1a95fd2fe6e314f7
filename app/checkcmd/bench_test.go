package checkcmd

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkCheckOneShot is the work of one `custom-agent check` after the
// process has started: read the configuration and the policy (built-in
// rules included), decide one call, print it. Process start itself is
// measured outside Go: GODEBUG=inittrace=1 and a timer over many runs.
func BenchmarkCheckOneShot(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("XDG_CONFIG_HOME", home+"/.config")
	cwd := b.TempDir()
	for _, c := range []struct{ name, tool, args string }{
		{"read_file", "read_file", `{"path":"src/main.go"}`},
		{"shell", "shell", `{"command":"go test ./... && git status"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				o := Options{Tool: c.tool, Args: c.args, Cwd: cwd}
				if err := Run(strings.NewReader(""), io.Discard, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
