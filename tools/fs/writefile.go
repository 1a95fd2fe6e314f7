package fs

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// WriteFile is the write_file tool. It replaces a file's whole content
// atomically: the content goes to a temporary file in the same directory,
// is synced, and is renamed over the file, so a reader (or a crash) sees
// the old content or the new, never part of it. Missing parent directories
// are created (0755); an existing file keeps its mode, a new one gets 0644.
// A symbolic link is written through: the file it leads to is replaced and
// the link stays. A path naming a directory is refused.
//
// It prints one line, e.g.
//
//	created notes/todo.md (120 bytes, and the directory notes)
//	overwrote main.go (2048 bytes; it had 1990)
type WriteFile struct{}

var _ tool.Tool = (*WriteFile)(nil)

// Info returns write_file's metadata.
func (*WriteFile) Info() permission.ToolInfo { return builtin("write_file") }

type writeSummary struct {
	Bytes   int  `json:"bytes"`
	Created bool `json:"created"`
}

// Run writes the content argument to the path argument.
func (*WriteFile) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	raw, content := call.String("path"), call.String("content")
	if strings.HasSuffix(raw, "/") {
		return tool.Result{}, fmt.Errorf("%s names a directory (it ends with /); give the path of a file", raw)
	}
	p, err := resolve(pathEnv(call), raw)
	if err != nil {
		return tool.Result{}, err
	}
	dst, old, err := writeTarget(raw, p)
	if err != nil {
		return tool.Result{}, err
	}
	perm := newFilePerm
	if old != nil {
		perm = old.Mode() & keptMode
	}
	made, err := makeParents(raw, dst)
	if err != nil {
		return tool.Result{}, err
	}
	s, err := stage(dst, []byte(content), perm)
	if err != nil {
		removeDirs(made)
		return tool.Result{}, fmt.Errorf("cannot write %s: %v", raw, unwrapPath(err))
	}
	if err := cancelled(ctx); err != nil {
		s.discard()
		removeDirs(made)
		return tool.Result{}, err
	}
	if err := s.commit(); err != nil {
		s.discard()
		removeDirs(made)
		return tool.Result{}, fmt.Errorf("cannot write %s: %v", raw, unwrapPath(err))
	}
	line := fmt.Sprintf("created %s (%d bytes", raw, len(content))
	if old != nil {
		line = fmt.Sprintf("overwrote %s (%d bytes; it had %d", raw, len(content), old.Size())
	}
	if len(made) > 0 {
		names := make([]string, len(made))
		for i, d := range made {
			names[i] = relToCwd(call.Cwd, d)
		}
		line += fmt.Sprintf(", and the director%s %s", plural(len(made), "y", "ies"), strings.Join(names, ", "))
	}
	if _, err := fmt.Fprintln(out.Stdout, line+")"); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Summary: summary(writeSummary{Bytes: len(content), Created: old == nil})}, nil
}

// relToCwd shows an absolute path relative to the working directory when
// it lies beneath it.
func relToCwd(cwd, p string) string {
	if rel, err := filepath.Rel(cwd, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}
