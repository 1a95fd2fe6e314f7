package sandbox

import (
	"os/exec"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// Gate is the sandbox as the executor uses it: it plans each call's
// profile before the engine decides, and confines the call once allowed.
// It is safe for concurrent use.
type Gate struct {
	planner *Planner
	off     bool
	support func() Support
}

var _ executor.Sandbox = (*Gate)(nil)

// NewGate returns the executor's sandbox. off turns it off on purpose
// (--sandbox off): calls then run unconfined, and say so.
func NewGate(env Env, off bool) *Gate {
	return &Gate{planner: NewPlanner(env), off: off, support: Probe}
}

// State is how session.started records the sandbox: "off", "unavailable:
// why", or "" when it is on.
func (g *Gate) State() string {
	switch {
	case g.off:
		return "off"
	case !g.support().Available():
		return "unavailable: " + g.support().Unavailable
	}
	return ""
}

// Plan reads the working directory for the call's profile. A machine that
// cannot enforce profiles, or a tree that cannot be planned, is reported
// to the engine as unavailable, so the call is asked.
func (g *Gate) Plan(cwd string) executor.SandboxPlan {
	if g.off {
		return executor.SandboxPlan{Facts: permission.SandboxFacts{Off: true}}
	}
	if s := g.support(); !s.Available() {
		return executor.SandboxPlan{Facts: permission.SandboxFacts{Unavailable: s.Unavailable}}
	}
	var facts permission.SandboxFacts
	base, err := g.planner.Plan(Workspace, false, cwd)
	if err != nil {
		// What keeps writes from being confined may leave reads
		// confinable (a linked .vscode, a home as the working
		// directory): then only writing calls are asked.
		ro, rerr := g.planner.Plan(ReadOnly, false, cwd)
		if rerr != nil {
			return executor.SandboxPlan{Facts: permission.SandboxFacts{Unavailable: rerr.Error()}}
		}
		base, facts.WritesUnavailable = ro, err.Error()
	}
	return executor.SandboxPlan{Facts: facts, For: func(d permission.Decision) (tool.ConfineFunc, event.SandboxInfo) {
		kind, network := KindFor(d)
		// Refreshed as Confine will: the digest is the enforced one.
		p := base.As(kind, network).Refreshed()
		confine := func(cmd *exec.Cmd) (func() error, error) {
			c, err := Confine(p, cmd)
			if err != nil {
				return nil, err
			}
			return c.Done, nil
		}
		return confine, event.SandboxInfo{Profile: string(p.Kind), Network: p.Network, Digest: p.Digest()}
	}}
}
