package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// renderer prints a turn's events for a person reading a terminal: the
// model's text as it streams, each tool call, its decision and its result.
type renderer struct {
	w       io.Writer
	midLine bool // the last thing printed was model text without a newline
	// status, on a terminal only, shows what is awaited while the model
	// has not begun answering or a tool runs; nil prints nothing.
	status *statusLine
	model  string // the model's name, for the status line
	// calls are the tool calls of the model's last response, id → tool:
	// with more than one, each result line names its call.
	calls     map[string]string
	callsDone bool // the model spoke since: the next call starts a new set
	// asked are the calls a person was asked about: the approval UI
	// printed how each ended, so on a terminal (where the question and
	// this output share the screen) it is not printed twice. Output to a
	// file or a pipe keeps it, so the transcript is whole.
	asked map[string]bool
	// sandboxes holds, by tool call, the words naming the sandbox it runs in.
	sandboxes map[string]string
	// onTerminal: the output is the person's screen (as when status is
	// set).
	onTerminal bool
	// cols is the terminal's width, nil or 0 when unknown or not a
	// terminal: every line but the model's streamed text is wrapped to it
	// at words (fitLine).
	cols func() int
}

// fitTo writes line to w wrapped as println does.
func (r *renderer) fitTo(w io.Writer, line, indent string) {
	cols := 0
	if r.cols != nil {
		cols = r.cols()
	}
	fmt.Fprint(w, fitLine(line, cols, indent))
}

// println prints one line, wrapped to the terminal's width at words, the
// lines after the first starting with indent.
func (r *renderer) println(line, indent string) { r.fitTo(r.w, line, indent) }

// Text from the model and the tools is printed with control characters
// escaped (termtext): it can neither set the title nor rewrite a line.

// label names a call's result when the model asked for several at once.
func (r *renderer) label(id string) string {
	if len(r.calls) < 2 {
		return ""
	}
	return termtext.Line(r.calls[id]) + " " + shortID(id) + ": "
}

// shortID is enough of a tool call id to tell the calls of one response
// apart: ids often share a long prefix, so its end.
func shortID(id string) string {
	if r := []rune(id); len(r) > 8 {
		id = string(r[len(r)-6:])
	}
	return "#" + termtext.Line(id)
}

func (r *renderer) newline() {
	if r.midLine {
		fmt.Fprintln(r.w)
		r.midLine = false
	}
}

func (r *renderer) event(e event.Event) {
	p, err := e.Decode()
	if err != nil {
		return
	}
	if r.status != nil {
		r.status.clear()
		defer r.setStatus(p)
	}
	switch p := p.(type) {
	case *event.ModelDeltaPayload:
		fmt.Fprint(r.w, termtext.Escape(p.Text))
		r.midLine = !strings.HasSuffix(p.Text, "\n")
		r.callsDone = true
	case *event.ModelToolCallRequestedPayload:
		r.newline()
		if r.calls == nil || r.callsDone {
			r.calls, r.callsDone = map[string]string{}, false
		}
		r.calls[p.ToolCallID] = p.Tool
		r.println(fmt.Sprintf("→ %s %s %s", termtext.Line(p.Tool), shortID(p.ToolCallID), clip(string(p.Args), 200)), "  ")
	case *event.ToolStartedPayload:
		if p.Sandbox != nil {
			if r.sandboxes == nil {
				r.sandboxes = map[string]string{}
			}
			r.sandboxes[p.ToolCallID] = p.Sandbox.Words()
		}
	case *event.PermissionRequestedPayload:
		if r.asked == nil {
			r.asked = map[string]bool{}
		}
		r.asked[p.ToolCallID] = true
	case *event.PermissionResolvedPayload:
		if r.asked[p.ToolCallID] && (r.onTerminal || r.status != nil) {
			break // the approval UI printed how the question ended
		}
		l := r.label(p.ToolCallID)
		switch {
		case p.Decision == "allow" && p.Actor == event.ActorUser:
			r.println(fmt.Sprintf("  %sallowed by you (%s) · risk %s", l, p.Option, p.RiskAtDecision), "    ")
		case p.Decision == "allow" && p.SourcedFrom == string(permission.FromOverride) && strings.HasPrefix(p.Reason, permission.BuiltinReasonPrefix):
			// A read-only command the built-in rules allowed: shown, so
			// the person sees what ran, but muted on a terminal.
			line := fmt.Sprintf("  %sallowed by the built-in rule · %s", l, termtext.Line(p.Reason))
			if r.onTerminal && os.Getenv("NO_COLOR") == "" {
				// Wrapped first, then each line muted: the colour
				// codes take no columns.
				var b strings.Builder
				r.fitTo(&b, line, "    ")
				for l := range strings.Lines(b.String()) {
					fmt.Fprint(r.w, "\x1b[2m"+strings.TrimSuffix(l, "\n")+"\x1b[0m\n")
				}
				break
			}
			r.println(line, "    ")
		case p.Decision == "allow":
			r.println(fmt.Sprintf("  %sallowed by %s · risk %s · %s", l, p.SourcedFrom, p.RiskAtDecision, termtext.Line(p.Reason)), "    ")
		default:
			r.println(fmt.Sprintf("  %sDENIED (%s) · risk %s · %s", l, p.Actor, p.RiskAtDecision, termtext.Line(p.Reason)), "    ")
		}
	case *event.ToolCompletedPayload:
		exit := ""
		if p.ExitCode != nil {
			exit = fmt.Sprintf("exit %d · ", *p.ExitCode)
		}
		confined := ""
		if w := r.sandboxes[p.ToolCallID]; w != "" {
			confined = " · " + w
		}
		r.println(fmt.Sprintf("  %s%s%d bytes of output · %dms%s", r.label(p.ToolCallID), exit, p.StdoutBytes+p.StderrBytes, p.DurationMs, confined), "    ")
		if p.SandboxHint != "" {
			r.println("  ! it failed on what may be the sandbox's refusal (custom-agent sandbox run -- … shows why; docs/sandbox.md)", "    ")
		}
		if t := p.Truncated; t != nil {
			r.println(fmt.Sprintf("  ! %d bytes of stdout and %d of stderr were not stored: over the output cap (--max-output-bytes)", t.Stdout, t.Stderr), "    ")
		}
		if in := p.Injection; in != nil {
			r.println("  ! the output holds text that tries to give instructions ("+strings.Join(in.Classes, ", ")+"): every call above read is asked for the rest of this session (docs/injection.md)", "    ")
		}
		lines := outputLines(p.StdoutPreview, p.StdoutTail, 6, 8)
		if p.StderrPreview != "" || p.StderrTail != nil {
			if len(lines) > 0 {
				lines = append(lines, "[stderr]")
			}
			lines = append(lines, outputLines(p.StderrPreview, p.StderrTail, 6, 8)...)
		}
		for _, line := range lines {
			r.println("  │ "+termtext.Line(line), "  │ ")
		}
	case *event.ToolFailedPayload:
		r.println(fmt.Sprintf("  %sfailed at %s: %s", r.label(p.ToolCallID), p.Stage, clip(p.Error, 400)), "    ")
		if in := p.Injection; in != nil {
			r.println("  ! the error holds text that tries to give instructions ("+strings.Join(in.Classes, ", ")+"): every call above read is asked for the rest of this session (docs/injection.md)", "    ")
		}
	case *event.SkillActivatedPayload:
		r.newline()
		narrows := "it narrows nothing: every tool is decided as before"
		switch {
		case len(p.AllowedTools) == 0:
			narrows = "no tool may run until the turn ends"
		case !slices.Contains(p.AllowedTools, "*"):
			narrows = "only " + strings.Join(p.AllowedTools, ", ") + " may run until the turn ends, each still decided as before"
		}
		r.println(fmt.Sprintf("◆ skill %s (%s) is active: %s", termtext.Line(p.Name), p.Source, termtext.Line(narrows)), "  ")
	case *event.SkillEndedPayload:
		r.newline()
		r.println(fmt.Sprintf("◆ skill %s ended: %s", termtext.Line(p.Name), termtext.Line(p.Reason)), "  ")
	case *event.ModeChangedPayload:
		r.newline()
		fmt.Fprintf(r.w, "◆ mode %s → %s\n", p.From, p.To)
	case *event.TurnCompletedPayload:
		r.newline()
		if p.StopReason != event.StopFinal {
			msg := "turn ended: " + p.StopReason
			if p.Error != "" {
				msg += ": " + termtext.Line(p.Error)
			}
			r.println(msg, "  ")
		}
	}
}

// setStatus says what is awaited after an event: the model's answer after
// the context is sent, a running tool after it started; nothing otherwise
// (model text moves by itself, and a question must not be drawn over).
func (r *renderer) setStatus(p event.Payload) {
	switch p := p.(type) {
	case *event.ContextBuiltPayload:
		r.status.set("waiting for " + r.model)
	case *event.ToolStartedPayload:
		// Committed with the call's permission.resolved, so it arrives
		// before the tool runs.
		r.status.set("running " + p.Tool)
	// context.built may join the next durable commit (eventlog.MayDefer),
	// so it can arrive only after the model has answered; the durable
	// user.message before the model is called says it in time.
	case *event.UserMessagePayload:
		r.status.set("waiting for " + r.model)
	}
}

// outputLines is what the terminal shows of one output stream: its first
// head lines and its last tail lines (where a failure is usually printed),
// with what lies between counted.
func outputLines(preview string, tail *event.OutputTail, head, last int) []string {
	if tail == nil || tail.Omitted == 0 {
		whole := preview
		if tail != nil {
			whole += tail.Text
		}
		lines := splitLines(whole)
		if len(lines) <= head+last+1 {
			return lines
		}
		return append(append(lines[:head:head], fmt.Sprintf("… %d more lines …", len(lines)-head-last)), lines[len(lines)-last:]...)
	}
	first, end := splitLines(preview), splitLines(tail.Text)
	first = first[:min(head, len(first))]
	// The tail may begin mid-line: its first line is shown only whole.
	if len(end) > 1 {
		end = end[1:]
	}
	end = end[max(0, len(end)-last):]
	hidden := max(0, int64(len(preview))-sumLen(first)) + tail.Omitted + max(0, int64(len(tail.Text))-sumLen(end))
	gap := fmt.Sprintf("… %d bytes not shown (custom-agent log shows the artifact digests; custom-agent artifact cat DIGEST prints it all) …", hidden)
	return append(append(first, gap), end...)
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func sumLen(lines []string) int64 {
	n := int64(0)
	for _, l := range lines {
		n += int64(len(l)) + 1
	}
	return n
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return termtext.Line(s)
}
