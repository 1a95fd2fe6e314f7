//go:build !linux

package enforce

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
)

// Probe reports that no profile can be enforced: the sandbox needs Linux
// (namespaces, Landlock, seccomp). Calls that start processes are asked.
func Probe() Support {
	return Support{Unavailable: "the sandbox runs on Linux only, not on " + runtime.GOOS}
}

// Pool is empty: no helper is started ahead.
type Pool struct{}

// NewPool returns nil.
func NewPool(int) *Pool { return nil }

// Ready returns 0.
func (*Pool) Ready(bool) int { return 0 }

// Pids returns nil.
func (*Pool) Pids() []int { return nil }

// WaitFull returns nil.
func (*Pool) WaitFull(context.Context) error { return nil }

// Close does nothing.
func (*Pool) Close() {}

func confine(*Pool, Profile, *exec.Cmd, bool) (*Confined, error) {
	return nil, fmt.Errorf("%w: it runs on Linux only", ErrSetup)
}
