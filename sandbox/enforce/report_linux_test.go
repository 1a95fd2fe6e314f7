package enforce

import (
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

// Tests of the helper's report of the command's status (docs/sandbox.md,
// "Start cost"): its value, what is left when it comes, and the helper's
// exit without one.

// startSh confines script (sh) under a workspace profile of dir through pl
// (nil: a helper started for the call), its output to w, and starts it.
func startSh(t *testing.T, pl *Pool, dir, script string, w *os.File) (*exec.Cmd, *Confined) {
	t.Helper()
	cmd := shCmd(dir, script, w)
	c, err := pl.ConfineThen(Profile{Kind: Workspace, Cwd: dir, Writable: []string{dir}}, cmd, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pl != nil && !c.Started() {
		t.Fatal("no helper started ahead took the call")
	}
	if !c.Started() {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	return cmd, c
}

// reportOrExit waits until c reports or the helper pid exits (left
// unreaped), and says whether the report came first. (The helper exits
// right after its report: the exit may be seen first. Whether a report
// came is known once Done has returned: reportedAfterDone.)
func reportOrExit(t *testing.T, c *Confined, pid int) bool {
	t.Helper()
	exited := make(chan struct{})
	go func() {
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		close(exited)
	}()
	select {
	case <-c.Reported():
		return true
	case <-exited:
		return false
	case <-time.After(2 * time.Minute):
		t.Fatal("neither a report nor the helper's exit")
	}
	return false
}

// reportedAfterDone reports whether c was reported; Done has returned.
func reportedAfterDone(c *Confined) bool {
	select {
	case <-c.Reported():
		return true
	default:
		return false
	}
}

// paths returns the two ways a call starts: through a helper started
// ahead, and with one started for it.
func paths(t *testing.T) []struct {
	name string
	pool *Pool
} {
	return []struct {
		name string
		pool *Pool
	}{{"ahead", fullPool(t)}, {"cold", nil}}
}

// forge is a report of exit status 0, as the command would forge it.
const forge = `\000\000\000\000\000`

// The report is the command's own status: its exit code, or the signal
// that killed it, through a helper started ahead and one started for the
// call; the helper's own exit status then says the same, as bash would. A
// command that writes a forged report everywhere it can (its stdio, every
// other descriptor number, the helper's descriptors through /proc) does
// not change it: it holds no descriptor of the report's.
func TestReportIsTheStatus(t *testing.T) {
	needSandbox(t)
	forgeAll := "for fd in 1 2 3 4 5 6 7 8 9; do printf '" + forge + "' >&$fd; done 2>/dev/null; " +
		"for fd in 3 4 5 6; do printf '" + forge + "' >/proc/1/fd/$fd; done 2>/dev/null; ls /proc/self/fd >&2; exit 3"
	cases := []struct {
		name, script string
		exit         int            // when not signalled
		sig          syscall.Signal // 0: exited
	}{
		{"exit 0", "exit 0", 0, 0},
		{"exit 7", "exit 7", 7, 0},
		{"exit 255", "exit 255", 255, 0},
		{"SIGTERM", "kill -TERM $$", 0, syscall.SIGTERM},
		{"SIGSEGV", "kill -SEGV $$", 0, syscall.SIGSEGV},
		{"SIGKILL", "kill -KILL $$", 0, syscall.SIGKILL},
		{"forged", forgeAll, 3, 0},
	}
	dir := t.TempDir()
	for _, p := range paths(t) {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				if p.pool != nil {
					waitFull(t, p.pool)
				}
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				cmd, c := startSh(t, p.pool, dir, tc.script, w)
				w.Close()
				out, _ := io.ReadAll(r)
				reportOrExit(t, c, cmd.Process.Pid)
				_ = cmd.Wait()
				if err := c.Done(); err != nil {
					t.Fatal(err)
				}
				if !reportedAfterDone(c) {
					t.Fatalf("the helper exited without a report (output %q)", out)
				}
				ws := c.Status()
				want := tc.exit
				if tc.sig != 0 {
					want = 128 + int(tc.sig)
					if !ws.Signaled() || ws.Signal() != tc.sig {
						t.Errorf("reported %#x (signalled %v, %v), want killed by %v", uint32(ws), ws.Signaled(), ws.Signal(), tc.sig)
					}
				} else if !ws.Exited() || ws.ExitStatus() != tc.exit {
					t.Errorf("reported %#x (exited %v, %d), want exit %d; output %q", uint32(ws), ws.Exited(), ws.ExitStatus(), tc.exit, out)
				}
				if c.ExitCode() != want || cmd.ProcessState.ExitCode() != want {
					t.Errorf("exit code %d reported, %d from the helper, want %d", c.ExitCode(), cmd.ProcessState.ExitCode(), want)
				}
				if tc.name == "forged" {
					// ls's own descriptor for /proc/self/fd is the 4th.
					if fds := strings.Fields(string(out[strings.LastIndexByte(string(out), 0)+1:])); len(fds) != 4 {
						t.Errorf("the command held %v, want stdio and ls's own", fds)
					}
				}
			})
		}
	}
}

// descendants returns the processes beneath pid (zombies included), from
// every process's parent.
func descendants(t *testing.T, pid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	line := map[int]string{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
			line[p] = strings.TrimSpace(s)
		}
	}
	var out []string
	for p := range parent {
		for a, n := parent[p], 0; a > 1 && n < 1000; a, n = parent[a], n+1 {
			if a == pid {
				out = append(out, line[p])
				break
			}
		}
	}
	return out
}

// When the report comes, nothing the command started is left: daemons
// (setsid, a double fork, nohup), a process that ignores the termination
// signals, a zombie nobody reaped; the helper holds the call's output no
// longer, and the output is there to its end.
func TestReportAfterEveryProcess(t *testing.T) {
	needSandbox(t)
	script := "setsid -f sleep 7361 </dev/null >/dev/null 2>&1; (setsid sleep 7362 </dev/null >/dev/null 2>&1 &); " +
		"nohup sleep 7363 </dev/null >/dev/null 2>&1 & sh -c 'trap \"\" TERM HUP INT; exec sleep 7364' & " +
		"sh -c 'sleep 0 & exec sleep 7365' & (sleep 7366; echo late) & head -c 300000 /dev/zero; echo started; exit 5"
	dir := t.TempDir()
	for _, p := range paths(t) {
		t.Run(p.name, func(t *testing.T) {
			if p.pool != nil {
				waitFull(t, p.pool)
			}
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			pipe, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(w.Fd())))
			cmd, c := startSh(t, p.pool, dir, script, w)
			w.Close()
			out := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(r)
				out <- b
			}()
			helper := cmd.Process.Pid
			if !reportOrExit(t, c, helper) {
				t.Log("the helper's exit was seen before its report")
			}
			if fds, err := os.ReadDir("/proc/" + strconv.Itoa(helper) + "/fd"); err == nil {
				for _, fd := range fds {
					if target, _ := os.Readlink("/proc/" + strconv.Itoa(helper) + "/fd/" + fd.Name()); target == pipe {
						t.Errorf("the helper holds the call's output (fd %s) at the report", fd.Name())
					}
				}
			}
			if left := descendants(t, helper); len(left) > 0 {
				t.Errorf("processes of the command left at the report: %v", left)
			}
			var got []byte
			select {
			case got = <-out:
			case <-time.After(time.Minute):
				t.Fatal("the output did not end after the report")
			}
			if len(got) != 300000+len("started\n") || !strings.HasSuffix(string(got), "started\n") {
				t.Errorf("output of %d bytes ending %q, want 300000 zeros and started", len(got), got[max(0, len(got)-20):])
			}
			_ = cmd.Wait()
			if err := c.Done(); err != nil {
				t.Fatal(err)
			}
			if !reportedAfterDone(c) {
				t.Fatal("the helper exited without a report")
			}
			if c.ExitCode() != 5 {
				t.Errorf("exit code %d, want 5", c.ExitCode())
			}
		})
	}
}

// A helper killed while its command runs reports nothing: its own wait
// status is the call's, as without the report, and nothing hangs.
func TestReportNoneWhenHelperKilled(t *testing.T) {
	needSandbox(t)
	dir := t.TempDir()
	for _, p := range paths(t) {
		t.Run(p.name, func(t *testing.T) {
			if p.pool != nil {
				waitFull(t, p.pool)
			}
			null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer null.Close()
			cmd, c := startSh(t, p.pool, dir, "exec sleep 60", null)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if err := c.Done(); err != nil {
				t.Fatal(err)
			}
			if reportedAfterDone(c) {
				t.Error("a report from a helper that was killed")
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Errorf("the helper's status %v, want killed", cmd.ProcessState)
			}
		})
	}
}
