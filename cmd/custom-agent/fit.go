package main

import (
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/support/termtext"
)

// Lines custom-agent prints for a person fit the terminal: they are
// broken at the spaces between words, the lines after the first indented
// (termtext.Wrap), as the question box does. Output to a file or a pipe
// keeps each line whole, for grep and for golden files.

// columns is the width of the terminal w writes to, or 0 (no limit) when w
// is not a terminal or its size cannot be read.
func columns(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	c, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return c
}

// secondColumn is the indent that lines a wrapped line's continuation up
// with its second column: the text after the first run of two or more
// spaces that follows the line's first word ("/mode [NAME]  show …",
// "  id  allow  shell  …"). Without one, or where it would leave too
// little room, the line's own leading spaces and two more.
func secondColumn(line string, cols int) string {
	rest := strings.TrimLeft(line, " ")
	lead := line[:len(line)-len(rest)]
	fallback := lead + "  "
	if len(fallback)+24 > cols {
		fallback = "    "
	}
	i := strings.Index(rest, "  ")
	if i < 0 {
		return fallback
	}
	j := i + len(rest[i:]) - len(strings.TrimLeft(rest[i:], " "))
	indent := strings.Repeat(" ", termtext.Width(line[:len(lead)+j]))
	if len(indent)+24 > cols {
		return fallback
	}
	return indent
}

// fitTable is s (lines ending in "\n", as a tabwriter prints them) with
// each line wrapped to cols columns, its continuation lined up with its
// second column. cols <= 0 returns s as it is.
func fitTable(s string, cols int) string {
	if cols <= 0 {
		return s
	}
	var b strings.Builder
	for line := range strings.Lines(s) {
		body := strings.TrimSuffix(line, "\n")
		b.WriteString(strings.Join(termtext.Wrap(body, cols, secondColumn(body, cols)), "\n"))
		if len(body) < len(line) {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// fitLine is line wrapped to cols columns, each line after the first
// starting with indent, and ending in "\n".
func fitLine(line string, cols int, indent string) string {
	return strings.Join(termtext.Wrap(line, cols, indent), "\n") + "\n"
}

// fitWriter writes what it is given to w a whole line at a time, each line
// wrapped to cols columns as fitTable does; a line not yet ended waits
// for its newline, or for Flush. cols <= 0 writes through unchanged.
type fitWriter struct {
	w    io.Writer
	cols int
	buf  []byte
}

func (f *fitWriter) Write(p []byte) (int, error) {
	if f.cols <= 0 {
		return f.w.Write(p)
	}
	f.buf = append(f.buf, p...)
	i := strings.LastIndexByte(string(f.buf), '\n')
	if i < 0 {
		return len(p), nil
	}
	_, err := io.WriteString(f.w, fitTable(string(f.buf[:i+1]), f.cols))
	f.buf = append(f.buf[:0], f.buf[i+1:]...)
	return len(p), err
}

// Flush writes a last line that has no newline.
func (f *fitWriter) Flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(f.w, fitTable(string(f.buf), f.cols))
	f.buf = f.buf[:0]
	return err
}
