package enforce

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// needSandbox skips a test where the sandbox cannot run, and fails it
// under CI.
func needSandbox(t *testing.T) {
	t.Helper()
	if !Probe().Available() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox is unavailable: %s", Probe().Unavailable)
		}
		t.Skipf("the sandbox is unavailable here: %s", Probe().Unavailable)
	}
}

// fullPool returns a pool of one helper of each kind, waiting; it is
// closed when the test ends.
func fullPool(t *testing.T) *Pool {
	t.Helper()
	pl := NewPool(1)
	t.Cleanup(pl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := pl.WaitFull(ctx); err != nil {
		t.Fatal(err)
	}
	if pl.Ready(false) != 1 || pl.Ready(true) != 1 {
		t.Fatalf("ready: %d without the network, %d with, want 1 each", pl.Ready(false), pl.Ready(true))
	}
	return pl
}

// runAhead runs script with sh under a workspace profile of dir, through
// pl, and returns what it printed, its exit code, whether a helper started
// ahead took it, and the sandbox's error.
func runAhead(t *testing.T, pl *Pool, dir, script string) (string, int, bool, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Stdout: w, Stderr: w, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	c, err := pl.ConfineThen(Profile{Kind: Workspace, Cwd: dir, Writable: []string{dir}}, cmd, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Started() {
		err = cmd.Start()
	}
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		out <- b.String()
	}()
	_ = cmd.Wait()
	text := <-out
	return text, cmd.ProcessState.ExitCode(), c.Started(), c.Done()
}

// A helper started ahead runs the call as one started for it does: the
// command's output, its exit status through Wait, in its own process
// group; and the pool has another waiting afterwards.
func TestAheadRunsTheCall(t *testing.T) {
	needSandbox(t)
	pl := fullPool(t)
	dir := t.TempDir()
	out, code, started, err := runAhead(t, pl, dir, "echo hi > f; cat f; echo $$; exit 3")
	if err != nil || !started || code != 3 {
		t.Fatalf("err %v, started ahead %v, code %d, want nil, true, 3", err, started, code)
	}
	// The helper is PID 1 of a PID namespace of its own, whose only
	// other ids are its threads'.
	if lines := strings.Fields(out); len(lines) != 2 || lines[0] != "hi" || !(lines[1] > "1" && len(lines[1]) <= 2) {
		t.Errorf("output %q, want hi and a pid of a namespace of the helper's own", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := pl.WaitFull(ctx); err != nil || pl.Ready(false) != 1 {
		t.Errorf("after the call: %v, %d waiting, want 1", err, pl.Ready(false))
	}
}

// A helper started ahead confines itself as one started for the call: a
// write outside the writable directory fails, and a profile it cannot set
// up is reported as ErrSetup, the command not run.
func TestAheadConfines(t *testing.T) {
	needSandbox(t)
	pl := fullPool(t)
	dir := t.TempDir()
	outside := t.TempDir()
	_, code, started, err := runAhead(t, pl, dir, "echo x > "+outside+"/planted")
	if err != nil || !started || code == 0 {
		t.Errorf("err %v, started ahead %v, code %d: want the write refused", err, started, code)
	}
	if _, err := os.Stat(outside + "/planted"); err == nil {
		t.Error("a command run by a helper started ahead wrote outside its profile")
	}
	if err := pl.WaitFull(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, started, err = runAhead(t, pl, dir+"/gone", "touch ran")
	if !started || !errors.Is(err, ErrSetup) {
		t.Errorf("started ahead %v, err %v: want ErrSetup for a working directory that does not exist", started, err)
	}
}

// A waiting helper holds nothing but its end of the socket: stdio on
// /dev/null, no descriptor of the agent's (one the agent inherited without
// close-on-exec is left behind), every other descriptor the Go runtime's
// own, close-on-exec; no directory (its cwd is /), an empty environment.
func TestAheadHoldsOnlyItsSocket(t *testing.T) {
	needSandbox(t)
	// As if the agent's own parent had left a pipe open.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := unix.FcntlInt(r.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{}
	for _, f := range []*os.File{r, w} {
		target, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
		ours[target] = true
	}
	pl := fullPool(t)
	for _, pid := range pl.Pids() {
		proc := "/proc/" + strconv.Itoa(pid)
		ents, err := os.ReadDir(proc + "/fd")
		if err != nil {
			t.Fatal(err)
		}
		var fds []string
		for _, e := range ents {
			fd, _ := strconv.Atoi(e.Name())
			target, _ := os.Readlink(proc + "/fd/" + e.Name())
			switch {
			case fd < 3 && target != "/dev/null", fd == 3 && !strings.HasPrefix(target, "socket:"):
				t.Errorf("helper %d: fd %d is %s", pid, fd, target)
			case ours[target]:
				t.Errorf("helper %d holds fd %d, %s, the agent's", pid, fd, target)
			case fd > 3 && !cloexec(t, proc, e.Name()):
				t.Errorf("helper %d holds fd %d, %s, without close-on-exec", pid, fd, target)
			}
			fds = append(fds, e.Name()+"="+target)
		}
		if len(fds) < 4 {
			t.Errorf("helper %d holds %v, want stdio and its socket", pid, fds)
		}
		if cwd, _ := os.Readlink(proc + "/cwd"); cwd != "/" {
			t.Errorf("helper %d is in %s, want /", pid, cwd)
		}
		if env, err := os.ReadFile(proc + "/environ"); err != nil || len(env) != 0 {
			t.Errorf("helper %d environment %q (%v), want empty", pid, env, err)
		}
	}
}

// cloexec reads whether fd of proc is close-on-exec.
func cloexec(t *testing.T, proc, fd string) bool {
	info, err := os.ReadFile(proc + "/fdinfo/" + fd)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&unix.O_CLOEXEC != 0
		}
	}
	return false
}

// An earlier call's command cannot reach a waiting helper: it cannot
// signal it (its own PID namespace, Landlock's signal scope), nor open its
// socket through /proc. The helper still waits, and takes the next call.
func TestAheadUnreachableFromEarlierCall(t *testing.T) {
	needSandbox(t)
	pl := fullPool(t)
	victim := pl.Pids()
	if len(victim) != 2 {
		t.Fatalf("waiting helpers %v, want 2", victim)
	}
	dir := t.TempDir()
	var script strings.Builder
	for _, pid := range victim {
		p := strconv.Itoa(pid)
		fmt.Fprintf(&script, "kill -STOP %s; kill -KILL %s; cat /proc/%s/fd/3 </dev/null; ", p, p, p)
	}
	// A cold start, so that both helpers are still waiting.
	_, _, started, err := runAhead(t, nil, dir, script.String())
	if err != nil || started {
		t.Fatalf("the attacking call: err %v, started ahead %v", err, started)
	}
	for _, pid := range victim {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Errorf("helper %d is gone after an earlier call signalled it: %v", pid, err)
			continue
		}
		if f := strings.Fields(string(st)); len(f) < 3 || f[2] != "S" {
			t.Errorf("helper %d state %v after an earlier call signalled it, want S (waiting)", pid, f[2])
		}
	}
	out, code, started, err := runAhead(t, pl, dir, "echo ok")
	if err != nil || !started || code != 0 || out != "ok\n" {
		t.Errorf("the next call: %q, code %d, started ahead %v, err %v", out, code, started, err)
	}
}

// The spec is read once: once the helper has it, nothing more can be sent.
func TestAheadReadsOneSpec(t *testing.T) {
	needSandbox(t)
	pl := fullPool(t)
	h := pl.take(false)
	if h == nil {
		t.Fatal("no helper waiting")
	}
	dir := t.TempDir()
	cmd := &exec.Cmd{Path: "/bin/sleep", Args: []string{"sleep", "30"}, Dir: dir, Env: []string{}, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	filter, err := seccompProgram(false)
	if err != nil {
		t.Fatal(err)
	}
	p := Profile{Kind: ReadOnly, Cwd: dir}
	c, err := h.hand(spec{Profile: p, Path: cmd.Path, Args: cmd.Args, Env: []string{}, Dir: dir, LandlockABI: landlockABI(), Seccomp: filter}, cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = c.Done()
	}()
	raw, err := h.sock.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// Bytes sent before the helper shut its reading side are never read;
	// from then on, sending fails. Bounded by count.
	var sendErr error
	for range 2000 {
		_ = raw.Write(func(fd uintptr) bool {
			sendErr = unix.Sendmsg(int(fd), []byte("{}"), nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
			return true
		})
		if sendErr != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !errors.Is(sendErr, unix.EPIPE) {
		t.Errorf("sending after the spec: %v, want EPIPE (the helper no longer reads)", sendErr)
	}
}

// children returns the processes whose parent is this one.
func children(t *testing.T) []int {
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
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == me {
			out = append(out, pid)
		}
	}
	return out
}

// Close kills and reaps every waiting helper: no process is left.
func TestPoolCloseLeavesNoChildren(t *testing.T) {
	needSandbox(t)
	before := children(t)
	pl := NewPool(1)
	if err := pl.WaitFull(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := children(t); len(got) != len(before)+2 {
		t.Fatalf("children %v with a full pool, want %d", got, len(before)+2)
	}
	pl.Close()
	if got := children(t); len(got) != len(before) {
		t.Errorf("children %v after Close, want %v", got, before)
	}
	if pl.take(false) != nil || pl.Ready(true) != 0 {
		t.Error("a closed pool handed out or started a helper")
	}
	if got := children(t); len(got) != len(before) {
		t.Errorf("children %v after a take from a closed pool, want %v", got, before)
	}
	// Closed while its helpers start: they are killed too.
	NewPool(1).Close()
	if got := children(t); len(got) != len(before) {
		t.Errorf("children %v after closing a pool that was starting, want %v", got, before)
	}
}

// TestPoolOwner is the process of TestAheadExitsWithItsParent: it fills a
// pool, prints the helpers' pids and waits to be killed.
func TestPoolOwner(t *testing.T) {
	if os.Getenv("ENFORCE_TEST_POOL_OWNER") != "1" {
		t.Skip("run by TestAheadExitsWithItsParent")
	}
	pl := NewPool(1)
	if err := pl.WaitFull(context.Background()); err != nil {
		t.Fatal(err)
	}
	fmt.Println("pids", pl.Pids())
	time.Sleep(time.Minute)
}

// A waiting helper whose parent died exits: nothing waits for a spec that
// cannot come.
func TestAheadExitsWithItsParent(t *testing.T) {
	needSandbox(t)
	owner := exec.Command(os.Args[0], "-test.run", "^TestPoolOwner$", "-test.v")
	owner.Env = append(os.Environ(), "ENFORCE_TEST_POOL_OWNER=1")
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "pids ["); ok {
			for _, f := range strings.Fields(strings.TrimSuffix(rest, "]")) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
			break
		}
	}
	_ = owner.Process.Kill()
	_ = owner.Wait()
	if len(pids) != 2 {
		t.Fatalf("the owner's helpers: %v", pids)
	}
	// Bounded by count: each helper must be gone (or a zombie for its new
	// parent to reap) within 1000 looks.
	for _, pid := range pids {
		alive := true
		for range 1000 {
			st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			if err != nil {
				alive = false
				break
			}
			s := string(st)
			if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				alive = false
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if alive {
			t.Errorf("helper %d still runs after its parent died", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// A spec the parent never sends (here, too long) stops the helper before
// anything runs, and says why on the socket, as a setup failure.
func TestAheadRefusesBadSpec(t *testing.T) {
	needSandbox(t)
	pl := fullPool(t)
	h := pl.take(false)
	if h == nil {
		t.Fatal("no helper waiting")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	fd := int(null.Fd())
	hdr := make([]byte, 8)
	hdr[3] = 0x10 // 256 MiB, over maxSpec
	raw, err := h.sock.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var sendErr error
	_ = raw.Write(func(s uintptr) bool {
		sendErr = unix.Sendmsg(int(s), hdr, unix.UnixRights(fd, fd, fd), nil, unix.MSG_NOSIGNAL)
		return true
	})
	if sendErr != nil {
		t.Fatal(sendErr)
	}
	report, _ := io.ReadAll(h.sock)
	state, _ := h.cmd.Process.Wait()
	h.sock.Close()
	if state.ExitCode() != exitSetup || !strings.Contains(string(report), "reading the sandbox spec") {
		t.Errorf("exit %d, report %q: want %d and the spec refused", state.ExitCode(), report, exitSetup)
	}
}

// sees tells a helper whose mounts show the call's directories as this
// process does from one whose mounts do not: here the helper of a running
// sandbox, whose /tmp is an empty one of its own, sees its own working
// directory (kept) but not another beneath /tmp.
func TestAheadSeesTheMounts(t *testing.T) {
	needSandbox(t)
	kept, other := t.TempDir(), t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "echo ready; exec sleep 30"}, Dir: kept, Env: []string{}, Stdout: w}
	c, err := Confine(Profile{Kind: ReadOnly, Cwd: kept}, cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = c.Done()
	}()
	if line, _ := bufio.NewReader(r).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the sandbox did not start: %q", line)
	}
	h := &ahead{cmd: cmd}
	if !h.sees(Profile{Cwd: kept}) {
		t.Error("the helper does not see its own working directory")
	}
	if h.sees(Profile{Cwd: kept, Writable: []string{other}}) {
		t.Errorf("the helper sees %s, which its own /tmp hides", other)
	}
}
