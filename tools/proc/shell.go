package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

const (
	// DefaultShellTimeout is a shell command's timeout when the call sets
	// no timeoutMs.
	DefaultShellTimeout = 2 * time.Minute
	// MaxShellTimeout is the largest timeoutMs a call may ask for.
	MaxShellTimeout = 10 * time.Minute
)

// Shell is the shell tool: {command, cwd?, timeoutMs?}. It runs
// `bash -c COMMAND` (`sh -c` where there is no bash) with the call's
// environment exactly, in cwd (relative to the session's cwd; default the
// session's cwd). Output streams to the call's Output; the exit code is
// Result.ExitCode, and a non-zero exit is a completion, not an error. The
// timeout defaults to DefaultShellTimeout and may not exceed
// MaxShellTimeout; when it passes, the command and everything it started
// are killed and Run returns "command timed out after Ns and was killed".
//
// A Shell is stateless and safe for concurrent use.
type Shell struct{}

var _ tool.Tool = (*Shell)(nil)

// NewShell returns the shell tool.
func NewShell() *Shell { return &Shell{} }

// Info returns the shell entry of the built-in tool table.
func (*Shell) Info() permission.ToolInfo { return builtin("shell") }

// Run runs the command; see Shell.
func (*Shell) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	timeout := DefaultShellTimeout
	if ms := call.Int("timeoutMs", 0); ms > 0 {
		timeout = time.Duration(ms) * time.Millisecond
		if timeout > MaxShellTimeout {
			return tool.Result{}, fmt.Errorf("timeoutMs %d is over the maximum of %d (10 minutes); ask for at most that, or run the work in smaller steps", ms, MaxShellTimeout.Milliseconds())
		}
	}
	dir, err := workDir(call.Cwd, call.String("cwd"), "cwd")
	if err != nil {
		return tool.Result{}, err
	}
	c := command{
		argv:    []string{shellPath(), "-c", call.String("command")},
		dir:     dir,
		env:     call.Env,
		timeout: timeout,
		stdout:  out.Stdout,
		stderr:  out.Stderr,
		confine: call.Confine,
	}
	code, err := c.run(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{ExitCode: &code}, nil
}

// shellPath is bash, found on our own PATH (the interpreter is the agent's
// choice, not the environment's), or /bin/sh without bash.
func shellPath() string {
	if p, err := exec.LookPath("bash"); err == nil && filepath.IsAbs(p) {
		return p
	}
	return "/bin/sh"
}

// workDir resolves dir (relative to cwd, default cwd) and checks that it is
// a directory; arg names the argument in errors.
func workDir(cwd, dir, arg string) (string, error) {
	switch {
	case dir == "":
		dir = cwd
	case !filepath.IsAbs(dir):
		dir = filepath.Join(cwd, dir)
	}
	fi, err := os.Stat(dir)
	switch {
	case os.IsNotExist(err):
		return "", fmt.Errorf("%s %s does not exist; give an existing directory", arg, dir)
	case err != nil:
		return "", fmt.Errorf("%s %s: %w", arg, dir, err)
	case !fi.IsDir():
		return "", fmt.Errorf("%s %s is a file, not a directory; give its directory", arg, dir)
	}
	return dir, nil
}

// builtin returns the table entry of a built-in tool; a missing name is a
// programmer's mistake.
func builtin(name string) permission.ToolInfo {
	info, ok := permission.Builtin(name)
	if !ok {
		panic("proc: no built-in tool " + name)
	}
	return info
}
