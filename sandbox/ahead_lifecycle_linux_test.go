package sandbox

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/tool"
	"github.com/custom-agent/custom-agent/tools/proc"
)

// pidsRunning returns the host pids whose cmdline contains marker.
func pidsRunning(marker string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			out = append(out, e.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// A cancelled turn, or a command that exits having daemonized
// children (setsid, double fork, nohup), leaves none of them behind when
// the call went through a pooled helper.
func TestAheadDaemonsDieWithCall(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	home, _ := os.UserHomeDir()
	g := NewGate(Env{Home: home, Path: os.Getenv("PATH")}, false)
	g.StartAhead(1)
	defer g.Close()
	for _, network := range []bool{false, true} {
		wait := func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := g.Pool().WaitFull(ctx); err != nil {
				t.Fatal(err)
			}
		}
		wait()
		plan := g.Plan(dir)
		r := risk.Write
		if network {
			r = risk.Network
		}
		confine, info := plan.For(permission.Decision{Decision: permission.Allow, RiskAtDecision: r})
		if info.Network != network {
			t.Fatalf("info %+v", info)
		}
		run := func(ctx context.Context, script string) (string, error) {
			var out, errOut bytes.Buffer
			_, err := proc.NewShell().Run(ctx, tool.Call{Args: map[string]any{"command": script}, Cwd: dir, Env: []string{"PATH=/usr/bin:/bin"}, Confine: confine},
				tool.Output{Stdout: &out, Stderr: &errOut})
			return out.String() + errOut.String(), err
		}
		pids := g.Pool().Pids()
		// Exit with daemons left.
		out, err := run(context.Background(), "setsid -f sleep 7061 </dev/null >/dev/null 2>&1; (setsid sleep 7062 </dev/null >/dev/null 2>&1 &); nohup sleep 7063 </dev/null >/dev/null 2>&1 & echo started")
		if g.Pool() != nil && len(pids) != 2 {
			t.Fatalf("pids %v", pids)
		}
		t.Logf("network %v exit path: %q %v; left: %v", network, out, err, pidsRunning("sleep 706"))
		if left := pidsRunning("sleep 706"); len(left) > 0 {
			t.Errorf("network %v: daemons outlived the call: %v", network, left)
		}
		wait()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		out, err = run(ctx, "trap '' TERM; setsid -f sleep 7071 </dev/null >/dev/null 2>&1; (setsid sh -c 'trap \"\" TERM HUP INT; sleep 7072' </dev/null >/dev/null 2>&1 &); sleep 60")
		time.Sleep(100 * time.Millisecond)
		t.Logf("network %v cancel path: %q %v; left: %v", network, out, err, pidsRunning("sleep 707"))
		if left := pidsRunning("sleep 707"); len(left) > 0 {
			t.Errorf("network %v: daemons outlived the cancelled call: %v", network, left)
		}
	}
}
