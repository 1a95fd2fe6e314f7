package shellrisk

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestBoundedWrappers feeds 64 KiB of nested wrappers, the shape the red
// team used to make unwrapping quadratic (18 s and 6.9 GB for 32 KB of
// `env `): each must finish in well under a second, allocate boundedly, and
// still see the command at the end or be Opaque.
func TestBoundedWrappers(t *testing.T) {
	for _, tc := range []struct{ name, unit, tail string }{
		{"env", "env ", "rm -rf x"},
		{"sudo", "sudo ", "rm -rf x"},
		{"xargs", "xargs ", "rm -rf x"},
		{"timeout", "timeout 1 ", "rm -rf x"},
		{"nice", "nice ", "rm -rf x"},
		{"command", "command ", "rm -rf x"},
		{"find-exec", "find . -exec ", "rm -rf x"},
		{"env-assign", "env A=1 ", "rm -rf x"},
		{"nohup-stdbuf", "nohup stdbuf -o0 ", "rm -rf x"},
		{"time", "time ", "rm -rf x"},
		{"flock", "flock l ", "rm -rf x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := strings.Repeat(tc.unit, (MaxInput-len(tc.tail))/len(tc.unit)) + tc.tail
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			r := Analyze(cmd, testEnv)
			d := time.Since(start)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("%d bytes of %q: allocated %d MiB", len(cmd), tc.unit, alloc>>20)
			}
			if d > raceSlowdown*500*time.Millisecond {
				t.Errorf("%d bytes of %q: took %v", len(cmd), tc.unit, d)
			}
			if r.Risk < risk.Destructive && !r.Opaque {
				t.Errorf("%d bytes of %q: risk %v and not Opaque", len(cmd), tc.unit, r.Risk)
			}
		})
	}
}

// TestBoundedShapes covers other 64 KiB shapes: deep nesting of
// substitutions and groups, and many arguments (findings amplification).
func TestBoundedShapes(t *testing.T) {
	n := MaxInput / 8
	for _, tc := range []struct{ name, cmd string }{
		{"cmdsubst", strings.Repeat("echo $(", n) + "rm -rf x" + strings.Repeat(")", n)},
		{"procsubst", strings.Repeat("cat <(", n) + "rm -rf x" + strings.Repeat(")", n)},
		{"groups", strings.Repeat("{ ", n) + "rm -rf x;" + strings.Repeat(" }", n)},
		{"subshells", strings.Repeat("(", n) + "rm -rf x" + strings.Repeat(")", n)},
		{"rm-args", "rm -rf" + strings.Repeat(" x", MaxInput/2-4)},
		{"pipeline", strings.Repeat("cat x | ", MaxInput/8-2) + "rm -rf x"},
		{"bash-c", strings.Repeat("bash -c '", 4) + "rm -rf x" + strings.Repeat("'", 4) + strings.Repeat(" ; env env env ls", 3000)},
		{"sudo-lists", strings.Repeat("sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo ls;", MaxInput/86)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.cmd) > MaxInput {
				tc.cmd = tc.cmd[:MaxInput]
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			r := Analyze(tc.cmd, testEnv)
			d := time.Since(start)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("%s (%d bytes): allocated %d MiB", tc.name, len(tc.cmd), alloc>>20)
			}
			if d > raceSlowdown*500*time.Millisecond {
				t.Errorf("%s (%d bytes): took %v", tc.name, len(tc.cmd), d)
			}
			if r.Risk < risk.Execute {
				t.Errorf("%s: risk %v", tc.name, r.Risk)
			}
		})
	}
}
