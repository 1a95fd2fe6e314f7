package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/custom-agent/custom-agent/tool"
)

// killGrace is how long a process group has between SIGTERM and SIGKILL.
const killGrace = 2 * time.Second

// drainGrace bounds how long output is still read once the group is dead:
// a process that left the group (setsid) may hold the pipes open forever.
const drainGrace = 2 * time.Second

// command is one process to run. It is the only way this package starts a
// process, so every tool gets the same group handling and streaming.
type command struct {
	argv    []string // argv[0] is resolved with lookPath
	dir     string
	env     []string // exactly the process's environment; nil means empty
	timeout time.Duration
	stdout  io.Writer
	stderr  io.Writer
	// confine, when set, runs the process in the sandbox (tool.Call).
	confine tool.ConfineFunc
}

// cancelledError is returned when the command was stopped because its
// context ended: it reads as a person would say it, and wraps the
// context's error for errors.Is.
type cancelledError struct{ cause error }

func (e *cancelledError) Error() string {
	if errors.Is(e.cause, context.DeadlineExceeded) {
		return "the command was stopped: the turn ran out of time"
	}
	return "the command was stopped: the turn was cancelled"
}

func (e *cancelledError) Unwrap() error { return e.cause }

// timeoutError is returned when a command ran past its timeout.
type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("command timed out after %s and was killed", seconds(e.after))
}

// run starts the command in its own process group, streams its output and
// waits for it. It returns the exit code (128+N when killed by signal N, as
// bash reports it). A non-zero exit is not an error; a timeout is a
// *timeoutError, a cancelled ctx an error wrapping ctx.Err(). Either way the
// whole group has been killed and the output drained before run returns.
// When the sandbox reported the command's status (tool.Confinement), every
// process of the command is gone, and its helper, killed, is reaped in the
// background (WaitReaped) while its namespaces are torn down.
func (c *command) run(ctx context.Context) (int, error) {
	path, err := lookPath(c.argv[0], c.env)
	if err != nil {
		return 0, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("creating stdout pipe: %w", err)
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return 0, fmt.Errorf("creating stderr pipe: %w", err)
	}
	defer errR.Close()

	env := c.env
	if env == nil {
		env = []string{} // exec.Cmd reads a nil Env as "inherit ours"
	}
	// Giving exec *os.File writers means it starts no copying goroutines
	// of its own, and Wait returns as soon as the process is reaped.
	cmd := &exec.Cmd{
		Path: path, Args: c.argv, Dir: c.dir, Env: env,
		Stdout: outW, Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	done := func() error { return nil }
	// reported is closed when the sandbox reports the command's status
	// before its helper has exited (nil: never).
	var reported <-chan struct{}
	var conf tool.Confinement
	if c.confine != nil {
		if conf, err = c.confine(cmd); err != nil {
			outW.Close()
			errW.Close()
			return 0, err
		}
		done, reported = conf.Done, conf.Reported()
	}
	if cmd.Process == nil {
		// (Set when the sandbox handed the start to a helper started
		// ahead: it runs already.)
		err = cmd.Start()
	}
	outW.Close()
	errW.Close()
	if err != nil {
		_ = done()
		return 0, fmt.Errorf("starting %s: %w", c.argv[0], err)
	}
	pgid := cmd.Process.Pid

	var copies sync.WaitGroup
	var copyErrs [2]error
	copies.Go(func() { copyErrs[0] = pump(c.stdout, outR) })
	copies.Go(func() { copyErrs[1] = pump(c.stderr, errR) })

	// exited is closed when the leader has exited but is not yet reaped:
	// while it is a zombie its pid, and so the group id, cannot be reused,
	// which makes killing -pgid safe.
	exited := make(chan struct{})
	go func() {
		waitExited(pgid)
		close(exited)
	}()

	// ended is closed when the command's status is known: the process
	// exited, or the sandbox reported its command's status (its helper
	// may still be tearing its namespaces down).
	ended := make(chan struct{})
	go func() {
		select {
		case <-exited:
		case <-reported:
		}
		close(ended)
	}()

	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	var stopped error
	select {
	case <-ended:
	case <-ctx.Done():
		stopped = &cancelledError{cause: ctx.Err()}
		terminate(pgid, ended)
	case <-timer.C:
		stopped = &timeoutError{after: c.timeout}
		terminate(pgid, ended)
	}
	// Whatever the command left behind in its group goes with it. The
	// leader is not reaped yet (below, or in the background), so the
	// group id is still its own.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	var waitErr error
	code, ok := 0, false
	select {
	case <-reported:
		// Every process of the command is gone: the helper is reaped
		// once it has exited, off the call's path.
		code, ok = conf.ExitCode(), true
		reaping.Go(func() {
			<-exited
			_ = cmd.Wait()
		})
	default:
		waitErr = cmd.Wait()
		code, ok = exitCode(cmd.ProcessState)
	}
	drain(&copies, outR, errR)
	if err := done(); err != nil {
		// A note on a call that ran (the sandbox undid what it planted)
		// goes with its output; anything else is the sandbox's own
		// failure, not the command's.
		var note interface{ Note() string }
		if !errors.As(err, &note) || stopped != nil {
			return 0, err
		}
		fmt.Fprintf(c.stderr, "\n[sandbox] %s\n", note.Note())
	}

	if stopped != nil {
		return 0, stopped
	}
	if err := errors.Join(copyErrs[0], copyErrs[1]); err != nil {
		return 0, fmt.Errorf("writing the command's output: %w", err)
	}
	if !ok {
		return 0, fmt.Errorf("waiting for %s: %w", c.argv[0], waitErr)
	}
	return code, nil
}

// reaping counts the sandbox helpers whose reaping run left to the
// background (WaitReaped). Not a sync.WaitGroup: calls may start while
// WaitReaped waits.
var reaping reapers

type reapers struct {
	mu   sync.Mutex
	n    int
	none chan struct{} // closed when n is 0
}

// Go runs f, counted, in the background.
func (r *reapers) Go(f func()) {
	r.mu.Lock()
	if r.n == 0 {
		r.none = make(chan struct{})
	}
	r.n++
	r.mu.Unlock()
	go func() {
		defer func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.n--; r.n == 0 {
				close(r.none)
			}
		}()
		f()
	}()
}

// idle returns a channel closed once no reaping runs.
func (r *reapers) idle() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		closed := make(chan struct{})
		close(closed)
		return closed
	}
	return r.none
}

// WaitReaped waits until every process run left to reap in the background
// (a sandbox helper that reported its command's status, then exited) has
// been reaped, or ctx ends. Each exits on its own; nothing needs to wait
// for them but a check that none is left.
func WaitReaped(ctx context.Context) error {
	select {
	case <-reaping.idle():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sandbox helpers left to reap: %w", ctx.Err())
	}
}

// pump copies one output stream. It closes r when done, so that a process
// writing to a pipe nobody reads any more gets EPIPE instead of blocking.
func pump(w io.Writer, r *os.File) error {
	_, err := io.Copy(w, r)
	r.Close()
	if errors.Is(err, os.ErrClosed) {
		err = nil // drain gave up on a pipe a runaway process held open
	}
	return err
}

// drain waits for the output to be copied, closing the pipes if processes
// outside the group still hold them open after drainGrace.
func drain(copies *sync.WaitGroup, pipes ...*os.File) {
	done := make(chan struct{})
	go func() {
		copies.Wait()
		close(done)
	}()
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		for _, p := range pipes {
			p.Close()
		}
		<-done
	}
}

// terminate sends SIGTERM to the group and SIGKILL after killGrace if the
// command has not ended by then.
func terminate(pgid int, exited <-chan struct{}) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(killGrace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
}

// waitExited blocks until process pid has exited, leaving it unreaped.
func waitExited(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// exitCode reports the exit code as bash would: the status, or 128+N for
// a process killed by signal N.
func exitCode(ps *os.ProcessState) (int, bool) {
	if ps == nil {
		return 0, false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		return 128 + int(ws.Signal()), true
	case ps.Exited():
		return ps.ExitCode(), true
	}
	return 0, false
}

// lookPath finds a program in the PATH of env, or in ours when env has
// none. Only absolute PATH entries count: a relative one would make the
// program depend on the directory the command runs in.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathVar, ok := envValue(env, "PATH")
	if !ok {
		pathVar = os.Getenv("PATH")
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &missingError{program: name}
}

// missingError says a program is not installed (not on PATH).
type missingError struct{ program string }

func (e *missingError) Error() string {
	return fmt.Sprintf("%s is not installed (not found on PATH)", e.program)
}

// envValue returns the last value of key in env, as the C library and
// exec.Cmd read a duplicated variable.
func envValue(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// seconds formats d as a number of seconds, "2s" or "0.5s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
