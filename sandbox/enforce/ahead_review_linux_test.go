package enforce

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Tests from the review of the pool of helpers started ahead: what a
// refill and many calls leave behind.

// shCmd runs script with sh in dir, its output to w, in its own process
// group (a start a helper started ahead can take).
func shCmd(dir, script string, w *os.File) *exec.Cmd {
	return &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Stdout: w, Stderr: w, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
}

// While a call runs, a helper of the other kind is started (the
// refill of an earlier call): it holds none of the running call's
// descriptors.
func TestAheadRefillDuringCallHoldsNoCallFDs(t *testing.T) {
	needSandbox(t)
	pl := fullPool(t)
	dir := t.TempDir()
	done := make(chan string)
	go func() {
		out, _, _, _ := runAhead(t, pl, dir, "sleep 2; echo a")
		done <- out
	}()
	time.Sleep(300 * time.Millisecond)
	// A network call through the pool: its refill starts while the
	// first call runs.
	r, w, _ := os.Pipe()
	cmd := shCmd(dir, "true", w)
	c, err := pl.ConfineThen(Profile{Kind: Workspace, Network: true, Cwd: dir, Writable: []string{dir}}, cmd, nil, nil)
	if err != nil || !c.Started() {
		t.Fatal(err)
	}
	w.Close()
	_ = cmd.Wait()
	_ = c.Done()
	r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = pl.WaitFull(ctx)
	for _, pid := range pl.Pids() {
		ents, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
		var fds []string
		for _, e := range ents {
			l, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + e.Name())
			fds = append(fds, e.Name()+"->"+l)
			if strings.HasPrefix(l, "pipe:") {
				t.Errorf("waiting helper %d holds a pipe: %s", pid, l)
			}
		}
		t.Logf("helper %d fds: %v", pid, fds)
	}
	t.Logf("first call: %q", <-done)
}

// Many pooled calls (and calls refused by sees) leave no
// descriptor, child or zombie behind in the parent.
func TestAheadNoParentLeaks(t *testing.T) {
	needSandbox(t)
	pl := fullPool(t)
	dir := t.TempDir()
	count := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	before := count()
	for i := 0; i < 15; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = pl.WaitFull(ctx)
		cancel()
		_, _, started, err := runAhead(t, pl, dir, "echo hi")
		if !started || err != nil {
			t.Fatalf("call %d: %v %v", i, started, err)
		}
	}
	// A dead waiting helper: its mount table cannot be read, the call
	// starts cold.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_ = pl.WaitFull(ctx)
	cancel()
	for _, pid := range pl.Pids() {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	time.Sleep(100 * time.Millisecond)
	out, _, started, err := runAhead(t, pl, dir, "echo hi")
	t.Logf("after killing the waiting helpers: %q started %v err %v", out, started, err)
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	_ = pl.WaitFull(ctx)
	cancel()
	after := count()
	t.Logf("fds before %d after %d; waiting %v", before, after, pl.Pids())
	if after > before+1 {
		t.Errorf("fds grew from %d to %d", before, after)
	}
}
