// Package cli is the terminal approval UI: it shows each ask of an
// approval.Broker to the person at the terminal and sends back their answer.
//
// With a TTY it draws the tool, the masked args (an edit as a coloured
// diff, cut to fit the screen: v pages through all of it), the risk in its
// own colour and words, the reason and the findings, reads single keys in
// raw mode
//
//	[o] allow once (and identical calls again in this session)  [s] allow for this session  [p] always allow in this project  [d] deny
//
// and counts down the seconds left. A destructive call offers only [o] and
// [d], and [o] must be confirmed by typing the word confirm and Enter; its
// allow once is asked again every time. Keys typed before a question is
// drawn never answer it: the terminal's input queue is flushed when it is
// drawn and keys are ignored for a moment after (Options.KeyGuard); pasted
// text is not an answer. Ctrl-C and Ctrl-D deny. Long lines (the reason,
// the rules, the options) are broken inside the box at the terminal's
// width; when the terminal is resized the question is drawn again at the
// new width, and the status line is cut to fit, never wrapped.
//
// Without a TTY it reads one answer per line: allow_once, allow_session,
// allow_project or deny; a destructive call needs a second line, confirm, to
// be allowed (anything else denies). End of input denies at once, with reason
// "approval input closed", this ask and every later one.
//
// Prompts go to the output writer (the terminal, /dev/tty, for NewStdio
// when there is one; else stderr), never to stdout, which belongs to --json
// output. Every text from the model, a tool or the repository is shown
// masked of secrets and with control characters escaped (termtext).
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/secrets"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// Reasons the terminal UI gives when it denies on its own.
const (
	ReasonInputClosed  = "approval input closed"
	ReasonNotConfirmed = approval.ReasonNotConfirmed
	ReasonInterrupted  = "user pressed Ctrl-C"
	// ReasonEndOfInput is a Ctrl-D pressed at a question.
	ReasonEndOfInput = "end of input at the question (Ctrl-D)"
	// ConfirmWord confirms a destructive allow once, the same on a TTY
	// (typed, then Enter) and without one (a line of its own).
	ConfirmWord = approval.ConfirmWord
	// DefaultKeyGuard is how long keys are ignored after a question is
	// drawn on a TTY, so that keys typed for something else never answer
	// it.
	DefaultKeyGuard = 300 * time.Millisecond
)

// Options configure a UI. The zero value is the line protocol with no
// colours.
type Options struct {
	// IsTTY selects the interactive UI: single keys, colours and a
	// countdown. False selects the line protocol.
	IsTTY bool
	// NoColor turns colours off in the interactive UI (NO_COLOR).
	NoColor bool
	// MakeRaw puts the terminal in raw mode while a question is shown and
	// returns the function that restores it. Nil leaves the input as it
	// is: keys then arrive when Enter is pressed, which still works.
	MakeRaw func() (restore func(), err error)
	// Interrupt is called when Ctrl-C is pressed while a question is
	// shown: in raw mode the terminal sends no SIGINT, so the caller may
	// want to cancel the turn. The ask is denied either way.
	Interrupt func()
	// Flush discards the terminal's pending input (tcflush TCIFLUSH); it
	// is called in interactive mode when a question is drawn, after
	// MakeRaw. Nil flushes nothing.
	Flush func() error
	// KeyGuard is how long keys are ignored after a question is drawn in
	// interactive mode (Ctrl-C still denies): zero means DefaultKeyGuard,
	// a negative value none.
	KeyGuard time.Duration
	// Size returns the terminal's width and height, to cut a long diff to
	// fit. Nil, or an error, means 80×24.
	Size func() (width, height int, err error)
	// Dir is the session's directory: a write_file question diffs the
	// file there (a relative path) against the new content. Empty: only
	// an absolute path is read.
	Dir string
	// ReadFile reads a file's current content for a write_file diff; nil
	// means ReadCurrentFile (regular files only, bounded).
	ReadFile func(name string) ([]byte, error)
	// Resized, when not nil, receives a value each time the terminal's
	// size changes (SIGWINCH): the question shown is then drawn again at
	// the new size (Size), once the size has held still for a moment.
	Resized <-chan struct{}
}

// UI shows a broker's asks on one terminal, one at a time, oldest first.
// Its methods are not safe for concurrent use; Run is called once.
type UI struct {
	b     *approval.Broker
	in    io.Reader
	out   io.Writer
	opts  Options
	close func() // closes out when the UI opened it
}

// New returns a UI reading answers from in and writing prompts to out.
// opts may be nil; it is copied.
func New(b *approval.Broker, in io.Reader, out io.Writer, opts *Options) *UI {
	u := &UI{b: b, in: in, out: out}
	if opts != nil {
		u.opts = *opts
	}
	if u.opts.ReadFile == nil {
		u.opts.ReadFile = ReadCurrentFile
	}
	return u
}

// SetDir sets Options.Dir: the session's directory, where a write_file
// question reads the file it diffs against.
func (u *UI) SetDir(dir string) { u.opts.Dir = dir }

// NewStdio returns a UI for the person at the process's terminal. When stdin
// is a terminal it is interactive: keys are read from stdin (raw mode,
// restored after each question and on SIGINT, SIGTERM, SIGHUP or SIGQUIT)
// and questions are written to the controlling terminal, /dev/tty, so they
// are seen even when stderr is redirected (stderr itself when /dev/tty
// cannot be opened). Otherwise it is the line protocol on stdin, with
// prompts on stderr. It honours NO_COLOR and TERM=dumb. Relative write_file
// paths are not read until SetDir names the session's directory.
//
// interrupt, when not nil, is called when Ctrl-C is pressed at a question:
// raw mode swallows the SIGINT that would otherwise cancel the turn, so the
// caller passes the turn's cancel function.
func NewStdio(b *approval.Broker, interrupt func()) *UI {
	inFD, errFD := int(os.Stdin.Fd()), int(os.Stderr.Fd())
	opts := Options{
		NoColor:   os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb",
		Interrupt: interrupt,
	}
	var out io.Writer = os.Stderr
	var closeOut func()
	if term.IsTerminal(inFD) {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			out, opts.IsTTY = tty, true
			closeOut = func() { _ = tty.Close() }
			errFD = int(tty.Fd())
		} else {
			opts.IsTTY = term.IsTerminal(errFD)
		}
	}
	if opts.IsTTY {
		opts.MakeRaw = rawMode(inFD)
		opts.Flush = func() error { return flushInput(inFD) }
		opts.Size = func() (int, int, error) { return term.GetSize(errFD) }
		opts.Resized = notifyResize()
	}
	u := New(b, os.Stdin, out, &opts)
	u.close = closeOut
	return u
}

// Run shows asks until ctx ends, then returns nil. It reads the input
// from a goroutine of its own, which stays blocked in Read after Run
// returns if the reader cannot be interrupted (as with os.Stdin), and ends
// once that Read returns.
//
// In interactive mode, keys typed while no question is shown are dropped,
// so that a key pressed in passing never answers a question nobody read.
// The line protocol keeps lines typed ahead: they answer the asks in order.
func (u *UI) Run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if u.close != nil {
		defer u.close()
	}
	notes := u.b.Subscribe(ctx)
	inputs := make(chan chunk)
	go read(ctx, u.in, inputs)

	r := &run{UI: u}
	defer r.endPrompt()
	for {
		r.next()
		select {
		case <-ctx.Done():
			return nil
		case n, ok := <-notes:
			if !ok {
				return nil
			}
			r.notice(n)
		case c := <-r.inputs(inputs):
			r.input(c)
		case <-r.tick():
			r.drawStatus()
		case <-u.opts.Resized:
			r.resized()
		case <-r.settled():
			r.redraw()
		}
	}
}

// chunk is what one Read returned.
type chunk struct {
	data []byte
	err  error
}

func read(ctx context.Context, in io.Reader, out chan<- chunk) {
	buf := make([]byte, 512)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			select {
			case out <- chunk{data: slices.Clone(buf[:n])}:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			select {
			case out <- chunk{err: err}:
			case <-ctx.Done():
			}
			return
		}
	}
}

// run is the state of one Run.
type run struct {
	*UI
	queue  []approval.Pending // asks not shown yet
	cur    *prompt            // the ask shown, nil if none
	closed error              // the input ended (io.EOF or a read error)

	// Line protocol.
	partial []byte
	lines   []string

	// Interactive.
	esc     escState
	ticker  *time.Ticker
	restore func()
	warned  bool        // said once that single keys cannot be read
	settle  *time.Timer // fires once a resize has settled; nil when none is pending
}

type prompt struct {
	approval.Pending
	answered   bool   // this UI answered; waiting for the broker's notice
	confirming bool   // allow once (or without the sandbox) was chosen for a destructive call
	confirmed  string // the option the confirmation answers
	typed      []rune // the confirmation typed so far
	message    string // a one-off hint shown in the status line

	shownAt time.Time // when the question was drawn (interactive)
	ignored bool      // keys arrived within the key guard and were dropped
	diff    []string  // the edit's diff lines as drawn, painted
	shown   int       // how many of diff are on the screen
	// drawnW and drawnH are the terminal's size the question was last
	// drawn for.
	drawnW, drawnH int
	// told: the broker waits for endPrompt to say the outcome is shown
	// (Broker.Showing).
	told bool
}

func (r *run) inputs(ch chan chunk) <-chan chunk {
	if r.closed != nil {
		return nil
	}
	return ch
}

func (r *run) tick() <-chan time.Time {
	if r.ticker == nil {
		return nil
	}
	return r.ticker.C
}

func (r *run) notice(n approval.Notice) {
	switch n.Kind {
	case approval.NoticeAsked:
		r.queue = append(r.queue, n.Pending)
	case approval.NoticeResolved:
		if r.cur != nil && r.cur.ID == n.Pending.ID {
			r.outcome(n.Answer)
			r.endPrompt()
			return
		}
		r.queue = slices.DeleteFunc(r.queue, func(p approval.Pending) bool { return p.ID == n.Pending.ID })
	}
}

// next shows the oldest queued ask if none is shown.
func (r *run) next() {
	if r.cur != nil || len(r.queue) == 0 {
		return
	}
	r.cur = &prompt{Pending: r.queue[0]}
	r.queue = r.queue[1:]
	// The call waits for this UI to show how its ask ended (endPrompt).
	r.cur.told = r.b.Showing(r.cur.ID)
	if r.opts.IsTTY {
		r.startInteractive()
	} else {
		r.write(r.renderPlain())
		r.consumeLines()
	}
	if r.closed != nil && !r.cur.answered {
		r.deny(event.ActorSystem, r.closedReason())
	}
}

func (r *run) closedReason() string {
	if errors.Is(r.closed, io.EOF) {
		return ReasonInputClosed
	}
	return ReasonInputClosed + ": " + clean(r.closed.Error())
}

func (r *run) endPrompt() {
	if r.ticker != nil {
		r.ticker.Stop()
		r.ticker = nil
	}
	if r.restore != nil {
		r.restore()
		r.restore = nil
	}
	// The outcome is on the screen and the terminal as it was: the call
	// may go on (and print).
	if r.cur != nil && r.cur.told {
		r.b.Shown(r.cur.ID)
	}
	r.cur = nil
}

func (r *run) input(c chunk) {
	if c.err != nil {
		r.closed = c.err
		if !r.opts.IsTTY && len(r.partial) > 0 {
			r.lines = append(r.lines, string(r.partial))
			r.partial = nil
			r.consumeLines()
		}
		if r.cur != nil && !r.cur.answered {
			r.deny(event.ActorSystem, r.closedReason())
		}
		return
	}
	if r.opts.IsTTY {
		if r.pasted(c.data) {
			return
		}
		for _, b := range c.data {
			r.key(b)
		}
		return
	}
	r.partial = append(r.partial, c.data...)
	for {
		i := slices.Index(r.partial, '\n')
		if i < 0 {
			break
		}
		r.lines = append(r.lines, strings.TrimSuffix(string(r.partial[:i]), "\r"))
		r.partial = r.partial[i+1:]
	}
	r.consumeLines()
}

// answer sends option to the broker. Losing to another answer is not an
// error here: the broker's notice tells how the ask ended.
func (r *run) answer(option string) {
	r.cur.answered = true
	if err := r.b.AnswerVia(r.cur.ID, option, event.ActorUser, r.uiName()); err != nil && !errors.Is(err, approval.ErrAlreadyAnswered) {
		r.cur.answered = false
		r.hint(err.Error())
	}
}

func (r *run) deny(actor event.Actor, reason string) {
	r.cur.answered = true
	ui := r.uiName()
	if actor != event.ActorUser {
		ui = "" // the input ended: nobody answered here
	}
	if err := r.b.DenyVia(r.cur.ID, actor, ui, reason); err != nil && !errors.Is(err, approval.ErrAlreadyAnswered) {
		r.hint(err.Error())
	}
}

// The names this UI gives itself in permission.resolved's ui.
const (
	UITerminal = "terminal" // the interactive UI, single keys on a TTY
	UIStdin    = "stdin"    // the line protocol
)

func (r *run) uiName() string {
	if r.opts.IsTTY {
		return UITerminal
	}
	return UIStdin
}

func (r *run) hint(msg string) {
	if r.opts.IsTTY {
		r.cur.message = msg
		r.drawStatus()
		return
	}
	r.write(msg + "\n")
}

func (r *run) write(s string) {
	// A failing terminal cannot be told so; the ask then times out.
	_, _ = io.WriteString(r.out, s)
}

// --- line protocol ---

func (r *run) consumeLines() {
	for r.cur != nil && !r.cur.answered && len(r.lines) > 0 {
		line := strings.TrimSpace(r.lines[0])
		r.lines = r.lines[1:]
		r.line(line)
	}
}

func (r *run) line(word string) {
	p := r.cur
	if p.confirming {
		if approval.Confirmed(word) {
			r.answer(p.confirmed)
		} else {
			r.deny(event.ActorUser, ReasonNotConfirmed)
		}
		return
	}
	switch {
	case slices.Contains(p.Options, word):
		if approval.NeedsConfirm(p.Pending, word) {
			p.confirming, p.confirmed = true, word
			r.write("this call is destructive: type " + ConfirmWord + " to allow it; any other line denies\n")
			return
		}
		r.answer(word)
	case slices.Contains(allOptions, word):
		r.write(fmt.Sprintf("%s is not offered for this call; answer one of: %s\n", word, strings.Join(p.Options, ", ")))
	default:
		r.write(fmt.Sprintf("unknown answer %q; answer one of: %s\n", clean(word), strings.Join(p.Options, ", ")))
	}
}

var allOptions = []string{executor.OptionAllowOnce, executor.OptionAllowSession, executor.OptionAllowProject, executor.OptionAllowUnsandboxed, executor.OptionDeny}

// unsandboxedHelp says what running a call without the sandbox means.
const unsandboxedHelp = "runs this one call outside the sandbox, with every right you have (your secrets, any file, the network); it is never remembered"

func (r *run) renderPlain() string {
	p := r.cur
	q := p.Question
	var b strings.Builder
	level := q.Decision.RiskAtDecision
	fmt.Fprintf(&b, "approval needed: %s (risk: %s, %s)\n", clean(q.Tool.Name), level, words[level])
	fmt.Fprintf(&b, "  reason: %s\n", cleanProse(q.Decision.Reason))
	if e, ok := editFor(q.Tool.Name, q.Args, r.opts.Dir, r.opts.ReadFile); ok {
		if path, ok := argString(q.Args, "path"); ok {
			fmt.Fprintf(&b, "  file: %s\n", clean(path))
		}
		fmt.Fprintf(&b, "  change: %s\n", clean(e.summary))
		for i, l := range e.lines {
			if i == maxPlainDiff {
				fmt.Fprintf(&b, "  | … %d more lines\n", len(e.lines)-i)
				break
			}
			fmt.Fprintf(&b, "  | %s\n", clean(l.text))
		}
	} else {
		fmt.Fprintf(&b, "  args: %s\n", clean(compact(q.Args)))
	}
	for _, f := range q.Decision.Findings {
		fmt.Fprintf(&b, "  finding: %s %s %s: %s\n", f.Risk, clean(f.Arg), quoteText(f.Text), cleanProse(f.Why))
	}
	for _, l := range ruleLines(q) {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if slices.Contains(p.Options, executor.OptionAllowOnce) {
		fmt.Fprintf(&b, "  %s %s\n", executor.OptionAllowOnce, allowOnceHelp(p))
	}
	if slices.Contains(p.Options, executor.OptionAllowUnsandboxed) {
		fmt.Fprintf(&b, "  %s %s\n", executor.OptionAllowUnsandboxed, unsandboxedHelp)
	}
	confirm := ""
	if p.Destructive() {
		confirm = " (allow_once then needs a line " + ConfirmWord + ")"
		if slices.Contains(p.Options, executor.OptionAllowUnsandboxed) {
			confirm = " (allow_once and allow_unsandboxed then need a line " + ConfirmWord + ")"
		}
	}
	limit := "; there is no time limit"
	if !p.Deadline.IsZero() {
		limit = fmt.Sprintf("; no answer in %ds denies", int(p.Deadline.Sub(p.Asked).Round(time.Second)/time.Second))
	}
	fmt.Fprintf(&b, "  answer with one line: %s%s%s\n", strings.Join(p.Options, " | "), confirm, limit)
	return b.String()
}

// allowOnceHelp says what allow once grants (DESIGN.md §6, prior approval):
// an identical call later in the session runs without asking, except a
// destructive one.
func allowOnceHelp(p *prompt) string {
	if p.Destructive() {
		return "allows this call once: a destructive call is asked again every time"
	}
	return "also allows identical calls (same args) again in this session without asking"
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func (r *run) outcome(a executor.Answer) {
	var msg string
	switch {
	case a.UI != "" && a.UI != UITerminal && a.UI != UIStdin && a.Allow:
		// Answered in another UI (the web, the editor): this question
		// closes with where and how.
		msg = fmt.Sprintf("answered in the %s UI: %s", clean(a.UI), strings.ReplaceAll(a.Option, "_", " "))
	case a.UI != "" && a.UI != UITerminal && a.UI != UIStdin:
		msg = fmt.Sprintf("answered in the %s UI: deny (%s)", clean(a.UI), clean(a.Reason))
	case a.Allow:
		msg = fmt.Sprintf("allowed (%s) by %s", a.Option, a.Actor)
	default:
		msg = fmt.Sprintf("denied by %s: %s", a.Actor, clean(a.Reason))
	}
	if !r.opts.IsTTY {
		r.write("approval: " + msg + "\n")
		return
	}
	c := green
	if !a.Allow {
		c = red
	}
	r.write("\r\x1b[2K" + r.paint(c, "→ "+msg) + "\r\n")
}

// --- helpers shared by both modes ---

// words say in a few words what a risk level means to the person.
var words = map[risk.Level]string{
	risk.Unknown:     "risk unknown, treated as destructive",
	risk.Read:        "only reads",
	risk.Write:       "changes files",
	risk.Execute:     "runs a program",
	risk.Network:     "talks to the network",
	risk.Credential:  "touches secrets",
	risk.Destructive: "cannot be undone",
}

// clean makes text from the model or the repository safe to print on one
// line of a terminal: anything that looks like a secret is masked (the
// executor has masked the question already; this is the second line), and
// control characters (escape sequences, CR, newline), C1 controls and bidi
// controls are shown escaped instead of acting on the terminal.
func clean(s string) string { return termtext.Line(secrets.Mask(s)) }

// cleanProse is clean for text written about the call (the reason, a
// finding's why): only what is a secret on its own is masked, so that a
// key name in it ("reads credentials: ~/.aws/credentials") does not hide
// the words after it.
func cleanProse(s string) string { return termtext.Line(secrets.MaskTokens(s)) }

// argString returns the string argument name of a call's args.
func argString(args json.RawMessage, name string) (string, bool) {
	var a map[string]any
	if json.Unmarshal(args, &a) != nil {
		return "", false
	}
	s, ok := a[name].(string)
	return s, ok
}

// quoteText quotes text from the call (a finding's slice of an argument)
// for printing, masked of secrets.
func quoteText(s string) string { return strconv.Quote(secrets.Mask(s)) }

// ruleLines describe the rules the session and project answers would make,
// so the person sees a rule before it is made (DESIGN.md §6), or why no
// rule is offered.
func ruleLines(q executor.Question) []string {
	var out []string
	if q.NoRuleReason != "" {
		out = append(out, clean(q.NoRuleReason))
	}
	if q.SessionRule != nil {
		line := executor.OptionAllowSession + " adds the session rule: " + clean(describeRule(*q.SessionRule))
		if q.SessionRule.Path != "" && q.Tool.PathsWrite || q.Tool.PatchArg != "" {
			// A write rule names one path; the mode is what covers
			// every edit inside the project.
			line += " (for every edit inside the project: /mode accept-edits, or --mode accept-edits)"
		}
		out = append(out, line)
	}
	if q.ProjectRule != nil {
		out = append(out, executor.OptionAllowProject+" writes to the project policy: "+clean(describeRule(*q.ProjectRule)))
	}
	return out
}

// describeRule says what a rule allows, in the words of its matcher.
func describeRule(r permission.Rule) string {
	if cmd, ok := permission.ExactCommand(r); ok {
		// The command matcher is only the start of the args matcher:
		// show the one command the rule allows.
		return r.Tool + " `" + cmd + "` (this exact command only) → " + string(r.Decision)
	}
	s := r.Tool
	switch {
	case r.Command != "":
		s += " `" + r.Command + "`"
	case r.Path != "":
		s += " on " + r.Path
	case r.URL != "":
		s += " to " + r.URL
	}
	for k, v := range r.Args {
		s += " " + k + "=" + v
	}
	return s + " → " + string(r.Decision)
}
