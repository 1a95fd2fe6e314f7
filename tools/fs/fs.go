// Package fs holds the local file tools: read_file, list_files, search_text,
// write_file and apply_patch (DESIGN.md §2).
//
// Each tool is a struct whose zero value is ready to use with the default
// limits; a field set to a positive value overrides a limit (tests use small
// ones). The tools never decide whether they may run: the executor asked the
// PermissionEngine first. They only read and write the paths the engine
// judged, interpreted the way the engine interprets them:
//
//   - a relative path is joined to Call.Cwd, an absolute path is used as
//     given, and `~`, `$HOME` and `${HOME}` at the start are expanded to the
//     user's home directory (pathrisk.Absolute, the engine's own function);
//   - `..` is left for the kernel to resolve, because the engine judged the
//     physical path (a symbolic link before `..` is followed first), and a
//     lexical filepath.Clean could name another file;
//   - apply_patch writes exactly the files permission.PatchPaths reports,
//     and refuses a patch whose files it would read differently.
//   - search_text judges each file its walk would open with the engine's
//     own classifier (pathrisk.Classify) and leaves out the contents of
//     those it would deny reading (.env, keys, tokens), saying so: the
//     engine judged the directory, never the files beneath it.
//
// Output goes to Output.Stdout as text for the model. Notes about the
// output itself (truncation, how to read on) are lines of the form
// "[...]" after the data. A failed call (a missing file, a bad regular
// expression, a patch that does not apply) is an error whose text says what
// to do next; it never leaves a file half-written.
package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/tool"
)

// Tools returns one of each file tool with the default limits, ready to
// register in a tool.Router.
func Tools() []tool.Tool {
	return []tool.Tool{&ReadFile{}, &ListFiles{}, &SearchText{}, &WriteFile{}, &ApplyPatch{}}
}

// builtin returns the metadata of a built-in tool; a missing name is a
// programmer's mistake.
func builtin(name string) permission.ToolInfo {
	info, ok := permission.Builtin(name)
	if !ok {
		panic("tools/fs: no built-in tool named " + name)
	}
	return info
}

// pathEnv returns what the PermissionEngine judged the call's paths
// with: its working directory, homes and data directory (tool.Call), the
// process's home when the call names none.
func pathEnv(call tool.Call) pathrisk.Env {
	home := call.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return pathrisk.Env{Cwd: call.Cwd, Home: home, UserHomes: call.UserHomes, ConfigHome: call.ConfigHome, DataDir: call.DataDir}
}

// resolve returns the absolute path the file system should be asked for,
// given a path argument as the model wrote it.
func resolve(env pathrisk.Env, raw string) (string, error) {
	if raw == "" {
		return "", errors.New("the path is empty; give a file path relative to the working directory or absolute")
	}
	p, ok := pathrisk.Absolute(raw, env)
	if !ok {
		return "", fmt.Errorf("cannot tell which file %q names (unknown home directory, user or working directory); give an absolute path", raw)
	}
	return p, nil
}

// pathError turns a file system error about the path raw into a sentence
// the model can act on.
func pathError(raw string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist; check the name with list_files", raw)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied: %s cannot be accessed by this process (%v)", raw, unwrapPath(err))
	}
	return fmt.Errorf("%s: %v", raw, unwrapPath(err))
}

// unwrapPath drops the operation and path from an *fs.PathError, which
// repeats the absolute path the model did not write.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// summary marshals a tool's structured summary; the values are plain data
// that always marshal.
func summary(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("tools/fs: summary: " + err.Error())
	}
	return b
}

// cancelled reports the context's error, if any, as the tool's error.
func cancelled(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("cancelled: %w", err)
	}
	return nil
}
