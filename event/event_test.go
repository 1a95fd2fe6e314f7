package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.FixedZone("CET", 3600))

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"sorted keys", `{"b":1,"a":{"d":2,"c":3}}`, `{"a":{"c":3,"d":2},"b":1}`},
		{"whitespace", " { \"a\" : [ 1 , 2 ] } ", `{"a":[1,2]}`},
		{"no html escaping", `{"a":"<b>&</b>"}`, `{"a":"<b>&</b>"}`},
		{"unicode kept", `{"a":"把测试跑一遍"}`, `{"a":"把测试跑一遍"}`},
		{"escapes normalised", `{"a":"\u0041\/"}`, `{"a":"A/"}`},
		{"numbers as written", `{"a":1.50,"b":1e3}`, `{"a":1.50,"b":1e3}`},
		{"big integers exact", `{"a":12345678901234567890}`, `{"a":12345678901234567890}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Canonical([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("Canonical(%s) = %s, want %s", tc.in, got, tc.want)
			}
			again, _ := Canonical(got)
			if string(again) != string(got) {
				t.Fatalf("not a fixed point: %s -> %s", got, again)
			}
		})
	}
	for _, bad := range []string{``, `{`, `{"a":1} {}`, `nope`} {
		if _, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%q) accepted invalid JSON", bad)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":2}`, `[1,"x",null,true]`, `"\u00e9\ud83d\ude00"`, `{"a":"\xff"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := Canonical(in)
		if err != nil {
			return
		}
		again, err := Canonical(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("not a fixed point: %q -> %q (%v)", c, again, err)
		}
	})
}

func TestSealAndHash(t *testing.T) {
	t.Parallel()
	d, err := NewDraft("s", "t", t0, UserMessagePayload{Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Seal(d, 1, GenesisHash)
	if err != nil {
		t.Fatal(err)
	}
	if e.TS.Location() != time.UTC || e.TS.Nanosecond() != 123456000 {
		t.Fatalf("ts not normalised to UTC microseconds: %v", e.TS)
	}
	if e.Hash != e.ComputeHash() || len(e.Hash) != 64 {
		t.Fatalf("hash %q", e.Hash)
	}
	// Every field is covered by the hash.
	mutations := map[string]func(*Event){
		"v":         func(e *Event) { e.V = 2 },
		"seq":       func(e *Event) { e.Seq = 2 },
		"sessionId": func(e *Event) { e.SessionID = "s2" },
		"turnId":    func(e *Event) { e.TurnID = "t2" },
		"type":      func(e *Event) { e.Type = ModelDelta },
		"ts":        func(e *Event) { e.TS = e.TS.Add(time.Microsecond) },
		"payload":   func(e *Event) { e.Payload = json.RawMessage(`{"content":"ho"}`) },
		"prevHash":  func(e *Event) { e.PrevHash = strings.Repeat("1", 64) },
	}
	for field, mutate := range mutations {
		m := e
		mutate(&m)
		if m.ComputeHash() == e.Hash {
			t.Errorf("changing %s does not change the hash", field)
		}
	}
	// JSON round trip is byte-identical.
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) || back.ComputeHash() != e.Hash {
		t.Fatalf("round trip changed the event:\n%s\n%s", b, b2)
	}
}

func TestSealRefusesUnknownType(t *testing.T) {
	t.Parallel()
	_, err := Seal(Draft{SessionID: "s", TS: t0, Type: "tool.exploded", Payload: json.RawMessage(`{}`)}, 1, GenesisHash)
	if err == nil {
		t.Fatal("sealed an unknown type")
	}
}

func TestEveryTypeDecodes(t *testing.T) {
	t.Parallel()
	zero := 0
	valid := map[Type]Payload{
		SessionStarted:         SessionStartedPayload{Cwd: "/p", Mode: "default", Model: "m"},
		TurnStarted:            TurnStartedPayload{},
		UserMessage:            UserMessagePayload{Content: "c", Includes: []string{"mcp://everything/demo://resource/dynamic/text/1"}},
		ContextBuilt:           ContextBuiltPayload{MessageCount: 3, ToolResultsIncluded: 1},
		ModelDelta:             ModelDeltaPayload{Text: "t"},
		ModelToolCallRequested: ModelToolCallRequestedPayload{ToolCallID: "tc", Tool: "shell", Args: json.RawMessage(`{"command":"ls"}`)},
		PermissionRequested:    PermissionRequestedPayload{ToolCallID: "tc", Tool: "shell", Args: json.RawMessage(`{}`), RiskAtDecision: 3, SourcedFrom: "default", SuggestedDecision: "ask", Reason: "r", Options: []string{"deny"}, TimeoutMs: 30000},
		PermissionResolved:     PermissionResolvedPayload{ToolCallID: "tc", Decision: "deny", Reason: "r", Actor: ActorSystem, RiskAtDecision: 5, SourcedFrom: "default"},
		ToolStarted:            ToolStartedPayload{ToolCallID: "tc", Tool: "shell", Args: json.RawMessage(`{}`)},
		ToolCompleted:          ToolCompletedPayload{ToolCallID: "tc", ExitCode: &zero, StdoutBytes: 5, StderrBytes: 1, Artifacts: []Artifact{{Name: "stdout", Digest: "sha256:ab", Bytes: 2, Truncated: true}, {Name: "stderr", Digest: "sha256:cd", Bytes: 1}}, Truncated: &StreamBytes{Stdout: 3}},
		ToolFailed:             ToolFailedPayload{ToolCallID: "tc", Stage: StageValidate, Error: "e"},
		TurnCompleted:          TurnCompletedPayload{StopReason: StopMaxSteps},
		PolicyChanged:          PolicyChangedPayload{Level: "session", Op: "add", Rule: json.RawMessage(`{"id":"r"}`)},
		ToolDefinitionChanged:  ToolDefinitionChangedPayload{ToolCallID: "tc", Server: "everything", Tool: "echo", FullName: "mcp__everything__echo", OldHash: "sha256:00", NewHash: "sha256:11"},
		ModeChanged:            ModeChangedPayload{From: "default", To: "plan", By: ActorUser},
		SkillActivated:         SkillActivatedPayload{ToolCallID: "tc", Name: "review", Source: "project", Path: "/p/.custom-agent/skills/review/SKILL.md", AllowedTools: []string{"read_file"}, Digest: "sha256:ab"},
		SkillEnded:             SkillEndedPayload{Name: "review", Reason: "the turn ended"},
		PolicySnapshot:         PolicySnapshotPayload{Digest: "sha256:00", Rules: []SnapshotRule{}},
		ModelReplyFlagged:      ModelReplyFlaggedPayload{Classes: []string{"role_spoof"}, Spans: []ReplySpan{{Class: "role_spoof", Start: 0, End: 5}}, Bytes: 9},
	}
	all := slices.Concat(Types, MCPTypes, SessionTypes)
	if len(valid) != len(all) || len(newPayload) != len(all) {
		t.Fatalf("test covers %d types, package lists %d and knows %d", len(valid), len(all), len(newPayload))
	}
	for _, typ := range all {
		if !typ.Known() {
			t.Errorf("%s is listed but not known", typ)
		}
		p := valid[typ]
		d, err := NewDraft("s", "t", t0, p)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		e, _ := Seal(d, 1, GenesisHash)
		got, err := e.Decode()
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if diff := cmp.Diff(p, deref(got)); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", typ, diff)
		}
		if e.Summary() == "" && typ != TurnStarted {
			t.Errorf("%s has an empty summary", typ)
		}
	}
}

func deref(p Payload) Payload {
	switch p := p.(type) {
	case *SessionStartedPayload:
		return *p
	case *TurnStartedPayload:
		return *p
	case *UserMessagePayload:
		return *p
	case *ContextBuiltPayload:
		return *p
	case *ModelDeltaPayload:
		return *p
	case *ModelToolCallRequestedPayload:
		return *p
	case *PermissionRequestedPayload:
		return *p
	case *PermissionResolvedPayload:
		return *p
	case *ToolStartedPayload:
		return *p
	case *ToolCompletedPayload:
		return *p
	case *ToolFailedPayload:
		return *p
	case *TurnCompletedPayload:
		return *p
	case *PolicyChangedPayload:
		return *p
	case *ToolDefinitionChangedPayload:
		return *p
	case *ModeChangedPayload:
		return *p
	case *SkillActivatedPayload:
		return *p
	case *SkillEndedPayload:
		return *p
	case *PolicySnapshotPayload:
		return *p
	case *ModelReplyFlaggedPayload:
		return *p
	}
	panic(fmt.Sprintf("unhandled %T", p))
}

func TestValidateRefusesIncompletePayloads(t *testing.T) {
	t.Parallel()
	bad := map[string]Payload{
		"session without cwd":        SessionStartedPayload{Mode: "default"},
		"tool call without id":       ModelToolCallRequestedPayload{Tool: "shell", Args: json.RawMessage(`{}`)},
		"tool call without args":     ModelToolCallRequestedPayload{ToolCallID: "tc", Tool: "shell"},
		"resolved as ask":            PermissionResolvedPayload{ToolCallID: "tc", Decision: "ask", Reason: "r", Actor: ActorUser, RiskAtDecision: 3, SourcedFrom: "default"},
		"resolved without reason":    PermissionResolvedPayload{ToolCallID: "tc", Decision: "deny", Actor: ActorUser, RiskAtDecision: 3, SourcedFrom: "default"},
		"resolved by the model":      PermissionResolvedPayload{ToolCallID: "tc", Decision: "allow", Reason: "r", Actor: ActorModel, RiskAtDecision: 3, SourcedFrom: "default"},
		"resolved without risk":      PermissionResolvedPayload{ToolCallID: "tc", Decision: "deny", Reason: "r", Actor: ActorUser, SourcedFrom: "default"},
		"requested suggesting allow": PermissionRequestedPayload{ToolCallID: "tc", Tool: "shell", Args: json.RawMessage(`{}`), RiskAtDecision: 3, SourcedFrom: "default", SuggestedDecision: "allow", Reason: "r"},
		"failed at unknown stage":    ToolFailedPayload{ToolCallID: "tc", Stage: "later", Error: "e"},
		"turn without stop reason":   TurnCompletedPayload{},
		"policy change without rule": PolicyChangedPayload{Level: "session", Op: "add"},
		"truncated dropping nothing": ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 5, Truncated: &StreamBytes{}},
		"dropping more than printed": ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 5, Truncated: &StreamBytes{Stdout: 6}},
		"dropping a negative count":  ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 5, StderrBytes: 5, Truncated: &StreamBytes{Stdout: 1, Stderr: -1}},
		"artifact cut, none dropped": ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 5, Artifacts: []Artifact{{Name: "stdout", Digest: "sha256:ab", Bytes: 2, Truncated: true}}},
		"dropped, artifact not cut":  ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 5, Artifacts: []Artifact{{Name: "stdout", Digest: "sha256:ab", Bytes: 2}}, Truncated: &StreamBytes{Stdout: 3}},
		"stored+dropped != printed":  ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 5, Artifacts: []Artifact{{Name: "stdout", Digest: "sha256:ab", Bytes: 1, Truncated: true}}, Truncated: &StreamBytes{Stdout: 3}},
		"negative stdout bytes":      ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: -1},
		"in event, not its digest":   ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 3, StdoutPreview: "ok\n", Artifacts: []Artifact{{Name: "stdout", Digest: "sha256:ab", Bytes: 3, InEvent: true}}},
		"in event, preview cut":      ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 9, StdoutPreview: "ok\n", Artifacts: []Artifact{{Name: "stdout", Digest: okDigest, Bytes: 9, InEvent: true}}},
		"in event, fewer bytes":      ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 3, StdoutPreview: "ok\n", Artifacts: []Artifact{{Name: "stdout", Digest: okDigest, Bytes: 2, InEvent: true}}},
		"in event, and truncated":    ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 3, StdoutPreview: "ok\n", Artifacts: []Artifact{{Name: "stdout", Digest: okDigest, Bytes: 3, InEvent: true, Truncated: true}}},
		"in event, of no stream":     ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 3, StdoutPreview: "ok\n", Artifacts: []Artifact{{Name: "diff", Digest: okDigest, Bytes: 3, InEvent: true}}},
		"include that is not mcp://": UserMessagePayload{Content: "c", Includes: []string{"file:///etc/passwd"}},
		"definition without server":  ToolDefinitionChangedPayload{Tool: "echo", FullName: "mcp__x__echo", OldHash: "sha256:00", NewHash: "sha256:11"},
		"definition without hash":    ToolDefinitionChangedPayload{Server: "x", Tool: "echo", FullName: "mcp__x__echo", OldHash: "sha256:00"},
		"definition did not change":  ToolDefinitionChangedPayload{Server: "x", Tool: "echo", FullName: "mcp__x__echo", OldHash: "sha256:00", NewHash: "sha256:00"},
		"mode unchanged":             ModeChangedPayload{From: "plan", To: "plan", By: ActorUser},
		"mode changed by the model":  ModeChangedPayload{From: "default", To: "dont-ask", By: ActorModel},
		"skill without tools":        SkillActivatedPayload{ToolCallID: "tc", Name: "r", Source: "user", Path: "/x/SKILL.md", Digest: "sha256:ab"},
		"skill from elsewhere":       SkillActivatedPayload{ToolCallID: "tc", Name: "r", Source: "web", Path: "/x/SKILL.md", AllowedTools: []string{"*"}, Digest: "sha256:ab"},
		"skill ended without reason": SkillEndedPayload{Name: "r"},
	}
	for name, p := range bad {
		if _, err := NewDraft("s", "t", t0, p); err == nil {
			t.Errorf("%s: NewDraft accepted it", name)
		} else if name == "tool call without id" && !errors.Is(err, errMissing) {
			t.Errorf("%s: %v does not wrap errMissing", name, err)
		}
	}
	if _, err := NewDraft("", "t", t0, UserMessagePayload{}); err == nil {
		t.Error("NewDraft accepted an empty session id")
	}
}

func TestDecodeRefusesOtherVersions(t *testing.T) {
	t.Parallel()
	d, _ := NewDraft("s", "t", t0, UserMessagePayload{Content: "x"})
	e, _ := Seal(d, 1, GenesisHash)
	e.V = 2
	if _, err := e.Decode(); err == nil {
		t.Fatal("decoded an envelope of an unknown version")
	}
}

func ExampleSeal() {
	d, _ := NewDraft("sess-1", "turn-1", time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
		UserMessagePayload{Content: "把测试跑一遍"})
	e, _ := Seal(d, 1, GenesisHash)
	fmt.Println(string(e.CanonicalBytes()))
	// Output:
	// {"v":1,"seq":1,"sessionId":"sess-1","turnId":"turn-1","type":"user.message","ts":"2026-11-30T09:00:00.000000Z","payload":{"content":"把测试跑一遍"},"prevHash":"0000000000000000000000000000000000000000000000000000000000000000"}
}

func TestToolCompletedSummarySaysWhatWasNotStored(t *testing.T) {
	t.Parallel()
	p := ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 10, Artifacts: []Artifact{{Name: "stdout", Digest: "sha256:ab", Bytes: 4, Truncated: true}}, Truncated: &StreamBytes{Stdout: 6}}
	d, err := NewDraft("s", "t", t0, p)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := Seal(d, 1, GenesisHash)
	if got := e.Summary(); !strings.Contains(got, "not-stored=stdout:6B,stderr:0B") {
		t.Fatalf("summary %q does not say what was not stored", got)
	}
}

func TestToolCompletedSummaryNamesInjection(t *testing.T) {
	t.Parallel()
	in := &Injection{Classes: []string{"role_spoof"}, Spans: []InjectionSpan{{Field: "stdoutPreview", Class: "role_spoof", Start: 0, End: 7}}}
	d, err := NewDraft("s", "t", t0, ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 7, StdoutPreview: "SYSTEM:", Artifacts: []Artifact{}, Injection: in})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := Seal(d, 1, GenesisHash)
	if got := e.Summary(); !strings.Contains(got, "injection=role_spoof") {
		t.Fatalf("summary %q does not name the injection", got)
	}
	// A span outside its field is refused when the event is written.
	in.Spans[0].End = 8
	if _, err := NewDraft("s", "t", t0, ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 7, StdoutPreview: "SYSTEM:", Artifacts: []Artifact{}, Injection: in}); err == nil {
		t.Fatal("a span past the end of its field was accepted")
	}
	if _, err := NewDraft("s", "t", t0, ToolFailedPayload{ToolCallID: "tc", Stage: StageExecute, Error: "x", Injection: &Injection{}}); err == nil {
		t.Fatal("an injection without classes was accepted")
	}
}

// TestPrepareCanonicalisesWhatNewDraftDidNot: a payload NewDraft encoded
// is taken as it is, and one set or changed afterwards, in place or not, is
// canonicalised (or refused) as any other.
func TestPrepareCanonicalisesWhatNewDraftDidNot(t *testing.T) {
	t.Parallel()
	d, err := NewDraft("s", "t", t0, ModelDeltaPayload{Text: "ab"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(d)
	if err != nil || string(p.Draft().Payload) != `{"text":"ab"}` {
		t.Fatalf("prepared %s, %v", p.Draft().Payload, err)
	}
	spaced := d
	spaced.Payload = json.RawMessage(`{ "text" : "ab" }`)
	if p, err := Prepare(spaced); err != nil || string(p.Draft().Payload) != `{"text":"ab"}` {
		t.Errorf("a payload set after NewDraft: %s, %v; want it canonicalised", p.Draft().Payload, err)
	}
	inPlace := d
	inPlace.Payload = slices.Clone(d.Payload)
	inPlace.Payload[len(inPlace.Payload)-1] = ' ' // same length, no longer valid JSON
	if _, err := Prepare(inPlace); err == nil {
		t.Errorf("a payload changed in place to %q was prepared", inPlace.Payload)
	}
	byHand := Draft{SessionID: "s", Type: ModelDelta, Payload: json.RawMessage(`{"text":"ab" }`)}
	if p, err := Prepare(byHand); err != nil || string(p.Draft().Payload) != `{"text":"ab"}` {
		t.Errorf("a draft made by hand: %s, %v; want it canonicalised", p.Draft().Payload, err)
	}
}

// okDigest is the digest of "ok\n", an output kept whole in its event.
const okDigest = "sha256:dc51b8c96c2d745df3bd5590d990230a482fd247123599548e0632fdbf97fc22"

func TestToolCompletedInEventIsValid(t *testing.T) {
	p := ToolCompletedPayload{ToolCallID: "tc", StdoutBytes: 3, StdoutPreview: "ok\n", Artifacts: []Artifact{{Name: "stdout", Digest: okDigest, Bytes: 3, InEvent: true}}}
	if err := p.Validate(); err != nil {
		t.Fatalf("an output kept whole in its event is refused: %v", err)
	}
}

// TestAppendJSONStringIsEncodingJSON: the envelope's strings are written
// exactly as encoding/json (HTML escaping off) writes them, on the fast
// path for plain strings and off it.
func TestAppendJSONStringIsEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.StringMatching(`[ -~]{0,40}`), rapid.String(), rapid.StringOf(rapid.SampledFrom([]rune{'a', '"', '\\', '\n', 0x7f, 0x2028, '<', '&', 0xfffd, 'é'}))).Draw(t, "s")
		want, err := marshalNoEscape(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
	for _, s := range []string{"\xff", "a\x00b", "sess-01", "sha256:ab"} {
		want, _ := marshalNoEscape(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
	}
}

func BenchmarkSeal(b *testing.B) {
	d, err := NewDraft("20261201-120000-0a1b2c3d", "turn-1", time.Now(), UserMessagePayload{Content: strings.Repeat("x", 700)})
	if err != nil {
		b.Fatal(err)
	}
	p, err := Prepare(d)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Seal(7, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	}
}
