// Package tool defines what a tool is and the Router that finds one by name
// and validates a call's arguments against its JSON Schema before the
// PermissionEngine sees it.
//
// A tool never decides whether it may run: the executor asks the engine
// first, and calls Run only after an allow is durable in the event log.
package tool

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/secrets"
)

// Tool is one capability the model can call.
//
// Run may be called concurrently for different calls. It streams the tool's
// output to out as it is produced (the executor keeps it in the artifact
// store and shows a preview); it must stop promptly when ctx is cancelled and
// leave no process or half-written file behind. An error from Run is a tool
// error the model sees as the result of its call (a missing file, a patch
// that does not apply, a timeout): say what went wrong and what to do, in a
// sentence the model can act on.
type Tool interface {
	Info() permission.ToolInfo
	Run(ctx context.Context, call Call, out Output) (Result, error)
}

// Call is one validated invocation of a tool.
type Call struct {
	// ID is the model's tool call id.
	ID string
	// Args are the arguments, already valid against the tool's schema.
	Args map[string]any
	// Raw is the arguments as the model sent them.
	Raw json.RawMessage
	// Cwd is the session's working directory (absolute). Relative paths in
	// Args are relative to it.
	Cwd string
	// Home, UserHomes, ConfigHome and DataDir are the rest of what the
	// PermissionEngine judged the call's paths with
	// (permission.Request's fields of the same names), so that a tool
	// that meets paths the engine never saw (a tree walk) judges them
	// alike: DataDir is custom-agent's data directory, symbolic links
	// resolved, "" for the default one. An empty Home means the
	// process's own.
	Home       string
	UserHomes  map[string]string
	ConfigHome string
	DataDir    string
	// Secrets is what the call's output is masked of (the secrets its
	// arguments hold and those the runner knows of, serve's tokens): a
	// tool that returns stored text cut at a place the model chose
	// (read_output) masks it in context, so that no cut shows part of a
	// secret too short to be recognised. Nil holds none.
	Secrets *secrets.Set
	// Env is the environment for processes the tool starts, already
	// scrubbed of secrets by the executor. Nil means an empty environment.
	Env []string
	// Outputs reads the outputs recorded in the call's session; nil when
	// the executor's caller provides none.
	Outputs Outputs
	// Confine, when set, confines every process the tool starts (the
	// sandbox): it prepares cmd, not yet started, and returns its
	// Confinement, whose Done is called once cmd has been waited for (or
	// its status reported); Done's error is the sandbox's own failure to
	// set up. Nil runs processes unconfined: the sandbox is off, or a
	// person allowed this call outside it.
	Confine ConfineFunc
}

// ConfineFunc prepares cmd, not yet started, to run in the sandbox. It may
// start cmd itself (a sandbox helper started ahead took it): cmd.Process
// is then set, and the caller must not Start cmd, only wait for it as for
// one it started.
type ConfineFunc func(cmd *exec.Cmd) (Confinement, error)

// Confinement is what the sandbox holds for one process it prepared.
type Confinement interface {
	// Done releases it, once cmd has been waited for, or its status
	// reported (Reported), or it failed to start. Its error is the
	// sandbox's own failure to set up, or a note on a call that ran.
	Done() error
	// Reported returns a channel closed when the sandbox reports the
	// command's status before the process cmd runs (the sandbox's helper)
	// has exited: every process of the command is gone by then and its
	// output ends once the caller's copies of the pipes are closed. The
	// caller may then use ExitCode without waiting for cmd, but must still
	// reap it (in the background). It is never closed when no report
	// comes: cmd's own status is then the command's.
	Reported() <-chan struct{}
	// ExitCode is the reported status as bash reports it (128+N for
	// signal N), once Reported is closed.
	ExitCode() int
}

// Output receives a tool's output. Both writers are always set; they may
// block while output is stored, which is the back-pressure that keeps a tool
// printing 1 GiB from using 1 GiB of memory.
type Output struct {
	Stdout io.Writer
	Stderr io.Writer
}

// Result is what a tool reports when it ran to its end.
type Result struct {
	// ExitCode is set by tools that run a process (shell, run_tests,
	// get_diagnostics). A non-zero exit is a completion, not an error.
	ExitCode *int
	// Summary is an optional short structured summary for the model, e.g.
	// {"passed": 12, "failed": 1} for run_tests; nil when stdout says it all.
	Summary json.RawMessage
}

// String returns a string argument, or "" when it is absent.
func (c Call) String(name string) string {
	s, _ := c.Args[name].(string)
	return s
}

// Int returns an integer argument (JSON numbers decode as float64 or
// json.Number), or def when it is absent.
func (c Call) Int(name string, def int) int {
	switch v := c.Args[name].(type) {
	case float64:
		return int(v)
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n)
		}
	case int:
		return v
	}
	return def
}

// Outputs reads the tool outputs recorded in the session a call belongs to
// (the read_output tool uses it). Only outputs named by that session's
// events can be opened.
type Outputs interface {
	OpenOutput(ctx context.Context, ref OutputRef) (*RecordedOutput, error)
}

// OutputRef names a recorded output: a call's stream (ToolCallID and
// Stream, "stdout" or "stderr") or an artifact by Digest.
type OutputRef struct {
	ToolCallID string
	Stream     string
	Digest     string
}

// RecordedOutput is an output opened for reading. The caller closes
// Content.
type RecordedOutput struct {
	OutputRef // all fields filled in
	// Stored is how many bytes the artifact store holds; Total how many
	// the stream printed (more when it was over the output cap).
	Stored, Total int64
	Content       io.ReadSeekCloser
}
