package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// SGR colour codes.
const (
	green        = "32"
	yellow       = "33"
	yellowBold   = "1;33"
	magenta      = "35"
	red          = "31"
	cyan         = "36"
	redBoldInv   = "1;7;31"
	bold         = "1"
	dim          = "2"
	maxArgsLines = 30
)

// riskColour is the colour of each level; unknown looks destructive.
var riskColour = map[risk.Level]string{
	risk.Unknown:     redBoldInv,
	risk.Read:        green,
	risk.Write:       yellow,
	risk.Execute:     yellowBold,
	risk.Network:     magenta,
	risk.Credential:  red,
	risk.Destructive: redBoldInv,
}

// keys map the interactive keys to options, in display order.
var keys = []struct {
	key    byte
	option string
	label  string
}{
	{'o', executor.OptionAllowOnce, "allow once"},
	{'s', executor.OptionAllowSession, "allow for this session"},
	{'p', executor.OptionAllowProject, "always allow in this project"},
	{'u', executor.OptionAllowUnsandboxed, "run once without the sandbox"},
	{'d', executor.OptionDeny, "deny"},
}

// Labels of allow once: what it grants (DESIGN.md §6, prior approval).
const (
	labelAllowOnce            = "allow once (and identical calls again in this session)"
	labelAllowOnceDestructive = "allow once (asked again every time)"
)

// pageKey shows the next page of a diff cut to fit the screen.
const pageKey = 'v'

func (r *run) paint(code, s string) string {
	if r.opts.NoColor {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (r *run) startInteractive() {
	// Keys typed before the question is drawn never answer it: what the
	// terminal holds is discarded, before raw mode (which would hand a
	// half-typed line to the reader at once) and after it, and keys that
	// arrive in the next moment (already read, or typed as the question
	// appears) are ignored (keyGuard).
	r.flush()
	if r.opts.MakeRaw != nil {
		restore, err := r.opts.MakeRaw()
		switch {
		case err == nil:
			r.restore = restore
		case !r.warned:
			r.warned = true
			r.write("approval: cannot read single keys (" + clean(err.Error()) + "); type the key and press Enter\n")
		}
	}
	r.flush()
	r.write(r.renderBlock())
	r.cur.shownAt = time.Now()
	r.ticker = time.NewTicker(time.Second)
	r.drawStatus()
}

func (r *run) flush() {
	if r.opts.Flush != nil {
		_ = r.opts.Flush() // a terminal that cannot flush still has the key guard
	}
}

func (r *run) keyGuard() time.Duration {
	switch g := r.opts.KeyGuard; {
	case g == 0:
		return DefaultKeyGuard
	case g < 0:
		return 0
	default:
		return g
	}
}

// screen is the terminal's size, 80×24 when it cannot be known.
func (r *run) screen() (width, height int) {
	if r.opts.Size != nil {
		if w, h, err := r.opts.Size(); err == nil && w > 0 && h > 0 {
			return w, h
		}
	}
	return 80, 24
}

// rows is how many terminal rows a line takes at width w (an estimate: one
// column a rune).
func rows(line string, w int) int {
	n := visibleCells(line) // wide runes take two columns, colour codes none
	if n == 0 || w <= 0 {
		return 1
	}
	return (n + w - 1) / w
}

// wrapLines is label followed by text, broken at spaces into lines that
// fit cols columns, the lines after the first starting with indent
// instead (label and indent are as wide). A word longer than a line is
// left whole, for the terminal to wrap.
func wrapLines(label, indent, text string, cols int) []string {
	room := cols - cells(label)
	if room < 20 {
		return []string{label + text}
	}
	var out []string
	line, used := label, 0
	for _, word := range strings.Fields(text) {
		n := cells(word)
		if used > 0 && used+1+n > room {
			out = append(out, line)
			line, used = indent, 0
		}
		if used > 0 {
			line += " "
			used++
		}
		line += word
		used += n
	}
	return append(out, line)
}

// cells is how many terminal columns s takes: two for a wide (East Asian)
// rune, one for any other.
func cells(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

// renderBlock draws the question; lines end in \r\n since the terminal is
// raw.
func (r *run) renderBlock() string {
	p := r.cur
	q := p.Question
	level := q.Decision.RiskAtDecision
	var lines []string
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }

	head := "approval needed"
	if n := len(r.queue); n > 0 {
		head += fmt.Sprintf(" (%d more waiting)", n)
	}
	add("%s", r.paint(bold, "╭─ "+head))
	add("│ tool     %s", r.paint(bold, clean(q.Tool.Name)))
	add("│ risk     %s %s", r.paint(riskColour[level], " "+strings.ToUpper(level.String())+" "), words[level])
	w, _ := r.screen()
	lines = append(lines, wrapLines("│ reason   ", "│          ", cleanProse(q.Decision.Reason), w)...)
	e, isEdit := editFor(q.Tool.Name, q.Args, r.opts.Dir, r.opts.ReadFile)
	if isEdit {
		if path, ok := argString(q.Args, "path"); ok {
			add("│ file     %s", r.paint(bold, clean(path)))
		}
		add("│ change   %s", clean(e.summary))
	} else {
		// Args longer than maxArgsLines are cut, and v pages through the
		// rest, as through a long diff: no part of what will run is out of
		// reach before the answer.
		all := prettyArgs(q.Args)
		for i, l := range all {
			label := "│ args     "
			if i > 0 {
				label = "│          "
			}
			all[i] = label + l
		}
		if len(all) > maxArgsLines {
			p.diff, p.shown = all, maxArgsLines-1
			lines = append(lines, all[:p.shown]...)
			lines = append(lines, r.moreLine())
		} else {
			lines = append(lines, all...)
		}
	}
	if len(q.Decision.Findings) > 0 {
		add("│ findings")
		for _, f := range q.Decision.Findings {
			line := fmt.Sprintf("│   %s %s %s: %s", r.paint(riskColour[f.Risk], f.Risk.String()), clean(f.Arg),
				r.paint(bold, quoteText(f.Text)), cleanProse(f.Why))
			if visibleCells(line) <= w-1 {
				lines = append(lines, line)
				continue
			}
			// Too wide: broken at words with an indent, as the reason is,
			// the risk still in its colour; the terminal never breaks it.
			plain := fmt.Sprintf("%s %s %s: %s", f.Risk.String(), clean(f.Arg), quoteText(f.Text), cleanProse(f.Why))
			wrapped := wrapLines("│   ", "│     ", plain, w)
			wrapped[0] = strings.Replace(wrapped[0], f.Risk.String(), r.paint(riskColour[f.Risk], f.Risk.String()), 1)
			lines = append(lines, wrapped...)
		}
	}
	var tail []string
	for _, l := range ruleLines(q) {
		tail = append(tail, wrapLines("│ ", "│   ", l, w)...)
	}
	tail = append(tail, r.optionsLines()...)
	if isEdit {
		// The diff goes between the head and the rules, cut so that the
		// whole question and its status line fit the screen.
		p.diff = make([]string, len(e.lines))
		for i, l := range e.lines {
			p.diff[i] = "│ " + r.paintDiff(l)
		}
		_, h := r.screen()
		budget := h - 1 // the status line
		for _, l := range lines {
			budget -= rows(l, w)
		}
		for _, l := range tail {
			budget -= rows(l, w)
		}
		budget = max(budget, 3)
		n := 0
		for n < len(p.diff) && budget-rows(p.diff[n], w) >= 1 {
			budget -= rows(p.diff[n], w)
			n++
		}
		if n == len(p.diff)-1 && rows(p.diff[n], w) <= budget+1 {
			n++ // the last line fits where the note would go
		}
		p.shown = n
		lines = append(lines, p.diff[:n]...)
		if n < len(p.diff) {
			lines = append(lines, r.moreLine())
		}
	}
	lines = append(lines, tail...)
	p.drawnW, p.drawnH = r.screen()
	return strings.Join(lines, "\r\n") + "\r\n"
}

// optionsLines end the question: the keys and what they do, broken
// between options into lines that fit the terminal's width, so that the
// terminal never breaks one in the middle of a word.
func (r *run) optionsLines() []string {
	p := r.cur
	type entry struct{ text, plain string }
	var opts []entry
	for _, k := range keys {
		if slices.Contains(p.Options, k.option) {
			label := k.label
			if k.option == executor.OptionAllowOnce {
				label = labelAllowOnce
				if p.Destructive() {
					label = labelAllowOnceDestructive
				}
			}
			key := "[" + string(k.key) + "]"
			opts = append(opts, entry{r.paint(bold, key) + " " + label, key + " " + label})
		}
	}
	if p.Destructive() {
		keys, verb := "o", " then needs typing "
		if slices.Contains(p.Options, executor.OptionAllowUnsandboxed) {
			keys, verb = "o and u", " then need typing "
		}
		note := "(" + keys + verb + quoteText(ConfirmWord) + ")"
		opts = append(opts, entry{"(" + r.paint(bold, keys) + verb + quoteText(ConfirmWord) + ")", note})
	}
	w, _ := r.screen()
	const first, indent, gap = "╰─ ", "   ", "  "
	var lines []string
	line, used := first, 0
	for _, o := range opts {
		n := cells(o.plain)
		if used > 0 && cells(first)+used+len(gap)+n > w-1 {
			lines = append(lines, line)
			line, used = indent, 0
		}
		if used > 0 {
			line += gap
			used += len(gap)
		}
		line += o.text
		used += n
	}
	return append(lines, line)
}

// moreLine says how much of the diff is not shown, and how to see it.
func (r *run) moreLine() string {
	p := r.cur
	return "│ " + r.paint(dim, fmt.Sprintf("… %d more lines of %d: press %c to see them", len(p.diff)-p.shown, len(p.diff), pageKey))
}

func (r *run) paintDiff(l diffLine) string {
	t := clean(l.text)
	switch l.kind {
	case '+':
		return r.paint(green, t)
	case '-':
		return r.paint(red, t)
	case '@':
		return r.paint(cyan, t)
	case 'h':
		return r.paint(bold, t)
	}
	return t
}

// page shows the next screenful of a cut diff, then the options again.
func (r *run) page() {
	p := r.cur
	if p.shown >= len(p.diff) {
		if p.diff == nil {
			p.message = fmt.Sprintf("%q shows the rest of a long diff or args; this question is shown whole", string(pageKey))
		} else {
			p.message = "all of it is shown"
		}
		r.drawStatus()
		return
	}
	w, h := r.screen()
	budget := max(h-3, 3) // the more line, the options and the status
	var lines []string
	for p.shown < len(p.diff) && (budget-rows(p.diff[p.shown], w) >= 0 || len(lines) == 0) {
		budget -= rows(p.diff[p.shown], w)
		lines = append(lines, p.diff[p.shown])
		p.shown++
	}
	if p.shown < len(p.diff) {
		lines = append(lines, r.moreLine())
	}
	lines = append(lines, r.optionsLines()...)
	r.write("\r\x1b[2K" + strings.Join(lines, "\r\n") + "\r\n")
	r.drawStatus()
}

// prettyArgs indents the args, capped at maxArgsLines lines.
func prettyArgs(raw json.RawMessage) []string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return []string{clean(string(raw))}
	}
	lines := strings.Split(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	return lines
}

// drawStatus redraws the status line under the question: seconds left,
// what to press, and what has been typed.
func (r *run) drawStatus() {
	p := r.cur
	if p == nil || p.answered {
		return
	}
	count := r.paint(dim, "no time limit") // the ask has no deadline
	if !p.Deadline.IsZero() {
		left := time.Until(p.Deadline)
		if left <= 0 {
			return // the broker's timeout is about to be announced
		}
		secs := int(math.Ceil(left.Seconds()))
		count = fmt.Sprintf("%2ds left", secs)
		switch {
		case secs <= 5:
			count = r.paint(red, count)
		case secs <= 10:
			count = r.paint(yellow, count)
		default:
			count = r.paint(dim, count)
		}
	}
	w, _ := r.screen()
	var s string
	if p.confirming {
		// What is typed must stay in sight: a narrow terminal gets the
		// short form, and then only the end of a long input.
		typed := clean(string(p.typed))
		s = fmt.Sprintf("  %s · type %s and Enter to run it, anything else denies: %s", count, quoteText(ConfirmWord), typed)
		if visibleCells(s) > w-1 {
			head := fmt.Sprintf("  %s · %s, Enter (else deny): ", count, quoteText(ConfirmWord))
			room := max(w-1-visibleCells(head), 4)
			for cells(typed) > room {
				_, size := utf8.DecodeRuneInString(typed)
				typed = typed[size:]
			}
			s = head + typed
		}
	} else {
		// A hint stands instead of "press a key", so that the line fits
		// 80 columns (a line too wide is cut, below).
		switch {
		case p.message != "":
			s = "  " + count + " · " + p.message
		case p.shown < len(p.diff):
			s = "  " + count + fmt.Sprintf(" · press a key (%c: see the rest)", pageKey)
		default:
			s = "  " + count + " · press a key"
		}
	}
	r.write("\r\x1b[2K" + fitCells(s, w-1))
}

// visibleCells is how many columns s takes on the terminal, its SGR
// colour sequences taking none.
func visibleCells(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := strings.IndexByte(s[i:], 'm')
			if j < 0 {
				break
			}
			i += j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += cells(string(r))
		i += size
	}
	return n
}

// fitCells cuts s, which may hold SGR colour sequences, to at most max
// terminal columns, ending it with … when it was cut: a status line that
// wrapped would leave a row behind each time it is drawn again.
func fitCells(s string, max int) string {
	if max < 1 {
		max = 1
	}
	if visibleCells(s) <= max {
		return s
	}
	var b strings.Builder
	used, painted := 0, false
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := strings.IndexByte(s[i:], 'm')
			if j < 0 {
				break
			}
			b.WriteString(s[i : i+j+1])
			painted = true
			i += j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n := cells(string(r))
		if used+n > max-1 {
			break
		}
		b.WriteRune(r)
		used += n
		i += size
	}
	if painted {
		b.WriteString("\x1b[0m")
	}
	b.WriteString("…")
	return b.String()
}

// resizeSettle is how long the terminal's size must hold still before a
// question is drawn again: dragging a window's edge sends many SIGWINCHes.
const resizeSettle = 150 * time.Millisecond

// resized notes a change of the terminal's size: the question shown, if
// any, is drawn again once the size settles.
func (r *run) resized() {
	if r.cur == nil || r.cur.answered || !r.opts.IsTTY {
		return
	}
	if r.settle == nil {
		r.settle = time.NewTimer(resizeSettle)
		return
	}
	r.settle.Reset(resizeSettle)
}

func (r *run) settled() <-chan time.Time {
	if r.settle == nil {
		return nil
	}
	return r.settle.C
}

// redraw draws the question shown again, whole, at the terminal's new
// size, below what the terminal made of the old one (which it may have
// cut or rewrapped, and which cannot be found again to be erased). The
// answer so far (a confirmation being typed) is kept; keys are not
// guarded again, since the question is the same one.
func (r *run) redraw() {
	r.settle = nil
	p := r.cur
	if p == nil || p.answered {
		return
	}
	if w, h := r.screen(); w == p.drawnW && h == p.drawnH {
		return
	}
	r.write("\r\x1b[2K" + r.paint(dim, "(the terminal was resized: the question again)") + "\r\n" + r.renderBlock())
	r.drawStatus()
}

// escState skips terminal escape sequences (arrow keys, function keys), so
// that their final letters are never taken for answers.
type escState int

const (
	escNone escState = iota
	escStart
	escCSI
	escSS3
)

// step advances the escape state by one byte and reports whether the byte
// belongs to an escape sequence.
func (e escState) step(b byte) (escState, bool) {
	switch e {
	case escStart:
		switch b {
		case '[':
			return escCSI, true
		case 'O':
			return escSS3, true
		}
		return escNone, true
	case escCSI:
		if b >= 0x40 && b <= 0x7e {
			return escNone, true
		}
		return escCSI, true
	case escSS3:
		return escNone, true
	}
	if b == 0x1b {
		return escStart, true
	}
	return escNone, false
}

// pasted reports whether a chunk of input is pasted text rather than a key
// pressed (more than one key in one read, not counting escape sequences,
// Enter and Ctrl-C), and if so ignores it, but for a Ctrl-C in it. Pasted
// text never answers a question; while a confirmation is typed it is
// taken as typed.
func (r *run) pasted(data []byte) bool {
	p := r.cur
	if p == nil || p.answered || p.confirming {
		return false
	}
	n, st := 0, r.esc
	ctrlC, newline := false, false
	for _, b := range data {
		var inEsc bool
		st, inEsc = st.step(b)
		switch {
		case inEsc:
		case b == '\r', b == '\n':
			newline = true
		case b == 0x03:
			ctrlC = true
		default:
			n++
		}
	}
	// A key and a line end in one read ("o\n") were pasted, not
	// pressed: a person's key and Enter arrive apart.
	if n == 0 || n == 1 && !newline {
		return false
	}
	r.esc = st
	if ctrlC {
		r.key(0x03)
		return true
	}
	p.message = "pasted text is not an answer: press one key"
	r.drawStatus()
	return true
}

func (r *run) key(b byte) {
	var inEsc bool
	if r.esc, inEsc = r.esc.step(b); inEsc {
		return
	}
	p := r.cur
	if p == nil || p.answered {
		return
	}
	if b == 0x03 { // Ctrl-C, in the key guard too: it only denies
		r.deny(event.ActorUser, ReasonInterrupted)
		if r.opts.Interrupt != nil {
			r.opts.Interrupt()
		}
		return
	}
	if time.Since(p.shownAt) < r.keyGuard() {
		if !p.ignored {
			p.ignored = true
			p.message = "keys typed before the question appeared were ignored"
			r.drawStatus()
		}
		return
	}
	if b == 0x04 { // Ctrl-D
		r.deny(event.ActorUser, ReasonEndOfInput)
		return
	}
	if p.confirming {
		r.confirmKey(b)
		return
	}
	p.message = ""
	k := byte(unicode.ToLower(rune(b)))
	if k == pageKey {
		r.page()
		return
	}
	for _, kk := range keys {
		if kk.key != k {
			continue
		}
		switch {
		case !slices.Contains(p.Options, kk.option):
			p.message = fmt.Sprintf("%q (%s) is not offered for this call", string(k), kk.label)
		case approval.NeedsConfirm(p.Pending, kk.option):
			p.confirming, p.confirmed = true, kk.option
		default:
			r.answer(kk.option)
			return
		}
		r.drawStatus()
		return
	}
}

// confirmKey edits the typed confirmation; Enter decides. Only ASCII can be
// typed: any other byte shows as U+FFFD and never matches.
func (r *run) confirmKey(b byte) {
	p := r.cur
	switch {
	case b == '\r' || b == '\n':
		if approval.Confirmed(string(p.typed)) {
			r.answer(p.confirmed)
		} else {
			r.deny(event.ActorUser, ReasonNotConfirmed)
		}
		return
	case b == 0x7f || b == 0x08:
		if len(p.typed) > 0 {
			p.typed = p.typed[:len(p.typed)-1]
		}
	case b >= 0x20 && b < 0x7f && len(p.typed) < 64:
		p.typed = append(p.typed, rune(b))
	case b >= 0x80 && len(p.typed) < 64:
		p.typed = append(p.typed, utf8.RuneError)
	}
	r.drawStatus()
}
