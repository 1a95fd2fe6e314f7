package fs

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// ListFiles is the list_files tool. It prints the entries beneath a
// directory (default the working directory), recursively, one a line,
// in the walker's order (depth first, each directory's names in byte
// order), directories with a trailing `/`. Each line is the path argument
// as given joined with the entry's relative path ("src/a.go" when listing
// "src"), so it can be passed to read_file as it is. What .gitignore files
// exclude and .git are left out; symbolic links are listed, not followed.
//
// A glob without a slash filters by base name at any depth ("*.go"); one
// with a slash filters by the path relative to the listed directory
// ("cmd/**/main.go"). Directories are walked whether or not they match,
// except custom-agent's own data directory (tool.Call.DataDir or the
// default one): it is listed, but what it holds is not (the names of the
// outputs it keeps are digests of them), and a note says so.
type ListFiles struct {
	// MaxEntries caps the entries listed; 0 means 2000.
	MaxEntries int
}

var _ tool.Tool = (*ListFiles)(nil)

// Info returns list_files' metadata.
func (*ListFiles) Info() permission.ToolInfo { return builtin("list_files") }

type listSummary struct {
	Entries   int  `json:"entries"`
	Truncated bool `json:"truncated"`
}

// Run lists the directory named by the path argument.
func (t *ListFiles) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	maxEntries := orDefault(t.MaxEntries, 2000)
	raw, glob := call.String("path"), call.String("glob")
	if err := checkGlob(glob); err != nil {
		return tool.Result{}, err
	}
	root, st, err := startDir(pathEnv(call), raw)
	if err != nil {
		return tool.Result{}, err
	}
	if !st.IsDir() {
		return tool.Result{}, fmt.Errorf("%s is a file, not a directory; use read_file to read it", raw)
	}
	w := bufio.NewWriter(out.Stdout)
	var sum listSummary
	walk := newWalker(root)
	data := newDataDirs(pathEnv(call), raw, root) // listed but not entered
	err = walk.walk(ctx, func(e entry) error {
		skip := data.skip(e)
		if !matchGlob(glob, e.rel) {
			if skip {
				return errSkipDir
			}
			return nil
		}
		if sum.Entries == maxEntries {
			sum.Truncated = true
			return errStop
		}
		sum.Entries++
		// Names only, never contents: a credential file is listed like
		// any other (read_file judges it), its name escaped when it
		// holds control characters.
		name := safeName(displayPath(raw, e.rel))
		if e.isDir() {
			name += "/"
		}
		if _, err := fmt.Fprintln(w, name); err != nil {
			return err
		}
		if skip {
			return errSkipDir
		}
		return nil
	})
	if err != nil {
		if cerr := cancelled(ctx); cerr != nil {
			return tool.Result{}, cerr
		}
		return tool.Result{}, pathError(argName(raw), err)
	}
	switch {
	case sum.Truncated:
		fmt.Fprintf(w, "[listing stopped at %d entries; narrow it with path or glob]\n", maxEntries)
	case sum.Entries == 0 && glob != "":
		fmt.Fprintf(w, "[no entries match the glob %q]\n", glob)
	case sum.Entries == 0:
		fmt.Fprintln(w, "[the directory is empty, or everything in it is ignored by .gitignore]")
	}
	noteDataDirs(w, data.found, "contents not listed")
	writeUnreadable(w, walk.unreadable, raw)
	if err := w.Flush(); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Summary: summary(sum)}, nil
}

// writeUnreadable notes the directories a walk could not read.
func writeUnreadable(w *bufio.Writer, dirs []string, raw string) {
	if len(dirs) == 0 {
		return
	}
	shown := make([]string, 0, min(len(dirs), 10))
	for _, d := range dirs[:min(len(dirs), 10)] {
		shown = append(shown, displayPath(raw, d))
	}
	more := ""
	if len(dirs) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(dirs)-len(shown))
	}
	fmt.Fprintf(w, "[could not read %d director%s (permission denied or removed): %s%s]\n",
		len(dirs), plural(len(dirs), "y", "ies"), strings.Join(shown, ", "), more)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
