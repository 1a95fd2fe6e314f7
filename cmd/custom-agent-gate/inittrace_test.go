package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// initAllocBudget is, for packages whose tables were made static or lazy
// because every hook call is a new process, the most allocations their
// package init may make (GODEBUG=inittrace=1 counts them). pathrisk's
// tables are generated static data (locations_gen.go), so it has no init
// at all; shellrisk builds its tables on first use and allocates only its
// pools and lazy values.
var initAllocBudget = map[string]int{
	"github.com/custom-agent/custom-agent/permission/pathrisk":  0,
	"github.com/custom-agent/custom-agent/permission/shellrisk": 8,
}

// TestInitAllocations builds the gate and counts what the package inits
// of initAllocBudget allocate at its start, so that a map literal or a
// table computed at init is not added back unnoticed (counting, not
// timing: the count is the same on any machine).
func TestInitAllocations(t *testing.T) {
	testenv.NeedProgram(t, "go")
	gate := filepath.Join(t.TempDir(), "custom-agent-gate")
	if out, err := exec.Command("go", "build", "-o", gate, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the gate: %v\n%s", err, out)
	}
	c := exec.Command(gate, "version")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("custom-agent-gate version: %v\n%s", err, stderr.String())
	}
	allocs, err := initAllocs(stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(allocs) == 0 {
		t.Fatalf("no init traced; stderr:\n%s", stderr.String())
	}
	for pkg, budget := range initAllocBudget {
		if n := allocs[pkg]; n > budget { // no line: no init, nothing allocated
			t.Errorf("%s's init makes %d allocations, at most %d allowed: build its tables as static data or on first use", pkg, n, budget)
		}
	}
}

// initAllocs reads the lines GODEBUG=inittrace=1 writes ("init PKG @0.5
// ms, 0.01 ms clock, 656 bytes, 5 allocs") into allocations by package.
func initAllocs(trace string) (map[string]int, error) {
	out := map[string]int{}
	for line := range strings.Lines(trace) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "init" {
			continue
		}
		if len(f) != 11 || f[len(f)-1] != "allocs" {
			return nil, fmt.Errorf("an init trace line not understood: %q", line)
		}
		n, err := strconv.Atoi(f[len(f)-2])
		if err != nil {
			return nil, fmt.Errorf("an init trace line not understood: %q: %w", line, err)
		}
		out[f[1]] += n
	}
	return out, nil
}

func TestInitAllocsParses(t *testing.T) {
	got, err := initAllocs("custom-agent-gate v1\ninit runtime @0.02 ms, 1.7 ms clock, 0 bytes, 0 allocs\n" +
		"init example.com/p @3.3 ms, 0.13 ms clock, 39432 bytes, 239 allocs\n")
	if err != nil || len(got) != 2 || got["example.com/p"] != 239 || got["runtime"] != 0 {
		t.Errorf("initAllocs = %v, %v", got, err)
	}
	if _, err := initAllocs("init example.com/p @3.3 ms, 0.13 ms clock, 39432 bytes\n"); err == nil {
		t.Error("a short line is read without an error")
	}
}
