package enforce

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// ErrProtectedCreated is returned by Confined.Done when the process created
// a protected path that did not exist when it started (Profile.Absent):
// the path has been removed.
var ErrProtectedCreated = errors.New("the command created protected paths, which were removed")

// ErrSetup wraps a failure of the sandbox itself to set up (not of the
// command it was to run).
var ErrSetup = errors.New("the sandbox could not be set up")

// Support is what this machine can enforce.
type Support struct {
	// LandlockABI is the kernel's Landlock ABI version, 0 for none.
	LandlockABI int `json:"landlockAbi"`
	// UserNamespaces is set when an unprivileged process can make user,
	// mount, PID and network namespaces (tried, not guessed).
	UserNamespaces bool `json:"userNamespaces"`
	// Seccomp is set when a seccomp filter could be loaded.
	Seccomp bool `json:"seccomp"`
	// Unavailable says, for a person, why profiles cannot be enforced
	// here; "" when they can.
	Unavailable string `json:"unavailable,omitempty"`
}

// Available reports whether every profile can be enforced.
func (s Support) Available() bool { return s.Unavailable == "" }

// Confined is a command prepared to run in the sandbox. Call Done once it
// has been waited for, or failed to start.
type Confined struct {
	done func() error
}

// Done releases what the sandbox held for the command and returns the
// sandbox's own failure to set up, if it had one (wrapping ErrSetup).
func (c *Confined) Done() error {
	if c == nil || c.done == nil {
		return nil
	}
	d := c.done
	c.done = nil
	return d()
}

// Confine prepares cmd, not yet started, to run under p: its Path must be
// absolute, and its Env, Dir and SysProcAttr are kept (Setpgid included).
// cmd then starts the helper, which sets the sandbox up and starts the
// program.
func Confine(p Profile, cmd *exec.Cmd) (*Confined, error) {
	if !p.Kind.Valid() {
		return nil, fmt.Errorf("%w: no profile", ErrSetup)
	}
	p = p.refreshed()
	c, err := confine(p, cmd, false)
	if err != nil {
		return nil, err
	}
	setup := c.done
	c.done = func() error {
		if err := setup(); err != nil {
			return err
		}
		return removeCreated(p.Absent)
	}
	return c, nil
}

// removeCreated removes each of paths that exists now, and says which.
func removeCreated(paths []string) error {
	var made []string
	for _, want := range paths {
		p, ok := findFold(want)
		if !ok {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("%w, but %s could not be: %w", ErrProtectedCreated, p, err)
		}
		made = append(made, p)
	}
	if len(made) > 0 {
		return fmt.Errorf("%w: %s (code that runs later, or the agent's own rules, cannot be planted by a command; write such a file with write_file, which is asked)", ErrProtectedCreated, strings.Join(made, ", "))
	}
	return nil
}

// findFold returns the path that exists under want's directory with want's
// name in any letter case (AGENTS.md for agents.md).
func findFold(want string) (string, bool) {
	if _, err := os.Lstat(want); err == nil {
		return want, true
	}
	dir, name := filepath.Split(want)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		if strings.EqualFold(e.Name(), name) {
			return filepath.Join(dir, e.Name()), true
		}
	}
	return "", false
}

// refreshed returns p with the absent paths that exist by now (the agent
// itself wrote .custom-agent/policy.json for an "always allow in this
// project" answer, after the plan) moved to the protected ones, their
// parents pinned: they are guarded by a mount, not removed afterwards.
func (p Profile) refreshed() Profile {
	var absent, made []string
	for _, a := range p.Absent {
		if real, ok := findFold(a); ok {
			made = append(made, real)
		} else {
			absent = append(absent, a)
		}
	}
	if len(made) == 0 {
		return p
	}
	p.Absent = absent
	p.Protected = append(slices.Clone(p.Protected), made...)
	p.Pinned = append(slices.Clone(p.Pinned), Pins(p.Cwd, made)...)
	slices.Sort(p.Pinned)
	p.Pinned = slices.Compact(p.Pinned)
	return p
}

// Covered are the directories the sandbox replaces with empty ones: their
// content is private to the host (sockets, other processes' files).
var Covered = []string{"/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm"}

// Pins returns the directories between cwd and each protected path: each
// becomes a mount point of its own, which cannot be renamed or removed, so
// that a process cannot move a protected path's parent aside and make a
// new, unprotected one in its place.
func Pins(cwd string, protected []string) []string {
	var out []string
	for _, q := range protected {
		for d := filepath.Dir(q); d != cwd && within(d, cwd); d = filepath.Dir(d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// within reports whether p is dir or lies beneath it (both clean).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
