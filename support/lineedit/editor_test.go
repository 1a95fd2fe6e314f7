package lineedit

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// readLine types chunks into a fresh editor and returns what ReadLine
// returned and what it drew.
func readLine(t *testing.T, hist []string, width int, chunks ...string) (line, drawn string, err error) {
	t.Helper()
	keys := make(chan []byte, len(chunks))
	for _, c := range chunks {
		keys <- []byte(c)
	}
	close(keys)
	h := &History{max: 100, entries: hist}
	var out strings.Builder
	e := New(keys, &out, &Options{History: h, Width: func() int { return width }})
	line, err = e.ReadLine(context.Background(), nil)
	return line, out.String(), err
}

func TestReadLine(t *testing.T) {
	t.Parallel()
	hist := []string{"first prompt", "second\nof two lines"}
	tests := []struct {
		name   string
		chunks []string
		want   string
		err    error
	}{
		{"enter sends", []string{"hello\r"}, "hello", nil},
		{"keys one by one", []string{"h", "i", "\r"}, "hi", nil},
		{"backspace", []string{"helo\x7f\x7fllo\r"}, "hello", nil},
		{"trailing backslash is a newline", []string{"one\\\rtwo\r"}, "one\ntwo", nil},
		{"a backslash inside stays", []string{`a\b` + "\r"}, `a\b`, nil},
		{"alt-enter is a newline", []string{"one\x1b\rtwo\r"}, "one\ntwo", nil},
		{"ctrl-j is a newline", []string{"one\ntwo\r"}, "one\ntwo", nil},
		{"paste keeps its newlines", []string{"\x1b[200~line 1\r\nline 2\rline 3\x1b[201~\r"}, "line 1\nline 2\nline 3", nil},
		{"paste split across reads", []string{"\x1b[200~ab\r", "cd\x1b[20", "1~!\r"}, "ab\ncd!", nil},
		{"pasted escape sequences are text", []string{"\x1b[200~a\x1b[2Jb\x1b[201~\r"}, "a\x1b[2Jb", nil},
		{"left and insert", []string{"ac\x1b[Db\r"}, "abc", nil},
		{"home and end", []string{"bc\x01a\x05d\r"}, "abcd", nil},
		{"ctrl-u kills to the start", []string{"abc def\x15x\r"}, "x", nil},
		{"ctrl-w kills a word", []string{"abc def\x17\r"}, "abc ", nil},
		{"ctrl-k kills to the end", []string{"abcdef\x1b[D\x1b[D\x0b\r"}, "abcd", nil},
		{"delete", []string{"abc\x01\x1b[3~\r"}, "bc", nil},
		{"up recalls the newest", []string{"\x1b[A\r"}, "second\nof two lines", nil},
		{"up twice recalls older", []string{"\x1b[A\x1b[A\x1b[A\r"}, "first prompt", nil},
		{"down comes back to the draft", []string{"draft\x1b[A\x1b[B\r"}, "draft", nil},
		{"ctrl-p and ctrl-n", []string{"\x10\x10\x0e\r"}, "second\nof two lines", nil},
		{"up inside a prompt of lines moves up", []string{"ab\ncd\x1b[AX\r"}, "abX\ncd", nil},
		{"utf-8 split across reads", []string{"caf\xc3", "\xa9\r"}, "café", nil},
		{"wide runes", []string{"你好\x1b[Dx\r"}, "你x好", nil},
		{"ctrl-c clears what is typed", []string{"abc\x03", "new\r"}, "new", nil},
		{"ctrl-c at an empty prompt", []string{"\x03"}, "", ErrInterrupt},
		{"ctrl-d at an empty prompt", []string{"\x04"}, "", io.EOF},
		{"ctrl-d deletes under the cursor", []string{"ab\x01\x04\r"}, "b", nil},
		{"end of input", []string{"abc"}, "", io.EOF},
		{"unknown sequences are dropped", []string{"a\x1b[15~b\x1bOPc\r"}, "abc", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := readLine(t, hist, 80, tt.chunks...)
			if !errors.Is(err, tt.err) || err == nil && tt.err != nil {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("line = %q, want %q", got, tt.want)
			}
		})
	}
}

// Text typed or pasted is drawn with its control characters escaped: a
// pasted escape sequence cannot move the cursor or set the title. The
// only sequences drawn are the editor's own.
func TestDrawEscapesControls(t *testing.T) {
	t.Parallel()
	_, drawn, _ := readLine(t, nil, 80, "\x1b[200~x\x1b]0;pwned\x07\x1b[1A\u202e\x1b[201~\r")
	if strings.Contains(drawn, "\x1b]0;") || strings.Contains(drawn, "\x07") || strings.Contains(drawn, "\u202e") {
		t.Fatalf("a control reached the terminal: %q", drawn)
	}
	if !strings.Contains(drawn, `x\x1b]0;pwned\a\x1b[1A\u202e`) {
		t.Fatalf("the pasted text is not shown escaped: %q", drawn)
	}
}

// The layout wraps at the width, counts wide runes as two columns and
// puts the cursor where the next character goes.
func TestLayout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                  string
		buf                   string
		pos, width            int
		curRow, curCol, endRw int
	}{
		{"one row", "abc", 3, 20, 0, 5, 0},
		{"wraps", strings.Repeat("x", 25), 25, 20, 1, 7, 1},
		{"exactly full: the cursor goes to the next row", strings.Repeat("x", 18), 18, 20, 1, 0, 0},
		{"cursor in the middle", "abc\ndef", 1, 20, 0, 3, 1},
		{"second line", "abc\ndef", 6, 20, 1, 4, 1},
		{"a wide rune does not split at the edge", strings.Repeat("x", 17) + "你", 18, 20, 1, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &state{e: New(nil, io.Discard, nil), buf: []rune(tt.buf), pos: tt.pos, width: tt.width}
			r, c, er, _ := s.layout(nil)
			if r != tt.curRow || c != tt.curCol || er != tt.endRw {
				t.Errorf("cursor (%d,%d) end row %d, want (%d,%d) end row %d", r, c, er, tt.curRow, tt.curCol, tt.endRw)
			}
		})
	}
}

// A paste that arrives in many reads is drawn once, when it ends.
func TestPasteIsDrawnOnce(t *testing.T) {
	t.Parallel()
	chunks := []string{"\x1b[200~"}
	for range 50 {
		chunks = append(chunks, "pasted text ")
	}
	chunks = append(chunks, "\x1b[201~", "\r")
	line, drawn, err := readLine(t, nil, 80, chunks...)
	if err != nil || line != strings.Repeat("pasted text ", 50) {
		t.Fatalf("line %q, %v", line, err)
	}
	// The first prompt, the paste, and Enter's final drawing.
	if n := strings.Count(drawn, "\x1b[?25l"); n != 3 {
		t.Errorf("drawn %d times, want 3", n)
	}
}

// A redraw goes back up exactly as many rows as the cursor is below the
// prompt's first row, then clears to the end of the screen.
func TestRedrawGoesBackToTheFirstRow(t *testing.T) {
	t.Parallel()
	_, drawn, _ := readLine(t, nil, 20, strings.Repeat("y", 30), "\x1b[A"+"\r")
	// 30 characters after the prompt's 2 columns take two rows: the
	// next redraw goes up one row.
	if !strings.Contains(drawn, "\r\x1b[1A\x1b[J") {
		t.Fatalf("no redraw from the first row: %q", drawn)
	}
}

func TestResizeRedraws(t *testing.T) {
	t.Parallel()
	keys := make(chan []byte)
	resize := make(chan struct{})
	w := 80
	var out strings.Builder
	e := New(keys, &out, &Options{Width: func() int { return w }})
	done := make(chan string)
	go func() {
		l, _ := e.ReadLine(context.Background(), resize)
		done <- l
	}()
	keys <- []byte(strings.Repeat("z", 50))
	w = 20
	resize <- struct{}{}
	resize <- struct{}{} // several while the window is dragged: drawn once
	time.Sleep(3 * resizeSettle)
	keys <- []byte("\r")
	if got := <-done; got != strings.Repeat("z", 50) {
		t.Fatalf("line = %q", got)
	}
	// The prompt is drawn again once, below, at 20 columns: the 52
	// columns take three rows, so the redraw that Enter makes goes up
	// two rows, to the new drawing's first row, not into what was above.
	got := out.String()
	if n := strings.Count(got, "\x1b[J\r\n"); n != 1 {
		t.Fatalf("drawn again %d times after the resize, want once: %q", n, got)
	}
	after := got[strings.Index(got, "\x1b[J\r\n"):]
	if !strings.Contains(after, "\r\x1b[2A\x1b[J") {
		t.Fatalf("the redraw after the resize does not start from the new drawing's first row: %q", after)
	}
}

// A prompt that fits one row before and after is drawn again in place.
func TestResizeShortPromptInPlace(t *testing.T) {
	t.Parallel()
	keys := make(chan []byte)
	resize := make(chan struct{})
	var out strings.Builder
	e := New(keys, &out, &Options{Width: func() int { return 40 }})
	done := make(chan string)
	go func() {
		l, _ := e.ReadLine(context.Background(), resize)
		done <- l
	}()
	keys <- []byte("short")
	resize <- struct{}{}
	time.Sleep(3 * resizeSettle)
	keys <- []byte("\r")
	if got := <-done; got != "short" {
		t.Fatalf("line = %q", got)
	}
	if strings.Contains(out.String(), "\x1b[J\r\n") {
		t.Fatalf("a one-row prompt was drawn again on a new line: %q", out.String())
	}
	if n := strings.Count(out.String(), "› short"); n != 3 {
		t.Fatalf("drawn %d times with its text, want 3 (typed, resized, sent): %q", n, out.String())
	}
}

func TestContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := New(make(chan []byte), io.Discard, nil)
	if _, err := e.ReadLine(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
