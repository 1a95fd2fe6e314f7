package fs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// ReadFile is the read_file tool. It prints a text file's lines in the
// style of `cat -n`: each line as its 1-based number right-aligned in six
// columns, a tab, and the line as it is in the file (a trailing \r kept).
// The offset argument counts lines from 0, so the line numbered 12 is at
// offset 11; the note that ends a partial read gives the offset to read on
// from.
//
// A file that looks binary (a NUL byte or bytes that are not UTF-8 in its
// first 8 KiB) is refused; so are directories and files that are not
// regular (pipes, devices). Invalid UTF-8 later in the file is shown as
// U+FFFD.
type ReadFile struct {
	// MaxBytes caps the output; 0 means 256 KiB. The last line shown is
	// always whole (up to MaxLineBytes).
	MaxBytes int
	// MaxLineBytes caps one line; the rest of a longer line is left out
	// with a note at its end. 0 means 8 KiB.
	MaxLineBytes int
}

var _ tool.Tool = (*ReadFile)(nil)

// Info returns read_file's metadata.
func (*ReadFile) Info() permission.ToolInfo { return builtin("read_file") }

// readSummary is read_file's Result.Summary.
type readSummary struct {
	TotalLines int  `json:"totalLines"`
	Offset     int  `json:"offset"`
	Lines      int  `json:"lines"`
	Truncated  bool `json:"truncated"`
	NextOffset int  `json:"nextOffset,omitempty"`
}

// Run reads the file named by the path argument.
func (t *ReadFile) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	maxBytes, maxLine := orDefault(t.MaxBytes, 256<<10), orDefault(t.MaxLineBytes, 8<<10)
	raw := call.String("path")
	offset, limit := call.Int("offset", 0), call.Int("limit", 0)
	if offset < 0 || limit < 0 {
		return tool.Result{}, fmt.Errorf("offset and limit must not be negative (offset %d, limit %d)", offset, limit)
	}
	p, err := resolve(pathEnv(call), raw)
	if err != nil {
		return tool.Result{}, err
	}
	f, err := openText(raw, p)
	if err != nil {
		return tool.Result{}, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF {
		return tool.Result{}, pathError(raw, err)
	}
	if why := binaryReason(head, len(head) == sniffLen); why != "" {
		return tool.Result{}, fmt.Errorf("%s looks like a binary file (%s); read_file shows text only: use shell (e.g. `xxd %s | head`) to inspect it", raw, why, raw)
	}

	w := bufio.NewWriter(out.Stdout)
	var (
		sum     = readSummary{Offset: offset}
		written int
		buf     []byte
		line    = 0 // index of the next line to read
	)
	for {
		if line%1024 == 0 {
			if err := cancelled(ctx); err != nil {
				return tool.Result{}, err
			}
		}
		var n int
		var text []byte
		text, n, err = readLine(br, buf, maxLine)
		if err == io.EOF {
			break
		}
		if err != nil {
			return tool.Result{}, pathError(raw, err)
		}
		buf = text
		if line < offset {
			line++
			continue
		}
		entry := formatLine(line+1, text, n)
		if limit > 0 && sum.Lines == limit || sum.Lines > 0 && written+len(entry) > maxBytes {
			sum.Truncated, sum.NextOffset = true, line
			rest, err := countLines(ctx, br)
			if err != nil {
				return tool.Result{}, err
			}
			line += 1 + rest // the line just read is not shown
			break
		}
		if _, err := w.WriteString(entry); err != nil {
			return tool.Result{}, err
		}
		written += len(entry)
		sum.Lines++
		line++
	}
	sum.TotalLines = line
	switch {
	case sum.TotalLines == 0 && offset == 0:
		fmt.Fprintln(w, "[the file is empty]")
	case offset >= sum.TotalLines:
		return tool.Result{}, fmt.Errorf("offset %d is past the end of %s (%d lines); offsets count lines from 0, so the last line is at offset %d",
			offset, raw, sum.TotalLines, max(sum.TotalLines-1, 0))
	case sum.Truncated:
		why := ""
		if limit == 0 || sum.Lines < limit {
			why = fmt.Sprintf(" (output capped at %s)", sizeText(maxBytes))
		}
		fmt.Fprintf(w, "[showed lines %d-%d of %d%s; to read on, call read_file with offset %d]\n",
			offset+1, offset+sum.Lines, sum.TotalLines, why, sum.NextOffset)
	}
	if err := w.Flush(); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Summary: summary(sum)}, nil
}

// openText opens the regular file at p (raw as the model wrote it, for
// messages), refusing directories and special files before opening them:
// opening a named pipe would block.
func openText(raw, p string) (*os.File, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, pathError(raw, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; use list_files to see what it holds", raw)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s); only regular files can be read", raw, st.Mode().Type())
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, pathError(raw, err)
	}
	return f, nil
}

// formatLine renders one line `cat -n` style; n is the line's whole length,
// which is more than len(text) when the line was cut.
func formatLine(num int, text []byte, n int) string {
	if n == len(text) {
		return fmt.Sprintf("%6d\t%s\n", num, printable(text))
	}
	shown := trimPartialRune(text)
	return fmt.Sprintf("%6d\t%s […line cut: %d of %d bytes shown]\n", num, printable(shown), len(shown), n)
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// sizeText writes a byte count the way the limits are documented.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
