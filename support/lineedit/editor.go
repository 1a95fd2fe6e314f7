// Package lineedit reads a prompt from a person at a terminal in raw mode:
// a line editor with history, several lines per prompt and bracketed paste.
// It draws inline (no alternate screen) below what is already printed, and
// redraws the whole prompt after every key, so a wrapped line never leaves
// a half-drawn prompt behind. After the terminal is resized, a prompt that
// fits one row is drawn again in place; a longer one is drawn again whole
// on the next line, at the new width (terminals rewrap what they show in
// different ways, so where its first row went is not known): what was
// drawn before stays, and nothing above the prompt is ever overwritten.
//
// Keys: Enter sends the prompt; Alt-Enter, Ctrl-J or a backslash at the end
// followed by Enter insert a newline; pasted text (bracketed paste) is
// inserted as it is, newlines included, and never sends the prompt. Up and
// Down move between the lines of the prompt, and past its first or last
// line through the history (Ctrl-P, Ctrl-N always do). Left, Right, Home,
// End, Ctrl-A, Ctrl-E, Ctrl-B, Ctrl-F move; Backspace, Delete, Ctrl-W,
// Ctrl-U and Ctrl-K delete. Ctrl-C clears a prompt that is not empty and
// returns ErrInterrupt at an empty one; Ctrl-D at an empty prompt returns
// io.EOF (elsewhere it deletes the character under the cursor).
//
// What is typed or pasted is shown with control characters escaped
// (termtext), so pasted text cannot move the cursor or set the title.
package lineedit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/custom-agent/custom-agent/support/termtext"
)

// resizeSettle is how long the terminal's size must stay the same before
// the prompt is drawn again at the new width.
const resizeSettle = 100 * time.Millisecond

// ErrInterrupt is returned by ReadLine when Ctrl-C is pressed at an empty
// prompt.
var ErrInterrupt = errors.New("interrupted at an empty prompt (Ctrl-C)")

// Options configure an Editor.
type Options struct {
	// Prompt is drawn before the first line ("› " when empty), and
	// Continuation before the others (spaces as wide as Prompt when
	// empty). Both must be printable text.
	Prompt, Continuation string
	// Width returns the terminal's width in columns; nil, or a value
	// below 10, means 80.
	Width func() int
	// History is recalled with Up and Down; nil means none. ReadLine does
	// not add to it: the caller decides what is kept.
	History *History
}

// Editor reads prompts from the chunks of a terminal's input (each what
// one Read returned) and draws them on out. Its methods are not safe for
// concurrent use.
type Editor struct {
	keys <-chan []byte
	out  io.Writer
	opts Options
}

// New returns an Editor reading keys from keys (closed when the input
// ends) and drawing on out, a terminal in raw mode while ReadLine runs.
// opts may be nil; it is copied.
func New(keys <-chan []byte, out io.Writer, opts *Options) *Editor {
	e := &Editor{keys: keys, out: out}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.Prompt == "" {
		e.opts.Prompt = "› "
	}
	if e.opts.Continuation == "" {
		e.opts.Continuation = strings.Repeat(" ", textWidth(e.opts.Prompt))
	}
	return e
}

// ReadLine reads one prompt and returns it, without a trailing newline.
// It returns ErrInterrupt for Ctrl-C at an empty prompt, io.EOF for Ctrl-D
// at an empty prompt or when keys is closed, and ctx.Err() when ctx ends.
// A value on resize (the terminal changed size) draws the prompt again at
// the new width, on a new line, once no other value came for a moment. The cursor is left at the start of the line below the prompt.
func (e *Editor) ReadLine(ctx context.Context, resize <-chan struct{}) (string, error) {
	s := &state{e: e, width: e.width()}
	if e.opts.History != nil {
		s.hist = e.opts.History.Entries()
	}
	s.hpos = len(s.hist)
	s.draw()
	var settle *time.Timer
	var settleC <-chan time.Time
	defer func() {
		if settle != nil {
			settle.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			s.finish()
			return "", ctx.Err()
		case <-resize:
			// Terminals rewrap what they show in different ways (or not
			// at all), so where the prompt's first row now is cannot be
			// known: rather than go up into what may be the
			// conversation, the prompt is drawn again below, once the
			// resizing has stopped for a moment.
			if settle == nil {
				settle = time.NewTimer(resizeSettle)
			} else {
				settle.Reset(resizeSettle)
			}
			settleC = settle.C
		case <-settleC:
			settleC = nil
			oneRow := s.lastRows == 1
			s.width = e.width()
			if _, _, endRow, endCol := s.layout(nil); !oneRow || endRow > 0 || endCol >= s.width {
				// Where the old drawing begins is not known.
				_, _ = io.WriteString(e.out, "\x1b[J\r\n")
			}
			// Else it took one row before and takes one now: it was
			// not rewrapped, and is drawn again in place.
			s.rowsAbove = 0
			s.draw()
		case b, ok := <-e.keys:
			if !ok {
				s.finish()
				return "", io.EOF
			}
			if line, err, done := s.input(b); done {
				return line, err
			}
		}
	}
}

func (e *Editor) width() int {
	if e.opts.Width != nil {
		if w := e.opts.Width(); w >= 10 {
			return w
		}
	}
	return 80
}

// state is one ReadLine.
type state struct {
	e     *Editor
	buf   []rune
	pos   int // the cursor, an index into buf
	width int
	// rowsAbove is how many rows the cursor is below the prompt's first
	// row, as last drawn.
	rowsAbove int

	hist  []string
	hpos  int    // index into hist; len(hist) is the prompt being typed
	draft string // the prompt being typed, while the history is shown

	// endWrapped: the last draw ended on a full row and moved to the next.
	endWrapped bool
	// lastRows is how many rows the last draw took.
	lastRows int

	pending []byte // an incomplete UTF-8 sequence or escape sequence
	pasting bool
}

// input handles one chunk of keys; done reports that ReadLine returns.
func (s *state) input(b []byte) (line string, err error, done bool) {
	data := append(s.pending, b...)
	s.pending = nil
	changed := false
	for i := 0; i < len(data); {
		if s.pasting {
			end := strings.Index(string(data[i:]), pasteEnd)
			if end < 0 {
				// Keep a possible start of the end marker for the next
				// chunk.
				keep := 0
				for k := min(len(pasteEnd)-1, len(data)-i); k > 0; k-- {
					if strings.HasPrefix(pasteEnd, string(data[len(data)-k:])) {
						keep = k
						break
					}
				}
				s.insertText(string(data[i : len(data)-keep]))
				s.pending = append([]byte(nil), data[len(data)-keep:]...)
				changed = true
				break
			}
			s.insertText(string(data[i : i+end]))
			i += end + len(pasteEnd)
			s.pasting = false
			changed = true
			continue
		}
		c := data[i]
		switch {
		case c == 0x1b:
			n, key := escape(data[i:])
			if n == 0 { // incomplete: wait for the rest
				s.pending = append([]byte(nil), data[i:]...)
				i = len(data)
				continue
			}
			i += n
			if key == keyPasteStart {
				s.pasting = true
				continue
			}
			s.key(key)
			changed = true
		case c < 0x20 || c == 0x7f:
			i++
			switch c {
			case '\r':
				if s.pos == len(s.buf) && s.pos > 0 && s.buf[s.pos-1] == '\\' {
					s.buf = s.buf[:s.pos-1]
					s.pos--
					s.insert('\n')
					changed = true
					continue
				}
				s.finish()
				return string(s.buf), nil, true
			case 0x03: // Ctrl-C
				if len(s.buf) == 0 {
					s.finish()
					return "", ErrInterrupt, true
				}
				s.buf, s.pos, s.hpos = nil, 0, len(s.hist)
				changed = true
			case '\t':
				s.insert('\t')
				changed = true
			case 0x04: // Ctrl-D
				if len(s.buf) == 0 {
					s.finish()
					return "", io.EOF, true
				}
				s.key(keyDelete)
				changed = true
			default:
				s.key(ctrlKeys[c])
				changed = true
			}
		default:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 && !utf8.FullRune(data[i:]) {
				s.pending = append([]byte(nil), data[i:]...)
				i = len(data)
				continue
			}
			i += n
			s.insert(r)
			changed = true
		}
	}
	// A long paste arrives in many reads: it is drawn once, whole.
	if changed && !s.pasting {
		s.draw()
	}
	return "", nil, false
}

// The keys that are not text.
type key int

const (
	keyNone key = iota
	keyLeft
	keyRight
	keyUp
	keyDown
	keyHome
	keyEnd
	keyBackspace
	keyDelete
	keyKillLine  // Ctrl-K: to the end of the line
	keyKillStart // Ctrl-U: to the start of the line
	keyKillWord  // Ctrl-W: the word before the cursor
	keyPrev      // Ctrl-P: the previous history entry
	keyNext      // Ctrl-N: the next history entry
	keyNewline   // Alt-Enter, Ctrl-J
	keyRedraw    // Ctrl-L
	keyWordLeft
	keyWordRight
	keyPasteStart
)

var ctrlKeys = map[byte]key{
	0x01: keyHome, 0x05: keyEnd, 0x02: keyLeft, 0x06: keyRight,
	0x08: keyBackspace, 0x7f: keyBackspace, 0x0b: keyKillLine, 0x15: keyKillStart,
	0x17: keyKillWord, 0x10: keyPrev, 0x0e: keyNext, '\n': keyNewline, 0x0c: keyRedraw,
}

const pasteStart, pasteEnd = "\x1b[200~", "\x1b[201~"

// escape reads the escape sequence at the start of b: how many bytes it
// takes (0: not complete yet) and the key it stands for (keyNone for one
// that means nothing here).
func escape(b []byte) (int, key) {
	if len(b) < 2 {
		return 0, keyNone
	}
	switch b[1] {
	case 0x1b:
		return 1, keyNone // a lone Escape, then perhaps a sequence
	case '\r', '\n':
		return 2, keyNewline // Alt-Enter
	case 'b':
		return 2, keyWordLeft
	case 'f':
		return 2, keyWordRight
	case 0x7f:
		return 2, keyKillWord
	case '[', 'O':
	default:
		return 2, keyNone
	}
	// CSI or SS3: parameters, then a final byte in 0x40–0x7e.
	for i := 2; i < len(b); i++ {
		c := b[i]
		if c >= 0x40 && c <= 0x7e {
			params := string(b[2:i])
			return i + 1, csiKey(params, c)
		}
		if i > 32 {
			return i + 1, keyNone // not a sequence we know: dropped
		}
	}
	return 0, keyNone
}

func csiKey(params string, final byte) key {
	// A modifier (";5" for Ctrl) does not change what the arrows do here,
	// except Ctrl or Alt with Left and Right moving a word.
	mod := ""
	if i := strings.IndexByte(params, ';'); i >= 0 {
		params, mod = params[:i], params[i+1:]
	}
	word := mod == "3" || mod == "5"
	switch final {
	case 'A':
		return keyUp
	case 'B':
		return keyDown
	case 'C':
		if word {
			return keyWordRight
		}
		return keyRight
	case 'D':
		if word {
			return keyWordLeft
		}
		return keyLeft
	case 'H':
		return keyHome
	case 'F':
		return keyEnd
	case '~':
		switch params {
		case "1", "7":
			return keyHome
		case "4", "8":
			return keyEnd
		case "3":
			return keyDelete
		case "200":
			return keyPasteStart
		}
	}
	return keyNone
}

func (s *state) insert(r rune) {
	s.buf = append(s.buf[:s.pos], append([]rune{r}, s.buf[s.pos:]...)...)
	s.pos++
}

// insertText inserts pasted text: a CR LF or a lone CR is a newline.
func (s *state) insertText(t string) {
	t = strings.ReplaceAll(t, "\r\n", "\n")
	t = strings.ReplaceAll(t, "\r", "\n")
	for _, r := range t {
		s.insert(r)
	}
}

// lineBounds returns where the line holding the cursor starts and ends.
func (s *state) lineBounds() (start, end int) {
	start = s.pos
	for start > 0 && s.buf[start-1] != '\n' {
		start--
	}
	end = s.pos
	for end < len(s.buf) && s.buf[end] != '\n' {
		end++
	}
	return start, end
}

func (s *state) key(k key) {
	switch k {
	case keyLeft:
		s.pos = max(0, s.pos-1)
	case keyRight:
		s.pos = min(len(s.buf), s.pos+1)
	case keyHome:
		s.pos, _ = s.lineBounds()
	case keyEnd:
		_, s.pos = s.lineBounds()
	case keyBackspace:
		if s.pos > 0 {
			s.buf = append(s.buf[:s.pos-1], s.buf[s.pos:]...)
			s.pos--
		}
	case keyDelete:
		if s.pos < len(s.buf) {
			s.buf = append(s.buf[:s.pos], s.buf[s.pos+1:]...)
		}
	case keyKillLine:
		_, end := s.lineBounds()
		s.buf = append(s.buf[:s.pos], s.buf[end:]...)
	case keyKillStart:
		start, _ := s.lineBounds()
		s.buf = append(s.buf[:start], s.buf[s.pos:]...)
		s.pos = start
	case keyKillWord:
		start := s.wordLeft()
		s.buf = append(s.buf[:start], s.buf[s.pos:]...)
		s.pos = start
	case keyWordLeft:
		s.pos = s.wordLeft()
	case keyWordRight:
		i := s.pos
		for i < len(s.buf) && isSpace(s.buf[i]) {
			i++
		}
		for i < len(s.buf) && !isSpace(s.buf[i]) {
			i++
		}
		s.pos = i
	case keyNewline:
		s.insert('\n')
	case keyUp:
		start, _ := s.lineBounds()
		if start == 0 {
			s.recall(-1)
			return
		}
		col := s.pos - start
		prevStart := start - 1
		for prevStart > 0 && s.buf[prevStart-1] != '\n' {
			prevStart--
		}
		s.pos = min(prevStart+col, start-1)
	case keyDown:
		start, end := s.lineBounds()
		if end == len(s.buf) {
			s.recall(+1)
			return
		}
		col := s.pos - start
		nextEnd := end + 1
		for nextEnd < len(s.buf) && s.buf[nextEnd] != '\n' {
			nextEnd++
		}
		s.pos = min(end+1+col, nextEnd)
	case keyPrev:
		s.recall(-1)
	case keyNext:
		s.recall(+1)
	case keyRedraw:
		// Clear the screen and draw the prompt at its top.
		_, _ = io.WriteString(s.e.out, "\x1b[H\x1b[2J")
		s.rowsAbove = 0
	}
}

func isSpace(r rune) bool { return r == ' ' || r == '\n' || r == '\t' }

func (s *state) wordLeft() int {
	i := s.pos
	for i > 0 && isSpace(s.buf[i-1]) {
		i--
	}
	for i > 0 && !isSpace(s.buf[i-1]) {
		i--
	}
	return i
}

// recall shows the previous (-1) or next (+1) history entry; the prompt
// being typed is kept and comes back after the newest entry.
func (s *state) recall(dir int) {
	n := s.hpos + dir
	if n < 0 || n > len(s.hist) {
		return
	}
	if s.hpos == len(s.hist) {
		s.draft = string(s.buf)
	}
	s.hpos = n
	text := s.draft
	if n < len(s.hist) {
		text = s.hist[n]
	}
	s.buf = []rune(text)
	s.pos = len(s.buf)
}

// cell is one character as drawn: its text (escaped if it is a control)
// and its width in columns.
func cell(r rune) (string, int) {
	switch {
	case r == '\t':
		return "    ", 4
	case termtext.Unsafe(r):
		t := termtext.Line(string(r))
		return t, len(t)
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return string(r), 2
	}
	return string(r), 1
}

func textWidth(t string) int {
	n := 0
	for _, r := range t {
		_, w := cell(r)
		n += w
	}
	return n
}

// layout draws the prompt into b (when not nil) and returns the row and
// column of the cursor and of the end, counted from the prompt's first
// row. A column equal to the width is the terminal's pending wrap: the
// next character goes to the next row.
func (s *state) layout(b *strings.Builder) (curRow, curCol, endRow, endCol int) {
	w := s.width
	row, col := 0, 0
	put := func(text string, cw int) {
		if col+cw > w {
			row, col = row+1, 0
		}
		if b != nil {
			b.WriteString(text)
		}
		col += cw
	}
	prefix := func(p string) {
		for _, r := range p {
			put(cell(r))
		}
	}
	prefix(s.e.opts.Prompt)
	curRow, curCol = -1, -1
	for i, r := range s.buf {
		if i == s.pos {
			curRow, curCol = row, col
		}
		if r == '\n' {
			if b != nil {
				b.WriteString("\r\n")
			}
			row, col = row+1, 0
			prefix(s.e.opts.Continuation)
			continue
		}
		put(cell(r))
	}
	if curRow < 0 {
		curRow, curCol = row, col
	}
	if curCol >= w {
		curRow, curCol = curRow+1, 0
	}
	return curRow, curCol, row, col
}

// draw draws the whole prompt again over what was drawn before.
func (s *state) draw() {
	var b strings.Builder
	b.WriteString("\x1b[?25l\r")
	if s.rowsAbove > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", s.rowsAbove)
	}
	b.WriteString("\x1b[J")
	curRow, curCol, endRow, endCol := s.layout(&b)
	s.lastRows = endRow + 1
	s.endWrapped = endCol >= s.width
	if s.endWrapped {
		// Leave the pending wrap, so the cursor's row is known.
		b.WriteString("\r\n")
		endRow = endRow + 1
	}
	if up := endRow - curRow; up > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", up)
	}
	b.WriteString("\r")
	if curCol > 0 {
		fmt.Fprintf(&b, "\x1b[%dC", curCol)
	}
	b.WriteString("\x1b[?25h")
	s.rowsAbove = curRow
	_, _ = io.WriteString(s.e.out, b.String())
}

// finish moves the cursor below the prompt, as drawn, to a new line.
func (s *state) finish() {
	s.pos = len(s.buf)
	s.draw()
	if !s.endWrapped {
		_, _ = io.WriteString(s.e.out, "\r\n")
	}
	s.rowsAbove = 0
}
