// Package sandbox confines the processes of allowed tool calls: it plans
// the profile a decision implies (Planner, KindFor), and hands it to the
// kernel through package enforce, whose helper sets it up.
package sandbox

import (
	"os"
	"os/exec"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/sandbox/enforce"
)

// The profile and its enforcement, as package enforce defines them.
type (
	Kind     = enforce.Kind
	Profile  = enforce.Profile
	Support  = enforce.Support
	Confined = enforce.Confined
	Pool     = enforce.Pool
)

// The profiles.
const (
	ReadOnly  = enforce.ReadOnly
	Workspace = enforce.Workspace
)

// Errors of Confine and Confined.Done.
var (
	ErrSetup            = enforce.ErrSetup
	ErrProtectedCreated = enforce.ErrProtectedCreated
	ErrProtectedKept    = enforce.ErrProtectedKept
)

// Probe reports what this machine supports (enforce.Probe).
func Probe() Support { return enforce.Probe() }

// Confine prepares cmd to run under p (enforce.Confine), with the names
// made in p.GuardDirs judged by pathrisk's tables (guardedName). For a workspace
// profile, the refs, reflogs and index of its known git directories are
// read first, and followed when the command ends (checkGitRefs).
func Confine(p Profile, cmd *exec.Cmd) (*Confined, error) {
	return ConfineWith(nil, p, cmd)
}

// ConfineWith is Confine with the helpers started ahead in pool
// (enforce.Pool.ConfineThen): when Confined.Started reports true, cmd has
// been started, and the caller only waits for it.
func ConfineWith(pool *Pool, p Profile, cmd *exec.Cmd) (*Confined, error) {
	if p.Kind != Workspace || len(p.GitDirs) == 0 {
		return pool.ConfineThen(p, cmd, guardedName, nil)
	}
	states, err := snapshotGit(p)
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	return pool.ConfineThen(p, cmd, guardedName, func() (notes, errs []string) {
		return checkGitRefs(states, protectedIn(p, home))
	})
}

// KindFor returns the profile an allowed decision implies: read-only for a
// call that only reads (Decision.ReadOnly: judged read, or a command of
// read-only forms, whichever rule allowed it), workspace for the rest, with
// the network only when the call was judged network (its risk, or one of
// its findings). It is pure.
func KindFor(d permission.Decision) (Kind, bool) {
	network := d.RiskAtDecision == risk.Network
	for _, f := range d.Findings {
		if f.Risk == risk.Network {
			network = true
		}
	}
	if d.ReadOnly {
		// A call that only reads runs read-only, network finding or
		// not: no read-only form reaches the network.
		return ReadOnly, false
	}
	if d.RiskAtDecision == risk.Read && !network {
		return ReadOnly, false
	}
	return Workspace, network
}
