package shellrisk

import (
	"runtime"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// The bounds below count work, never time: a timed bound fails on a loaded
// machine (or under -race) and passes a quadratic algorithm on a fast one.
//
// workBound is the most analyzer.work a command of n bytes may cost: the
// duplicate checks of the Findings and Accesses lists (at most
// maxListed²/2 comparisons each, since a full list is checked first) and a
// few steps per byte. Comparing every word's access with every listed one,
// as the analyser once did, costs n/2·maxListed for `rm -rf x x x …`, about
// 16 million comparisons for 64 KiB, 20 times over this bound.
func workBound(n int) int { return maxListed*maxListed + 8*n }

// allocBound is the most a 64 KiB command may allocate.
const allocBound = 64 << 20

// measure analyses cmd and reports the work counted and the bytes allocated.
func measure(cmd string) (Result, int, uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, work := analyzeCounting(cmd, testEnv)
	runtime.ReadMemStats(&after)
	return r, work, after.TotalAlloc - before.TotalAlloc
}

// TestBoundedWrappers feeds 64 KiB of nested wrappers, the shape the red
// team used to make unwrapping quadratic (18 s and 6.9 GB for 32 KB of
// `env `): each must cost work linear in its length, allocate boundedly,
// and still see the command at the end or be Opaque.
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
			r, work, alloc := measure(cmd)
			if alloc > allocBound {
				t.Errorf("%d bytes of %q: allocated %d MiB", len(cmd), tc.unit, alloc>>20)
			}
			if work > workBound(len(cmd)) {
				t.Errorf("%d bytes of %q: %d steps of work, more than %d", len(cmd), tc.unit, work, workBound(len(cmd)))
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
		{"rm-distinct", "rm -rf" + strings.Repeat(" x y z", MaxInput/6-2)},
		{"cat-args", "cat" + strings.Repeat(" x", MaxInput/2-4) + "; rm -rf x"},
		{"pipeline", strings.Repeat("cat x | ", MaxInput/8-2) + "rm -rf x"},
		{"bash-c", strings.Repeat("bash -c '", 4) + "rm -rf x" + strings.Repeat("'", 4) + strings.Repeat(" ; env env env ls", 3000)},
		{"sudo-lists", strings.Repeat("sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo sudo ls;", MaxInput/86)},
		{"git-C", strings.Repeat("git -C d status;", MaxInput/16-1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.cmd) > MaxInput {
				tc.cmd = tc.cmd[:MaxInput]
			}
			r, work, alloc := measure(tc.cmd)
			if alloc > allocBound {
				t.Errorf("%s (%d bytes): allocated %d MiB", tc.name, len(tc.cmd), alloc>>20)
			}
			if work > workBound(len(tc.cmd)) {
				t.Errorf("%s (%d bytes): %d steps of work, more than %d", tc.name, len(tc.cmd), work, workBound(len(tc.cmd)))
			}
			if r.Risk < risk.Execute {
				t.Errorf("%s: risk %v", tc.name, r.Risk)
			}
		})
	}
}
