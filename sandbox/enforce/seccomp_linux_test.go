package enforce

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The filter is assembled once in the parent and sent in the spec; a spec
// that carries none, or a malformed one, must stop the helper before the
// command runs, never let it run unfiltered.
func TestHelperRefusesSpecWithoutFilter(t *testing.T) {
	if !Probe().Available() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox is unavailable: %s", Probe().Unavailable)
		}
		t.Skipf("the sandbox is unavailable here: %s", Probe().Unavailable)
	}
	good, err := seccompProgram(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		filter []byte
	}{
		{"none", nil},
		{"truncated", good[:len(good)-3]},
		{"too long", bytes.Repeat(good[:8], bpfMaxInsns+1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			marker := dir + "/ran"
			cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "touch " + marker}, Dir: dir}
			p := Profile{Kind: Workspace, Cwd: dir, Writable: []string{dir}}
			conf, err := startHelper(spec{Profile: p, Path: cmd.Path, Args: cmd.Args, Env: []string{}, Dir: dir, LandlockABI: landlockABI(), Seccomp: c.filter}, cmd)
			if err != nil {
				t.Fatal(err)
			}
			runErr := cmd.Run()
			setupErr := conf.Done()
			if !errors.Is(setupErr, ErrSetup) || !strings.Contains(setupErr.Error(), "well-formed filter") {
				t.Errorf("setup error %v (run: %v), want the filter refused", setupErr, runErr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran although its spec had no well-formed filter")
			}
		})
	}
}

// Each profile's filter is assembled once per process: later calls return
// the same program, and the two differ (sockets of the IP families).
func TestSeccompProgramCached(t *testing.T) {
	off, err := seccompProgram(false)
	if err != nil {
		t.Fatal(err)
	}
	on, err := seccompProgram(true)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := seccompProgram(false)
	if &again[0] != &off[0] {
		t.Error("the filter was assembled again")
	}
	if bytes.Equal(off, on) {
		t.Error("the filters with and without the network are the same")
	}
	if len(off)%8 != 0 || len(off) == 0 {
		t.Errorf("the filter has %d bytes, not a whole number of instructions", len(off))
	}
}
