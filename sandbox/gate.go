package sandbox

import (
	"os/exec"
	"sync"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/sandbox/enforce"
	"github.com/custom-agent/custom-agent/tool"
)

// Gate is the sandbox as the executor uses it: it plans each call's
// profile before the engine decides, and confines the call once allowed.
// It is safe for concurrent use.
type Gate struct {
	planner *Planner
	off     bool
	support func() Support

	mu   sync.Mutex
	pool *Pool // nil until StartAhead, and after Close
}

var _ executor.Sandbox = (*Gate)(nil)

// NewGate returns the executor's sandbox. off turns it off on purpose
// (--sandbox off): calls then run unconfined, and say so.
func NewGate(env Env, off bool) *Gate {
	return &Gate{planner: NewPlanner(env), off: off, support: Probe}
}

// StartAhead starts size helpers of each kind ahead of the calls that
// will need them (docs/sandbox.md, "Helpers started ahead"), once the
// machine is known to support the sandbox; it does nothing when the
// sandbox is off or unavailable, or size is below 1. Close ends them.
func (g *Gate) StartAhead(size int) {
	if g.off || size < 1 || !g.support().Available() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pool == nil {
		g.pool = enforce.NewPool(size)
	}
}

// Pool returns the helpers started ahead, nil when none are.
func (g *Gate) Pool() *Pool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pool
}

// Close kills the helpers started ahead that wait, and reaps them; the
// calls after it start their own.
func (g *Gate) Close() {
	g.mu.Lock()
	pool := g.pool
	g.pool = nil
	g.mu.Unlock()
	pool.Close()
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
		confine := func(cmd *exec.Cmd) (tool.Confinement, error) {
			c, err := ConfineWith(g.Pool(), p, cmd)
			if err != nil {
				return nil, err
			}
			return c, nil
		}
		return confine, event.SandboxInfo{Profile: string(p.Kind), Network: p.Network, Digest: p.Digest()}
	}}
}
