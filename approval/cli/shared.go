package cli

import (
	"encoding/json"

	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// The terminal's words for a question, exported so that the other approval
// UIs (the web) say the same things: one vocabulary, whichever UI asks.

// RiskWords says in a few words what a risk level means to the person
// ("changes files", "cannot be undone"); an unknown level is treated as
// destructive.
func RiskWords(l risk.Level) string {
	if w, ok := words[l]; ok {
		return w
	}
	return words[risk.Unknown]
}

// OptionLabel is the label of an option as the terminal shows it, with
// what allow once grants (asked again every time for a destructive call).
func OptionLabel(option string, destructive bool) string {
	if option == executor.OptionAllowOnce {
		if destructive {
			return labelAllowOnceDestructive
		}
		return labelAllowOnce
	}
	for _, k := range keys {
		if k.option == option {
			return k.label
		}
	}
	return option
}

// OptionHelp is the longer help the line protocol prints for allow once
// and allow_unsandboxed; "" for the other options.
func OptionHelp(option string, destructive bool) string {
	switch option {
	case executor.OptionAllowOnce:
		if destructive {
			return "allows this call once: a destructive call is asked again every time"
		}
		return "also allows identical calls (same args) again in this session without asking"
	case executor.OptionAllowUnsandboxed:
		return unsandboxedHelp
	}
	return ""
}

// DescribeRule says what a rule allows, in the words of its matcher, as the
// terminal previews the rule an allow_session or allow_project answer makes.
func DescribeRule(r permission.Rule) string { return describeRule(r) }

// DiffLine is one line of an edit's diff: Kind is '+', '-', ' ', '@' (a
// hunk header), 'h' (a file header) or 'n' (a note).
type DiffLine struct {
	Kind byte
	Text string
}

// EditDiff returns the diff the terminal shows for an apply_patch or
// write_file call (write_file diffs the file's current content, read with
// readFile, relative paths from dir), with a one-line summary; false for
// any other call. The current file is masked of secrets; the args are
// masked by the executor already, and a UI masks each line again as it
// shows it.
func EditDiff(tool string, args json.RawMessage, dir string, readFile func(string) ([]byte, error)) (summary string, lines []DiffLine, ok bool) {
	e, ok := editFor(tool, args, dir, readFile)
	if !ok {
		return "", nil, false
	}
	out := make([]DiffLine, len(e.lines))
	for i, l := range e.lines {
		out[i] = DiffLine{Kind: l.kind, Text: l.text}
	}
	return e.summary, out, true
}
