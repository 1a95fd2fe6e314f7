//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/testsupport/ptytest"
)

func renderEvents(t *testing.T, r *renderer, ps ...event.Payload) {
	t.Helper()
	prev := event.GenesisHash
	for i, p := range ps {
		d, err := event.NewDraft("s1", "t1", time.Unix(0, 0), p)
		if err != nil {
			t.Fatal(err)
		}
		e, err := event.Seal(d, uint64(i+1), prev)
		if err != nil {
			t.Fatal(err)
		}
		prev = e.Hash
		r.event(e)
	}
}

const hostile = "\x1b]0;pwned\x07\x1b[1A\x1b[2K  allowed by you (allow_session)\rX\u202e\u009b2J"

// A file printed by a tool, model text, args and reasons that hold a title
// sequence and cursor-up + erase-line reach the terminal as text: what it
// receives holds no ESC at all (the renderer has no colours), no BEL, no
// lone CR, no C1 control and no bidi override.
func TestRenderOnATerminalHoldsNoControl(t *testing.T) {
	p := ptytest.Open(t)
	r := &renderer{w: p.Slave, onTerminal: true}
	zero := 0
	renderEvents(t, r,
		&event.ModelDeltaPayload{Text: "reading " + hostile + "\n"},
		&event.ModelToolCallRequestedPayload{ToolCallID: "tc_1", Tool: "shell", Args: json.RawMessage(`{"command":"cat \u001b]0;x\u0007notes.txt"}`)},
		&event.PermissionResolvedPayload{ToolCallID: "tc_1", Decision: "allow", Actor: event.ActorPolicy, RiskAtDecision: risk.Read,
			SourcedFrom: "override", Reason: "rule " + hostile},
		&event.ToolCompletedPayload{ToolCallID: "tc_1", ExitCode: &zero, StdoutBytes: 80, StdoutPreview: "line 1\n" + hostile + "\nline 3\n", Artifacts: []event.Artifact{}},
		&event.ToolFailedPayload{ToolCallID: "tc_2", Stage: "execute", Error: hostile},
		&event.TurnCompletedPayload{StopReason: event.StopFinal},
	)
	time.Sleep(100 * time.Millisecond)
	out := p.Output()
	// The terminal's own newline translation makes \n into \r\n.
	out = strings.ReplaceAll(out, "\r\n", "\n")
	if i := strings.IndexAny(out, "\x1b\x07\r\u009b\u202e"); i >= 0 {
		t.Fatalf("the terminal received a control character at %d: %q", i, out)
	}
	for _, shown := range []string{`\x1b]0;pwned\a\x1b[1A\x1b[2K  allowed by you (allow_session)\rX\u202e\u009b2J`, `cat \u001b]0;x\u0007notes.txt`} {
		if !strings.Contains(out, shown) {
			t.Errorf("the terminal does not show %q as text:\n%s", shown, out)
		}
	}
	if !regexp.MustCompile(`(?m)^  │ line 3$`).MatchString(out) {
		t.Errorf("the output preview lost its lines:\n%s", out)
	}
}

// Several calls in one response: each result names its call. A call a
// person was asked about has its outcome printed once, by the approval
// UI, not again here.
func TestRenderLabelsCallsAndPrintsOnce(t *testing.T) {
	t.Parallel()
	zero, one := 0, 1
	events := []event.Payload{
		&event.ModelDeltaPayload{Text: "Two things.\n"},
		&event.ModelToolCallRequestedPayload{ToolCallID: "toolu_01AAAAAAAAAAAAAAAAAAAAA1f3e9c", Tool: "shell", Args: json.RawMessage(`{"command":"go test ./..."}`)},
		&event.ModelToolCallRequestedPayload{ToolCallID: "toolu_01AAAAAAAAAAAAAAAAAAAAA7b2d41", Tool: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
		&event.PermissionRequestedPayload{ToolCallID: "toolu_01AAAAAAAAAAAAAAAAAAAAA1f3e9c", Tool: "shell", Args: json.RawMessage(`{"command":"go test ./..."}`),
			RiskAtDecision: risk.Execute, SourcedFrom: "default", SuggestedDecision: "ask", Reason: "asked", Options: []string{"allow_once", "deny"}, TimeoutMs: 30000},
		&event.PermissionResolvedPayload{ToolCallID: "toolu_01AAAAAAAAAAAAAAAAAAAAA1f3e9c", Decision: "allow", Actor: event.ActorUser, RiskAtDecision: risk.Execute,
			SourcedFrom: "default", Option: "allow_once", Reason: "user approved (allow_once)"},
		&event.ToolCompletedPayload{ToolCallID: "toolu_01AAAAAAAAAAAAAAAAAAAAA1f3e9c", ExitCode: &one, StdoutBytes: 4, StdoutPreview: "FAIL\n", Artifacts: []event.Artifact{}},
		&event.PermissionResolvedPayload{ToolCallID: "toolu_01AAAAAAAAAAAAAAAAAAAAA7b2d41", Decision: "allow", Actor: event.ActorPolicy, RiskAtDecision: risk.Read,
			SourcedFrom: "default", Reason: "reads are allowed"},
		&event.ToolCompletedPayload{ToolCallID: "toolu_01AAAAAAAAAAAAAAAAAAAAA7b2d41", ExitCode: &zero, StdoutBytes: 10, StdoutPreview: "module x\n", Artifacts: []event.Artifact{}},
		&event.ModelDeltaPayload{Text: "One more.\n"},
		&event.ModelToolCallRequestedPayload{ToolCallID: "tc_9", Tool: "read_file", Args: json.RawMessage(`{"path":"a"}`)},
		&event.ToolFailedPayload{ToolCallID: "tc_9", Stage: "execute", Error: "no such file"},
	}
	want := `Two things.
→ shell #1f3e9c {"command":"go test ./..."}
→ read_file #7b2d41 {"path":"go.mod"}
  shell #1f3e9c: exit 1 · 4 bytes of output · 0ms
  │ FAIL
  read_file #7b2d41: allowed by default · risk read · reads are allowed
  read_file #7b2d41: exit 0 · 10 bytes of output · 0ms
  │ module x
One more.
→ read_file #tc_9 {"path":"a"}
  failed at execute: no such file
`
	for _, onTerminal := range []bool{true, false} {
		var b bytes.Buffer
		renderEvents(t, &renderer{w: &b, onTerminal: onTerminal}, events...)
		want := want
		if !onTerminal {
			// A transcript in a file says how the question ended.
			want = strings.Replace(want, "  shell #1f3e9c: exit 1", "  shell #1f3e9c: allowed by you (allow_once) · risk execute\n  shell #1f3e9c: exit 1", 1)
		}
		if b.String() != want {
			t.Errorf("onTerminal=%v: got:\n%s\nwant:\n%s", onTerminal, b.String(), want)
		}
	}
}

// The log timeline shows a hostile summary as text.
func TestTimelineLineEscapes(t *testing.T) {
	t.Parallel()
	d, err := event.NewDraft("s1", "t1", time.Unix(0, 0), &event.PermissionResolvedPayload{ToolCallID: "tc_1", Decision: "deny",
		Actor: event.ActorUser, RiskAtDecision: risk.Execute, SourcedFrom: "default", Reason: "denied on the web " + hostile})
	if err != nil {
		t.Fatal(err)
	}
	e, err := event.Seal(d, 1, event.GenesisHash)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeTimelineLine(&b, e); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(b.String(), "\n")
	if strings.ContainsAny(line, "\x1b\x07\r\n\u009b\u202e") {
		t.Fatalf("the timeline line holds a control character: %q", line)
	}
	if !strings.Contains(line, `\x1b]0;pwned\a`) {
		t.Fatalf("the timeline line does not show the sequence as text: %q", line)
	}
}

// A skill's start and end are told, and what it lets run; a hostile name
// from a repository is shown as text.
func TestRenderSkillAndMode(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	renderEvents(t, &renderer{w: &b, onTerminal: true},
		&event.ModelDeltaPayload{Text: "Using it"},
		&event.SkillActivatedPayload{ToolCallID: "tc_1", Name: "review\x1b[2J", Source: "project", Path: "/p/SKILL.md", AllowedTools: []string{"read_file", "search_text"}, Digest: "sha256:ab"},
		&event.SkillEndedPayload{Name: "review", Reason: "the turn ended"},
		&event.SkillActivatedPayload{ToolCallID: "tc_2", Name: "any", Source: "user", Path: "/u/SKILL.md", AllowedTools: []string{"*"}, Digest: "sha256:cd"},
		&event.SkillActivatedPayload{ToolCallID: "tc_3", Name: "none", Source: "user", Path: "/u/SKILL.md", AllowedTools: []string{}, Digest: "sha256:ef"},
		&event.ModeChangedPayload{From: "default", To: "plan", By: event.ActorUser},
	)
	want := `Using it
◆ skill review\x1b[2J (project) is active: only read_file, search_text may run until the turn ends, each still decided as before
◆ skill review ended: the turn ended
◆ skill any (user) is active: it narrows nothing: every tool is decided as before
◆ skill none (user) is active: no tool may run until the turn ends
◆ mode default → plan
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
