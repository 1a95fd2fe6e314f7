package executor

import (
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/injection"
)

// scanFields scans the texts of a tool result the model is shown, by the
// payload field that holds each, and returns what the injection scanner
// found, nil when nothing. Fields are scanned in a fixed order, so a
// result's Injection is the same each time.
func scanFields(fields ...[2]string) *event.Injection {
	var in event.Injection
	var seen [16]bool
	all := injection.AllClasses()
	for _, f := range fields {
		if f[1] == "" {
			continue
		}
		r := injection.ScanString(f[1])
		in.Truncated = in.Truncated || r.Truncated
		for _, sp := range r.Spans {
			in.Spans = append(in.Spans, event.InjectionSpan{Field: f[0], Class: string(sp.Class), Start: sp.Start, End: sp.End})
			for i, c := range all {
				if c == sp.Class {
					seen[i] = true
				}
			}
		}
	}
	if len(in.Spans) == 0 {
		return nil
	}
	for i, c := range all {
		if seen[i] {
			in.Classes = append(in.Classes, string(c))
		}
	}
	return &in
}

// scanCompleted is scanFields over a tool.completed payload, in the order
// the model reads it.
func scanCompleted(p *event.ToolCompletedPayload) *event.Injection {
	fields := [][2]string{{"stdoutPreview", p.StdoutPreview}}
	if p.StdoutTail != nil {
		fields = append(fields, [2]string{"stdoutTail", p.StdoutTail.Text})
	}
	fields = append(fields, [2]string{"stderrPreview", p.StderrPreview})
	if p.StderrTail != nil {
		fields = append(fields, [2]string{"stderrTail", p.StderrTail.Text})
	}
	fields = append(fields, [2]string{"summary", string(p.Summary)})
	return scanFields(fields...)
}
