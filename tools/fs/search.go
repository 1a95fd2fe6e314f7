package fs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// SearchText is the search_text tool: a Go regular expression (RE2 syntax;
// `(?i)` for case-insensitive) matched against each line of each text file
// beneath path (default the working directory), printed like ripgrep:
//
//	path:line:text
//
// path as list_files prints it (the path argument joined with the file's
// relative path), line counted from 1, text the line without its newline
// (and without a trailing \r). Files come in the walker's order and lines
// in file order. .gitignore files and .git are honoured as in list_files;
// binary files (a NUL byte in the first 8 KiB) and symbolic links are
// skipped; the glob filters files as in list_files. A path naming a file
// searches that file alone, whatever .gitignore says.
//
// In a directory, files that are credentials by name or location (.env,
// private keys, .npmrc, …: whatever the PermissionEngine would judge a
// credential read, by pathrisk.Classify) are not opened; a note says how
// many were left out and names them (see secretFilter). custom-agent's own
// data directory is not entered (see secretFilter).
//
// A line longer than MaxLineBytes is shown as a window around its first
// match, marked with "…"; only the first MaxScanBytes of a line are
// searched.
type SearchText struct {
	// MaxMatches caps the matching lines printed; 0 means 1000.
	MaxMatches int
	// MaxLineBytes caps the text printed for one line; 0 means 500.
	MaxLineBytes int
	// MaxScanBytes caps how much of one line is searched; 0 means 1 MiB.
	MaxScanBytes int
}

var _ tool.Tool = (*SearchText)(nil)

// Info returns search_text's metadata.
func (*SearchText) Info() permission.ToolInfo { return builtin("search_text") }

type searchSummary struct {
	Matches   int  `json:"matches"`
	Files     int  `json:"files"`
	Searched  int  `json:"searched"`
	Truncated bool `json:"truncated"`
	// Skipped counts the files left out because reading them is a
	// credential read (see secretFilter).
	Skipped int `json:"skipped,omitempty"`
}

// Run searches for the pattern argument.
func (t *SearchText) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	s := searcher{
		maxMatches: orDefault(t.MaxMatches, 1000),
		maxLine:    orDefault(t.MaxLineBytes, 500),
		maxScan:    orDefault(t.MaxScanBytes, 1<<20),
		w:          bufio.NewWriter(out.Stdout),
	}
	pattern, raw, glob := call.String("pattern"), call.String("path"), call.String("glob")
	re, err := regexp.Compile(pattern)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return tool.Result{}, fmt.Errorf("pattern %q is not a valid Go regular expression (RE2 syntax): %s in %q; escape regex characters such as ( [ { . * + ? with \\ to match them literally", pattern, se.Code, se.Expr)
		}
		return tool.Result{}, fmt.Errorf("pattern %q is not a valid Go regular expression: %v", pattern, err)
	}
	s.re = re
	if err := checkGlob(glob); err != nil {
		return tool.Result{}, err
	}
	root, st, err := startDir(pathEnv(call), raw)
	if err != nil {
		return tool.Result{}, err
	}
	var walk *walker
	secrets := newSecretFilter(pathEnv(call), raw, root)
	if st.IsDir() {
		walk = newWalker(root)
		err = walk.walk(ctx, func(e entry) error {
			if secrets.data.skip(e) {
				return errSkipDir
			}
			if !e.mode.IsRegular() || !matchGlob(glob, e.rel) || secrets.skip(e) {
				return nil
			}
			return s.file(ctx, e.abs, safeName(displayPath(raw, e.rel)), false)
		})
	} else {
		if !st.Mode().IsRegular() {
			return tool.Result{}, fmt.Errorf("%s is not a regular file (%s); search a directory or a file", raw, st.Mode().Type())
		}
		// A file named alone was judged by the engine itself, by this
		// very path; a policy rule that names it may have allowed it.
		err = s.file(ctx, root, safeName(raw), true)
		if errors.Is(err, errStop) {
			err = nil
		}
	}
	if err != nil {
		if cerr := cancelled(ctx); cerr != nil {
			return tool.Result{}, cerr
		}
		return tool.Result{}, pathError(argName(raw), err)
	}
	switch {
	case s.sum.Truncated:
		fmt.Fprintf(s.w, "[stopped at %d matching lines; narrow the search with path, glob or a more specific pattern]\n", s.maxMatches)
	case s.sum.Matches == 0 && s.binary != "":
		fmt.Fprintf(s.w, "[no matches: %s is a binary file, which search_text does not search]\n", s.binary)
	case s.sum.Matches == 0:
		fmt.Fprintf(s.w, "[no matches in %d file%s searched]\n", s.sum.Searched, plural(s.sum.Searched, "", "s"))
	}
	secrets.note(s.w)
	s.sum.Skipped = len(secrets.skipped)
	if walk != nil {
		writeUnreadable(s.w, walk.unreadable, raw)
	}
	if len(s.unreadable) > 0 {
		writeUnreadableFiles(s.w, s.unreadable)
	}
	if err := s.w.Flush(); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Summary: summary(s.sum)}, nil
}

// searcher holds one search's state.
type searcher struct {
	re                  *regexp.Regexp
	maxMatches, maxLine int
	maxScan             int
	w                   *bufio.Writer
	sum                 searchSummary
	buf                 []byte
	binary              string   // the file named alone, when binary
	unreadable          []string // files that could not be read
}

// file searches one file; shown is its name in the output, alone says the
// file was named by the path argument.
func (s *searcher) file(ctx context.Context, abs, shown string, alone bool) error {
	if err := cancelled(ctx); err != nil {
		return err
	}
	f, err := os.Open(abs)
	if err != nil {
		if alone {
			return err
		}
		s.unreadable = append(s.unreadable, shown)
		return nil
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF {
		if alone {
			return err
		}
		s.unreadable = append(s.unreadable, shown)
		return nil
	}
	if bytes.IndexByte(head, 0) >= 0 {
		if alone {
			s.binary = shown
		}
		return nil
	}
	s.sum.Searched++
	found := false
	for num := 1; ; num++ {
		if num%4096 == 0 {
			if err := cancelled(ctx); err != nil {
				return err
			}
		}
		line, n, err := readLine(br, s.buf, s.maxScan)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			s.unreadable = append(s.unreadable, shown)
			return nil
		}
		s.buf = line
		if len(line) == n && len(line) > 0 && line[len(line)-1] == '\r' {
			line, n = line[:len(line)-1], n-1
		}
		loc := s.re.FindIndex(line)
		if loc == nil {
			continue
		}
		if s.sum.Matches == s.maxMatches {
			s.sum.Truncated = true
			return errStop
		}
		if !found {
			found = true
			s.sum.Files++
		}
		s.sum.Matches++
		if _, err := fmt.Fprintf(s.w, "%s:%d:%s\n", shown, num, excerpt(line, n, loc[0], s.maxLine)); err != nil {
			return err
		}
	}
}

// excerpt returns the text to print for a matching line: the whole line if
// it fits in max bytes, else a window of max bytes that starts a little
// before the match at, with "…" where text was left out. n is the line's
// whole length (more than len(line) when it was cut for scanning).
func excerpt(line []byte, n, at, max int) string {
	if n <= max && len(line) == n {
		return printable(line)
	}
	start := 0
	if at > max/4 {
		start = at - max/4
		for start < len(line) && start > 0 && !isRuneStart(line[start]) {
			start++
		}
	}
	win := cutUTF8(line[start:], max)
	s := printable(win)
	if start > 0 {
		s = "…" + s
	}
	if start+len(win) < n {
		s += "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// argName names the path argument in a message.
func argName(raw string) string {
	if raw == "" {
		return "the working directory"
	}
	return raw
}

func writeUnreadableFiles(w *bufio.Writer, files []string) {
	shown := files[:min(len(files), 10)]
	more := ""
	if len(files) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(files)-len(shown))
	}
	fmt.Fprintf(w, "[could not read %d file%s (permission denied or removed): %s%s]\n",
		len(files), plural(len(files), "", "s"), strings.Join(shown, ", "), more)
}
