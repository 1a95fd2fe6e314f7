package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/custom-agent/custom-agent/event"
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
		fmt.Fprint(r.w, p.Text)
		r.midLine = !strings.HasSuffix(p.Text, "\n")
	case *event.ModelToolCallRequestedPayload:
		r.newline()
		fmt.Fprintf(r.w, "→ %s %s\n", p.Tool, clip(string(p.Args), 200))
	case *event.PermissionResolvedPayload:
		switch {
		case p.Decision == "allow" && p.Actor == event.ActorUser:
			fmt.Fprintf(r.w, "  allowed by you (%s) · risk %s\n", p.Option, p.RiskAtDecision)
		case p.Decision == "allow":
			fmt.Fprintf(r.w, "  allowed by %s · risk %s · %s\n", p.SourcedFrom, p.RiskAtDecision, p.Reason)
		default:
			fmt.Fprintf(r.w, "  DENIED (%s) · risk %s · %s\n", p.Actor, p.RiskAtDecision, p.Reason)
		}
	case *event.ToolCompletedPayload:
		exit := ""
		if p.ExitCode != nil {
			exit = fmt.Sprintf("exit %d · ", *p.ExitCode)
		}
		fmt.Fprintf(r.w, "  %s%d bytes of output · %dms\n", exit, p.StdoutBytes+p.StderrBytes, p.DurationMs)
		if t := p.Truncated; t != nil {
			fmt.Fprintf(r.w, "  ! %d bytes of stdout and %d of stderr were not stored: over the output cap (--max-output-bytes)\n", t.Stdout, t.Stderr)
		}
		lines := outputLines(p.StdoutPreview, p.StdoutTail, 6, 8)
		if p.StderrPreview != "" || p.StderrTail != nil {
			if len(lines) > 0 {
				lines = append(lines, "[stderr]")
			}
			lines = append(lines, outputLines(p.StderrPreview, p.StderrTail, 6, 8)...)
		}
		for _, line := range lines {
			fmt.Fprintf(r.w, "  │ %s\n", line)
		}
	case *event.ToolFailedPayload:
		fmt.Fprintf(r.w, "  failed at %s: %s\n", p.Stage, clip(p.Error, 400))
	case *event.TurnCompletedPayload:
		r.newline()
		if p.StopReason != event.StopFinal {
			msg := "turn ended: " + p.StopReason
			if p.Error != "" {
				msg += ": " + p.Error
			}
			fmt.Fprintln(r.w, msg)
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
		r.status.set("running " + p.Tool)
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
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
