package enforce

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// What a command inherits from custom-agent besides its stdio, directory
// and environment: the umask and resource limits. A helper started for the
// call inherits them at the call; one started ahead, when it started. The
// spec carries them and every helper sets them before it builds the view,
// so both run the command with custom-agent's at the call.

// nLimits is the number of resource limits (RLIM_NLIMITS).
const nLimits = 16

// rlimit is one resource limit in the spec.
type rlimit struct {
	Resource int    `json:"resource"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}

// limits returns this process's resource limits, indexed by resource.
func limits() ([nLimits]unix.Rlimit, error) {
	var out [nLimits]unix.Rlimit
	for r := range out {
		if err := unix.Prlimit(0, r, nil, &out[r]); err != nil {
			return out, fmt.Errorf("resource limit %d: %w", r, err)
		}
	}
	return out, nil
}

// specLimits returns the limits the spec carries: all but RLIMIT_NOFILE,
// which Go manages: it raises its own soft limit at start and gives every
// child the one it started with (the helper does so for the command too),
// so a helper inherits that one from custom-agent in either way. A helper
// started ahead is not used once custom-agent has set it since (handOK).
func specLimits(l [nLimits]unix.Rlimit) []rlimit {
	out := make([]rlimit, 0, nLimits)
	for r, v := range l {
		if r != unix.RLIMIT_NOFILE {
			out = append(out, rlimit{Resource: r, Cur: v.Cur, Max: v.Max})
		}
	}
	return out
}

// umask returns this process's umask, read from /proc/self/status: the
// umask call sets it, and would change it for every thread meanwhile.
func umask() (uint32, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil || m > 0o777 {
				return 0, fmt.Errorf("/proc/self/status: the umask %q", v)
			}
			return uint32(m), nil
		}
	}
	return 0, fmt.Errorf("/proc/self/status has no umask")
}

// applyInherited sets the spec's umask and resource limits in the helper.
// For a helper started for the call they are the ones it has.
func applyInherited(s *spec) error {
	if s.Umask > 0o777 {
		return fmt.Errorf("the umask %#o", s.Umask)
	}
	unix.Umask(int(s.Umask))
	for _, l := range s.Rlimits {
		if l.Resource < 0 || l.Resource >= nLimits || l.Resource == unix.RLIMIT_NOFILE {
			return fmt.Errorf("resource limit %d", l.Resource)
		}
		if err := unix.Setrlimit(l.Resource, &unix.Rlimit{Cur: l.Cur, Max: l.Max}); err != nil {
			return fmt.Errorf("resource limit %d: %w", l.Resource, err)
		}
	}
	return nil
}

// limitsOK reports whether a helper started ahead when custom-agent had
// the limits then can run a call with the ones it has now: a helper can
// lower a limit but not raise a hard one (custom-agent may, as root), and
// its RLIMIT_NOFILE is the one it started with.
func limitsOK(then, now [nLimits]unix.Rlimit) bool {
	for r := range now {
		if now[r].Max > then[r].Max || r == unix.RLIMIT_NOFILE && now[r] != then[r] {
			return false
		}
	}
	return true
}
