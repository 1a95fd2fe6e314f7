package executor

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/custom-agent/custom-agent/contextbuild"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/injection"
)

// scanError scans the error of a tool.failed that never ran. At validate
// it quotes the tool's schema in quotes of custom-agent's, which are not
// the author's quotes (injection.ScanQuotedByUs).
func scanError(stage, msg string) *event.Injection {
	if stage != event.StageValidate {
		return scanFields([2]string{"error", msg})
	}
	return toInjection("error", injection.ScanQuotedByUs(msg))
}

// toInjection is a scan of one field as recorded, nil when nothing.
func toInjection(field string, r injection.Result) *event.Injection {
	if len(r.Spans) == 0 {
		return nil
	}
	in := event.Injection{Truncated: r.Truncated}
	for _, sp := range r.Spans {
		in.Spans = append(in.Spans, event.InjectionSpan{Field: field, Class: string(sp.Class), Start: sp.Start, End: sp.End})
	}
	for _, c := range injection.AllClasses() {
		if slices.ContainsFunc(r.Spans, func(sp injection.Span) bool { return sp.Class == c }) {
			in.Classes = append(in.Classes, string(c))
		}
	}
	return &in
}

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

// scanCompleted scans a tool.completed payload as the model reads it:
// the text contextbuild.ToolResult shows, scanned as one text (a preview
// and a tail with nothing omitted between them are one text to the model,
// so an order across their seam is found), its spans mapped back to the
// payload fields they lie in. A span across fields is recorded as a span
// in each; a span that lies only in custom-agent's own words between them
// is dropped (it is not the tool's text).
func scanCompleted(p *event.ToolCompletedPayload) *event.Injection {
	parts := contextbuild.ToolResultParts(p)
	var b strings.Builder
	for _, pt := range parts {
		b.WriteString(pt.Text)
	}
	r := injection.ScanString(b.String())
	in := event.Injection{Truncated: r.Truncated}
	var seen [16]bool
	all := injection.AllClasses()
	for _, sp := range r.Spans {
		at, kept := 0, false
		for _, pt := range parts {
			from, to := max(sp.Start, at), min(sp.End, at+len(pt.Text))
			if pt.Field != "" && from < to {
				in.Spans = append(in.Spans, event.InjectionSpan{Field: pt.Field, Class: string(sp.Class), Start: from - at, End: to - at})
				kept = true
			}
			at += len(pt.Text)
		}
		if i := slices.Index(all, sp.Class); kept && i >= 0 {
			seen[i] = true
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

// MaxErrorBytes caps the error a tool.failed records, which the model is
// shown and the scanner scans: a tool's (an MCP server's) error text is
// not bounded otherwise, and each call's scan would read all of it.
const MaxErrorBytes = 8 << 10

// capError cuts an error longer than MaxErrorBytes at a character
// boundary and says how much was cut.
func capError(msg string) string {
	if len(msg) <= MaxErrorBytes {
		return msg
	}
	cut := MaxErrorBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + fmt.Sprintf("\n[… %d more bytes of the error cut by custom-agent]", len(msg)-cut)
}
