package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// colour matches the SGR sequences the renderer mutes a line with.
var colour = regexp.MustCompile("\x1b\\[[0-9;]*m")

// checkFits fails unless every line of narrow is at most cols columns wide
// and narrow has the words of wide (the same output at no width limit),
// whole and in order: lines were broken only between words. A word wider
// than a whole line may be cut, ending in "…".
func checkFits(t *testing.T, narrow, wide string, cols int) {
	t.Helper()
	narrow, wide = colour.ReplaceAllString(narrow, ""), colour.ReplaceAllString(wide, "")
	for _, l := range strings.Split(strings.TrimSuffix(narrow, "\n"), "\n") {
		if w := termtext.Width(l); w > cols {
			t.Errorf("line %q is %d columns wide, more than %d", l, w, cols)
		}
	}
	got, want := strings.Fields(narrow), strings.Fields(wide)
	if len(got) != len(want) {
		t.Fatalf("%d words at %d columns, %d without a limit:\n%s\n--- without a limit:\n%s", len(got), cols, len(want), narrow, wide)
	}
	for i := range want {
		cut := strings.HasSuffix(got[i], "…") && strings.HasPrefix(want[i], strings.TrimSuffix(got[i], "…")) && termtext.Width(want[i]) > cols/2
		if got[i] != want[i] && !cut {
			t.Errorf("word %d is %q, want %q (split?):\n%s", i, got[i], want[i], narrow)
		}
	}
	if narrow == wide && termtext.Width(wide) > cols {
		t.Errorf("nothing was wrapped:\n%s", narrow)
	}
}

func sealed(t *testing.T, seq uint64, p event.Payload) event.Event {
	t.Helper()
	d, err := event.NewDraft("s1", "t1", time.Date(2026, 12, 1, 21, 45, 33, 0, time.UTC), p)
	if err != nil {
		t.Fatal(err)
	}
	e, err := event.Seal(d, seq, event.GenesisHash)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestLinesFitANarrowTerminal: at 40 columns the lines issue 24 item 8
// names (the demo's audit trail, chat's /help, the built-in allow line)
// and the renderer's other decision lines are wrapped at words, none wider
// than the terminal, no word split.
func TestLinesFitANarrowTerminal(t *testing.T) {
	t.Parallel()
	const cols = 40
	builtin := &event.PermissionResolvedPayload{ToolCallID: "tc_1", Decision: "allow", Actor: event.ActorPolicy, RiskAtDecision: risk.Execute,
		SourcedFrom: string(permission.FromOverride), Reason: permission.BuiltinReasonPrefix + ": it only reads, so the built-in rule `builtin:git-log` allows it."}
	denied := &event.PermissionResolvedPayload{ToolCallID: "tc_2", Decision: "deny", Actor: event.ActorPolicy, RiskAtDecision: risk.Credential,
		SourcedFrom: "default", Reason: "shell: `cat ~/.ssh/id_rsa` reads a private key; credential calls are denied unless a policy rule that names them allows them."}
	call := &event.ModelToolCallRequestedPayload{ToolCallID: "tc_1", Tool: "shell", Args: []byte(`{"command":"git log --oneline -5 -- support/termtext"}`)}
	render := func(t *testing.T, width int, onTerminal bool, ps ...event.Payload) string {
		var b bytes.Buffer
		r := &renderer{w: &b, onTerminal: onTerminal, cols: func() int { return width }}
		for i, p := range ps {
			r.event(sealed(t, uint64(i+1), p))
		}
		return b.String()
	}
	timeline := func(t *testing.T, width int) string {
		var b bytes.Buffer
		fw := &fitWriter{w: &b, cols: width}
		events := []event.Event{
			sealed(t, 1, &event.UserMessagePayload{Content: "Run the tests, and tell me which of them fail and why."}),
			sealed(t, 2, call),
			sealed(t, 3, builtin),
			sealed(t, 4, &event.ToolCompletedPayload{ToolCallID: "tc_1", StdoutBytes: 12, Artifacts: []event.Artifact{{Name: "stdout", Digest: "sha256:" + strings.Repeat("ab", 32), Bytes: 12}}}),
			sealed(t, 5, denied),
		}
		for _, e := range events {
			if err := writeTimeline(fw, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := fw.Flush(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	help := func(t *testing.T, width int) string {
		var b bytes.Buffer
		c := &chat{info: &b, cols: func() int { return width }}
		if err := c.command(context.Background(), "help"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	tests := []struct {
		name string
		out  func(t *testing.T, width int) string
	}{
		{"built-in allow line", func(t *testing.T, w int) string { return render(t, w, false, call, builtin) }},
		{"built-in allow line, muted", func(t *testing.T, w int) string { return render(t, w, true, call, builtin) }},
		{"denied line", func(t *testing.T, w int) string { return render(t, w, false, denied) }},
		{"audit trail", timeline},
		{"/help", help},
		{"unknown command", func(t *testing.T, w int) string {
			var b bytes.Buffer
			c := &chat{info: &b, cols: func() int { return w }}
			if err := c.command(context.Background(), ""); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkFits(t, tc.out(t, cols), tc.out(t, 0), cols)
		})
	}
}
