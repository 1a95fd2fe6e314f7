//go:build !linux

package enforce

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Probe reports that no profile can be enforced: the sandbox needs Linux
// (namespaces, Landlock, seccomp). Calls that start processes are asked.
func Probe() Support {
	return Support{Unavailable: "the sandbox runs on Linux only, not on " + runtime.GOOS}
}

func confine(Profile, *exec.Cmd, bool) (*Confined, error) {
	return nil, fmt.Errorf("%w: it runs on Linux only", ErrSetup)
}
