package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/tool"
)

// testEnv is a minimal environment with our PATH, as the executor would
// pass after scrubbing.
func testEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH")}, extra...)
}

type outcome struct {
	stdout, stderr string
	code           int // -1 when no exit code was reported
	err            error
}

func runTool(ctx context.Context, t *testing.T, tl tool.Tool, call tool.Call) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	res, err := tl.Run(ctx, call, tool.Output{Stdout: &stdout, Stderr: &stderr})
	o := outcome{stdout: stdout.String(), stderr: stderr.String(), code: -1, err: err}
	if res.ExitCode != nil {
		o.code = *res.ExitCode
	}
	return o
}

func TestShell(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	if err := os.Mkdir(filepath.Join(cwd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("HOME") == "" {
		t.Fatal("the test needs HOME set, to see that it does not reach the command")
	}
	tests := []struct {
		name     string
		args     map[string]any
		env      []string
		wantOut  string
		wantErr  string // stderr
		wantCode int
	}{
		{name: "exit 0", args: map[string]any{"command": "echo hello"}, env: testEnv(), wantOut: "hello\n"},
		{name: "non-zero exit is a completion", args: map[string]any{"command": "exit 3"}, env: testEnv(), wantCode: 3},
		{name: "stderr apart", args: map[string]any{"command": "echo out; echo err >&2; exit 1"}, env: testEnv(),
			wantOut: "out\n", wantErr: "err\n", wantCode: 1},
		{name: "default cwd", args: map[string]any{"command": "pwd"}, env: testEnv(), wantOut: cwd + "\n"},
		{name: "relative cwd", args: map[string]any{"command": "pwd", "cwd": "sub"}, env: testEnv(),
			wantOut: filepath.Join(cwd, "sub") + "\n"},
		{name: "absolute cwd", args: map[string]any{"command": "pwd", "cwd": filepath.Join(cwd, "sub")}, env: testEnv(),
			wantOut: filepath.Join(cwd, "sub") + "\n"},
		{name: "env exactly", args: map[string]any{"command": `echo "$FOO|${HOME-unset}"`},
			env: testEnv("FOO=bar"), wantOut: "bar|unset\n"},
		{name: "nil env is empty", args: map[string]any{"command": `echo "${HOME-unset}"`},
			wantOut: "unset\n"},
		{name: "invalid UTF-8 passes through", args: map[string]any{"command": `printf '\377\376ok\200'`},
			env: testEnv(), wantOut: "\xff\xfeok\x80"},
		{name: "stdin is /dev/null", args: map[string]any{"command": "cat; echo done"}, env: testEnv(), wantOut: "done\n"},
		{name: "killed by a signal reads as 128+N", args: map[string]any{"command": "kill -KILL $$"}, env: testEnv(), wantCode: 137},
		{name: "timeoutMs within the limit", args: map[string]any{"command": "echo ok", "timeoutMs": float64(5000)},
			env: testEnv(), wantOut: "ok\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := runTool(t.Context(), t, NewShell(), tool.Call{Args: tt.args, Cwd: cwd, Env: tt.env})
			if o.err != nil {
				t.Fatalf("Run: %v", o.err)
			}
			if o.stdout != tt.wantOut || o.stderr != tt.wantErr || o.code != tt.wantCode {
				t.Errorf("got stdout %q stderr %q exit %d; want %q %q %d",
					o.stdout, o.stderr, o.code, tt.wantOut, tt.wantErr, tt.wantCode)
			}
		})
	}
}

func TestShellRefusesBadArgs(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	file := filepath.Join(cwd, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"timeout over the maximum", map[string]any{"command": "true", "timeoutMs": float64(600001)}, "over the maximum of 600000"},
		{"missing cwd", map[string]any{"command": "true", "cwd": "nope"}, "does not exist"},
		{"cwd is a file", map[string]any{"command": "true", "cwd": file}, "is a file, not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := runTool(t.Context(), t, NewShell(), tool.Call{Args: tt.args, Cwd: cwd, Env: testEnv()})
			if o.err == nil || !strings.Contains(o.err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", o.err, tt.want)
			}
		})
	}
}

// The command prints the pids of the processes it starts, one a line, so
// the test can check that they are all gone.
const spawnTree = `sleep 100 & echo $!; (sleep 100 & echo $!; wait) & echo $!; echo $$; wait`

func TestShellKillsTheGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		command   string
		timeoutMs float64
		ctxAfter  time.Duration // cancel the context after this; 0 = never
		wantErr   string
		wantIs    error
	}{
		{name: "timeout kills grandchildren", command: spawnTree, timeoutMs: 300,
			wantErr: "command timed out after 0.3s and was killed"},
		{name: "cancel kills grandchildren", command: spawnTree, ctxAfter: 300 * time.Millisecond,
			wantErr: "the command was stopped: the turn was cancelled", wantIs: context.Canceled},
		{name: "SIGTERM ignored: SIGKILL after the grace", command: `trap '' TERM; ` + spawnTree, timeoutMs: 300,
			wantErr: "timed out"},
		{name: "background processes do not outlive the command", command: `sleep 100 & echo $!; echo $$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			if tt.ctxAfter > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(tt.ctxAfter, cancel)
			}
			args := map[string]any{"command": tt.command}
			if tt.timeoutMs > 0 {
				args["timeoutMs"] = tt.timeoutMs
			}
			start := time.Now()
			o := runTool(ctx, t, NewShell(), tool.Call{Args: args, Cwd: t.TempDir(), Env: testEnv()})
			if took := time.Since(start); took > killGrace+3*time.Second {
				t.Errorf("Run took %v", took)
			}
			switch {
			case tt.wantErr == "" && o.err != nil:
				t.Fatalf("Run: %v", o.err)
			case tt.wantErr != "" && (o.err == nil || !strings.Contains(o.err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", o.err, tt.wantErr)
			case tt.wantIs != nil && !errors.Is(o.err, tt.wantIs):
				t.Fatalf("error %v is not %v", o.err, tt.wantIs)
			}
			pids := parsePids(t, o.stdout)
			if len(pids) < 2 {
				t.Fatalf("stdout %q: want the pids the command started", o.stdout)
			}
			for _, pid := range pids {
				if !gone(pid, 3*time.Second) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("process %d is still running", pid)
				}
			}
		})
	}
}

// A process that leaves the group (setsid) escapes the kill, but it must
// not make Run wait for it: the pipes it holds are closed after drainGrace.
func TestShellDoesNotWaitForEscapedProcess(t *testing.T) {
	t.Parallel()
	if _, err := lookPath("setsid", testEnv()); err != nil {
		t.Skip("setsid is not installed")
	}
	start := time.Now()
	o := runTool(t.Context(), t, NewShell(), tool.Call{
		Args: map[string]any{"command": `setsid sh -c 'echo $$ >pid; exec sleep 100' &
while [ ! -s pid ]; do sleep 0.01; done; cat pid`},
		Cwd: t.TempDir(), Env: testEnv(),
	})
	pids := parsePids(t, o.stdout)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(pids) != 1 {
		t.Errorf("stdout %q: want the escaped pid", o.stdout)
	}
	if o.err != nil {
		t.Fatalf("Run: %v", o.err)
	}
	if took := time.Since(start); took > drainGrace+2*time.Second {
		t.Errorf("Run took %v, want about drainGrace", took)
	}
}

// Not parallel: it measures the heap, and parallel tests are paused while
// it runs.
func TestShellStreamsBigOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 256 MiB")
	}
	const size = 256 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var stdout countingWriter
	res, err := NewShell().Run(t.Context(), tool.Call{
		Args: map[string]any{"command": "head -c " + strconv.Itoa(size) + " /dev/zero"},
		Cwd:  t.TempDir(), Env: testEnv(),
	}, tool.Output{Stdout: &stdout, Stderr: &stdout})
	runtime.ReadMemStats(&after)
	if err != nil || *res.ExitCode != 0 {
		t.Fatalf("Run: exit %v, %v", res.ExitCode, err)
	}
	if stdout.n != size {
		t.Errorf("got %d bytes, want %d", stdout.n, size)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("allocated %d MiB while streaming %d MiB", grew>>20, size>>20)
	}
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

func parsePids(t *testing.T, s string) []int {
	t.Helper()
	var pids []int
	for f := range strings.FieldsSeq(s) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("stdout %q: %v", s, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// gone reports whether pid has died (a zombie waiting for init counts as
// dead) within d.
func gone(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return true
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// reportedConf is a sandbox's confinement that reports code for the
// command at once, as a helper does once every process of its command is
// gone.
type reportedConf struct {
	ch    chan struct{}
	code  int
	dones int
}

func (r *reportedConf) Done() error               { r.dones++; return nil }
func (r *reportedConf) Reported() <-chan struct{} { return r.ch }
func (r *reportedConf) ExitCode() int             { return r.code }

// A call whose sandbox reports its command's status returns it without
// waiting for the process it started (the sandbox's helper, here a sleep
// that would not end), kills that process's group, and reaps it in the
// background (WaitReaped).
func TestShellReturnsOnReport(t *testing.T) {
	conf := &reportedConf{ch: make(chan struct{}), code: 42}
	close(conf.ch)
	confine := func(cmd *exec.Cmd) (tool.Confinement, error) { return conf, nil }
	got := make(chan outcome, 1)
	go func() {
		got <- runTool(t.Context(), t, NewShell(), tool.Call{Args: map[string]any{"command": "exec sleep 1000"}, Cwd: t.TempDir(), Env: testEnv(), Confine: confine})
	}()
	var o outcome
	select {
	case o = <-got:
	case <-time.After(time.Minute):
		t.Fatal("the call waited for its process after the report")
	}
	if o.err != nil || o.code != 42 || conf.dones != 1 {
		t.Errorf("code %d, err %v, Done called %d times; want 42, nil, once", o.code, o.err, conf.dones)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := WaitReaped(ctx); err != nil {
		t.Errorf("the process was not killed and reaped: %v", err)
	}
}
