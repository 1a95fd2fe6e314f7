package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/sandbox/enforce"
	"github.com/custom-agent/custom-agent/tool"
	"github.com/custom-agent/custom-agent/tools/proc"
)

// childPids returns the processes whose parent is this one.
func childPids(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(st)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 1 && f[1] == me {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// The shell tool, through the executor's gate with helpers started ahead,
// behaves as with helpers started for each call: output and exit status;
// a cancelled turn stops the command and leaves no process; Close leaves
// none either.
func TestGateAheadShell(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	home, _ := os.UserHomeDir()
	g := NewGate(Env{Home: home, Path: os.Getenv("PATH")}, false)
	reaped(t) // an earlier test's
	before := childPids(t)
	g.StartAhead(1)
	defer g.Close()
	wait := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := g.Pool().WaitFull(ctx); err != nil || g.Pool().Ready(false) != 1 {
			t.Fatalf("the pool is not full: %v", err)
		}
	}
	wait()
	plan := g.Plan(dir)
	confine, info := plan.For(permission.Decision{Decision: permission.Allow, RiskAtDecision: risk.Write})
	if info.Profile != string(Workspace) || info.Network {
		t.Fatalf("profile %+v, want workspace without the network", info)
	}
	run := func(ctx context.Context, script string) (string, *int, error) {
		var out, errOut bytes.Buffer
		res, err := proc.NewShell().Run(ctx, tool.Call{Args: map[string]any{"command": script}, Cwd: dir, Env: []string{"PATH=/usr/bin:/bin"}, Confine: confine},
			tool.Output{Stdout: &out, Stderr: &errOut})
		return out.String() + errOut.String(), res.ExitCode, err
	}

	waiting := g.Pool().Pids()
	out, code, err := run(context.Background(), "echo hi > f && cat f; echo err >&2; exit 7")
	if err != nil || code == nil || *code != 7 || out != "hi\nerr\n" {
		t.Fatalf("output %q, code %s, err %v; want hi, err and 7", out, codeOf(code), err)
	}
	// The call took the helper without a network namespace that waited:
	// it is gone once reaped, the other still waits.
	reaped(t)
	gone := 0
	for _, pid := range waiting {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			gone++
		}
	}
	if gone != 1 {
		t.Errorf("%d of the helpers that waited (%v) are gone after one call, want 1", gone, waiting)
	}

	wait()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, _, err = run(ctx, "sleep 60 & sleep 60")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	wait()
	reaped(t)
	if got := childPids(t); len(got) != len(before)+2 {
		t.Errorf("children %v after the cancelled call, want %v and the 2 waiting helpers", got, before)
	}
	g.Close()
	if got := childPids(t); !slices.Equal(got, before) {
		t.Errorf("children %v after Close, want %v", got, before)
	}
	out, code, err = run(context.Background(), "echo after")
	if err != nil || code == nil || *code != 0 || out != "after\n" {
		t.Errorf("after Close: %q, %s, %v; want a call started for itself", out, codeOf(code), err)
	}
}

// reaped waits (a minute at most) until the helpers the shell tool left
// to reap in the background are reaped.
func reaped(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := proc.WaitReaped(ctx); err != nil {
		t.Fatal(err)
	}
}

// Calls through the shell tool return on their helper's report (every one
// of them, started ahead or for the call), and the helpers reaped in the
// background leave nothing: after them no child of this process but the
// waiting helpers, no zombie, and no more goroutines than before.
func TestGateReapsInBackground(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	home, _ := os.UserHomeDir()
	g := NewGate(Env{Home: home, Path: os.Getenv("PATH")}, false)
	defer g.Close()
	reaped(t) // an earlier test's
	before := childPids(t)
	g.StartAhead(1)
	full := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := g.Pool().WaitFull(ctx); err != nil {
			t.Fatal(err)
		}
	}
	full()
	goroutines := runtime.NumGoroutine()
	plan := g.Plan(dir)
	confine, _ := plan.For(permission.Decision{Decision: permission.Allow, RiskAtDecision: risk.Write})
	const calls = 20
	reports := 0
	for i := range calls {
		if i%2 == 0 {
			full() // every other call takes a helper started ahead
		}
		var conf tool.Confinement
		counting := func(cmd *exec.Cmd) (tool.Confinement, error) {
			c, err := confine(cmd)
			conf = c
			return c, err
		}
		var out, errOut bytes.Buffer
		res, err := proc.NewShell().Run(context.Background(), tool.Call{Args: map[string]any{"command": fmt.Sprintf("echo %d; sleep 1000 & exit %d", i, i%4)},
			Cwd: dir, Env: []string{"PATH=/usr/bin:/bin"}, Confine: counting}, tool.Output{Stdout: &out, Stderr: &errOut})
		if err != nil || res.ExitCode == nil || *res.ExitCode != i%4 || out.String() != fmt.Sprintf("%d\n", i) {
			t.Fatalf("call %d: %q %q, code %s, %v", i, out.String(), errOut.String(), codeOf(res.ExitCode), err)
		}
		select {
		case <-conf.Reported():
			reports++
		default:
		}
	}
	if reports != calls {
		t.Errorf("%d of %d calls returned on a report", reports, calls)
	}
	reaped(t)
	full()
	if got := childPids(t); len(got) != len(before)+2 {
		t.Errorf("children %v after %d calls, want %v and the 2 waiting helpers", got, calls, before)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after %d calls, %d before:\n%s", n, calls, goroutines, buf[:runtime.Stack(buf, true)])
	}
}

// codeOf prints an exit code that may be missing.
func codeOf(c *int) string {
	if c == nil {
		return "none"
	}
	return strconv.Itoa(*c)
}

// An earlier call cannot trace or read the memory of a waiting helper
// (seccomp refuses ptrace and process_vm_readv; the helper is in no PID
// namespace the call sees, and is not dumpable): each attack is refused,
// and the helpers still wait.
func TestAheadNotTraceable(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	victims := enforce.NewPool(1)
	defer victims.Close()
	if err := victims.WaitFull(context.Background()); err != nil {
		t.Fatal(err)
	}
	pids := victims.Pids()
	if len(pids) != 2 {
		t.Fatalf("waiting helpers %v, want 2", pids)
	}
	for _, pid := range pids {
		for _, a := range []string{"ptrace", "process_vm_readv"} {
			if r := w.attack(t, Workspace, false, a, strconv.Itoa(pid)); r.code != 0 {
				t.Errorf("%s of waiting helper %d from an earlier call was not refused: %s", a, pid, r.out)
			}
		}
	}
	if victims.Ready(false) != 1 || victims.Ready(true) != 1 {
		t.Error("a waiting helper is gone after the attacks")
	}
	for _, pid := range pids {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if f := strings.Fields(string(st)); err != nil || len(f) < 3 || f[2] != "S" {
			t.Errorf("helper %d after the attacks: %v %v, want waiting (S)", pid, f, err)
		}
	}
}
