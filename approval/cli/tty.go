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
	{'d', executor.OptionDeny, "deny"},
}

func (r *run) paint(code, s string) string {
	if r.opts.NoColor {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (r *run) startInteractive() {
	if r.opts.MakeRaw != nil {
		restore, err := r.opts.MakeRaw()
		if err != nil {
			r.write("approval: cannot read single keys (" + clean(err.Error()) + "); type the key and press Enter\n")
		} else {
			r.restore = restore
		}
	}
	r.write(r.renderBlock())
	r.ticker = time.NewTicker(time.Second)
	r.drawStatus()
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
	add("│ reason   %s", clean(q.Decision.Reason))
	for i, l := range prettyArgs(q.Args) {
		label := "│ args     "
		if i > 0 {
			label = "│          "
		}
		add("%s%s", label, l)
	}
	if len(q.Decision.Findings) > 0 {
		add("│ findings")
		for _, f := range q.Decision.Findings {
			add("│   %s %s %s: %s", r.paint(riskColour[f.Risk], f.Risk.String()), clean(f.Arg),
				r.paint(bold, quoteText(f.Text)), clean(f.Why))
		}
	}
	for _, l := range ruleLines(q) {
		add("│ %s", l)
	}
	var opts []string
	for _, k := range keys {
		if slices.Contains(p.Options, k.option) {
			opts = append(opts, r.paint(bold, "["+string(k.key)+"]")+" "+k.label)
		}
	}
	line := "╰─ " + strings.Join(opts, "  ")
	if p.Destructive() {
		line += "  (" + r.paint(bold, "o") + " then needs typing " + quoteList(confirmWords(q.Args)) + ")"
	}
	add("%s", line)
	return strings.Join(lines, "\r\n") + "\r\n"
}

// prettyArgs indents the args, capped at maxArgsLines lines.
func prettyArgs(raw json.RawMessage) []string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return []string{clean(string(raw))}
	}
	lines := strings.Split(buf.String(), "\n")
	if len(lines) > maxArgsLines {
		more := len(lines) - maxArgsLines + 1
		lines = append(lines[:maxArgsLines-1], fmt.Sprintf("… %d more lines", more))
	}
	for i, l := range lines {
		lines[i] = clean(l)
	}
	return lines
}

func quoteList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = quoteText(w)
	}
	return strings.Join(q, " or ")
}

// drawStatus redraws the status line under the question: seconds left,
// what to press, and what has been typed.
func (r *run) drawStatus() {
	p := r.cur
	if p == nil || p.answered {
		return
	}
	left := time.Until(p.Deadline)
	if left <= 0 {
		return // the broker's timeout is about to be announced
	}
	secs := int(math.Ceil(left.Seconds()))
	count := fmt.Sprintf("%2ds left", secs)
	switch {
	case secs <= 5:
		count = r.paint(red, count)
	case secs <= 10:
		count = r.paint(yellow, count)
	default:
		count = r.paint(dim, count)
	}
	var s string
	if p.confirming {
		s = fmt.Sprintf("  %s · type %s and Enter to run it, anything else denies: %s",
			count, quoteList(confirmWords(p.Question.Args)), clean(string(p.typed)))
	} else {
		s = "  " + count + " · press a key"
		if p.message != "" {
			s += " · " + p.message
		}
	}
	r.write("\r\x1b[2K" + s)
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

func (r *run) key(b byte) {
	switch r.esc {
	case escStart:
		switch b {
		case '[':
			r.esc = escCSI
		case 'O':
			r.esc = escSS3
		default:
			r.esc = escNone
		}
		return
	case escCSI:
		if b >= 0x40 && b <= 0x7e {
			r.esc = escNone
		}
		return
	case escSS3:
		r.esc = escNone
		return
	}
	if b == 0x1b {
		r.esc = escStart
		return
	}
	p := r.cur
	if p == nil || p.answered {
		return
	}
	if b == 0x03 || b == 0x04 { // Ctrl-C, Ctrl-D
		r.deny(event.ActorUser, ReasonInterrupted)
		if b == 0x03 && r.opts.Interrupt != nil {
			r.opts.Interrupt()
		}
		return
	}
	if p.confirming {
		r.confirmKey(b)
		return
	}
	p.message = ""
	k := byte(unicode.ToLower(rune(b)))
	for _, kk := range keys {
		if kk.key != k {
			continue
		}
		switch {
		case !slices.Contains(p.Options, kk.option):
			p.message = fmt.Sprintf("%q (%s) is not offered for this call", string(k), kk.label)
		case kk.option == executor.OptionAllowOnce && p.Destructive():
			p.confirming = true
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
		typed := strings.TrimSpace(string(p.typed))
		if slices.Contains(confirmWords(p.Question.Args), typed) {
			r.answer(executor.OptionAllowOnce)
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
