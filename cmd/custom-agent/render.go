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
		for _, line := range headLines(p.StdoutPreview+p.StderrPreview, 12) {
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

func headLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	if len(lines) > n {
		more := len(lines) - n
		lines = append(lines[:n], fmt.Sprintf("… %d more lines in the preview (custom-agent log shows the artifact digests)", more))
	}
	return lines
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
