package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/event"
)

// chatSessionOf returns the session id chat named as it ended.
func chatSessionOf(t *testing.T, errOut string) string {
	t.Helper()
	for _, line := range strings.Split(errOut, "\n") {
		if f := strings.Fields(line); len(f) == 5 && f[0] == "session" && f[2] == "(custom-agent" {
			return f[1]
		}
	}
	t.Fatalf("no session id in %q", errOut)
	return ""
}

// chatEvents decodes chat --json's stdout.
func chatEvents(t *testing.T, out string) []event.Event {
	t.Helper()
	var es []event.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not an event: %q: %v", line, err)
		}
		es = append(es, e)
	}
	return es
}

func payloadsOf[P any](t *testing.T, es []event.Event, typ event.Type) []P {
	t.Helper()
	var out []P
	for _, e := range es {
		if e.Type == typ {
			var p P
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}

// Without a terminal, chat reads prompts and answers from the same input:
// each question takes the lines it needs (one, or two for a destructive
// call), and the next line is the next prompt. Every turn is a turn of one
// session.
func TestChatLineProtocol(t *testing.T) {
	withoutBuiltinRules(t)
	data, cwd := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := writeScript(t, `{"text":"one","toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch one"}}]}
{"text":"done one"}
{"text":"two","toolCalls":[{"id":"t2","name":"shell","args":{"command":"touch two"}}]}
{"text":"done two"}
{"text":"three","toolCalls":[{"id":"t3","name":"shell","args":{"command":"touch three"}}]}
{"text":"done three"}
{"text":"four","toolCalls":[{"id":"t4","name":"shell","args":{"command":"rm -rf dist"}}]}
{"text":"done four"}
{"text":"five"}
`)
	input := strings.Join([]string{
		"make one", "allow_once",
		"", // blank lines are skipped
		"make two", "allow_session",
		"make three", "deny",
		"clean dist", "allow_once", "confirm",
		`"""`, "a prompt", "of two lines", `"""`,
		`continued \`, "here",
	}, "\n") + "\n"
	out, errOut, err := runWithInput(t, input, "--data-dir", data, "chat", "--model", "script:"+m, "--cwd", cwd, "--json")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, errOut)
	}
	es := chatEvents(t, out)
	ids := map[string]bool{}
	for _, e := range es {
		ids[e.SessionID] = true
	}
	if len(ids) != 1 {
		t.Fatalf("the turns ran in %d sessions, want one", len(ids))
	}
	var prompts []string
	for _, p := range payloadsOf[event.UserMessagePayload](t, es, event.UserMessage) {
		prompts = append(prompts, p.Content)
	}
	want := []string{"make one", "make two", "make three", "clean dist", "a prompt\nof two lines", "continued \nhere"}
	if d := cmp.Diff(want, prompts); d != "" {
		t.Errorf("prompts (-want +got):\n%s", d)
	}
	var answers []string
	for _, p := range payloadsOf[event.PermissionResolvedPayload](t, es, event.PermissionResolved) {
		answers = append(answers, p.Decision+" "+p.Option)
	}
	if d := cmp.Diff([]string{"allow allow_once", "allow allow_session", "deny deny", "allow allow_once"}, answers); d != "" {
		t.Errorf("answers (-want +got):\n%s\n%s", d, errOut)
	}
	if n := len(payloadsOf[event.TurnCompletedPayload](t, es, event.TurnCompleted)); n != 6 {
		t.Errorf("%d turns completed, want 6", n)
	}
	for f, exists := range map[string]bool{"one": true, "two": true, "three": false, "dist": false} {
		if _, err := os.Stat(filepath.Join(cwd, f)); (err == nil) != exists {
			t.Errorf("%s exists=%v, want %v", f, err == nil, exists)
		}
	}
	if id := chatSessionOf(t, errOut); !ids[id] {
		t.Errorf("chat named session %s, the turns ran in %v", id, ids)
	}
}

// The slash commands: /mode changes the mode (session.mode_changed),
// /permissions lists the session rule and revokes it (policy.changed op
// remove), a revoked rule stays revoked when the session is resumed, an
// unknown command gets a suggestion, and // sends a prompt.
func TestChatSlashCommands(t *testing.T) {
	withoutBuiltinRules(t)
	data, cwd := t.TempDir(), t.TempDir()
	m := writeScript(t, `{"toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch a"}}]}
{"text":"made a"}
{"text":"about the path"}
`)
	input := strings.Join([]string{
		"/help",
		"make a", "allow_session",
		"/permissions",
		"/permissions revoke nosuch",
		"/permissions revoke shell-touch-a",
		"/permissions",
		"/mode",
		"/mode plan",
		"/mode sideways",
		"/mdoe",
		"/verify",
		"/log",
		"//etc/hosts is what I mean",
		"/new",
		"/verify", // the new session has no events yet
		"/exit",
		"never sent",
	}, "\n") + "\n"
	_, errOut, err := runWithInput(t, input, "--data-dir", data, "chat", "--model", "script:"+m, "--cwd", cwd)
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, errOut)
	}
	for _, want := range []string{
		"/mode [NAME]", "/permissions [revoke ID | unapprove N]", // /help
		"shell-touch-a  allow  shell  command \"touch a\"  this session (/permissions revoke shell-touch-a)",
		"approved in this session, allowed again when identical (1)",
		`/permissions: no session rule has id "nosuch"`,
		"revoked session rule shell-touch-a (allow shell)",
		"session rules (0)",
		"approved in this session, allowed again when identical (0)", // the revoked rule's call went with it
		" * default ", "   dont-ask ",
		"mode: plan (was default)",
		`/mode: unknown mode "sideways" (want default, plan, accept-edits or dont-ask)`,
		"unknown command /mdoe; did you mean /mode?",
		"ok        ",
		"policy.changed",
		"new session; the last one was ",
		"has no events yet: it is recorded with its first turn",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("chat did not say %q:\n%s", want, errOut)
		}
	}
	// /new named the first session; the new one never ran a turn, so chat
	// names no session as it ends.
	named := regexp.MustCompile(`new session; the last one was (\S+) `).FindStringSubmatch(errOut)
	if named == nil {
		t.Fatalf("/new did not name the last session:\n%s", errOut)
	}
	id := named[1]
	if strings.Contains(errOut, "(custom-agent log "+id+")\n") && strings.Count(errOut, "(custom-agent log ") > 1 {
		t.Errorf("chat named a session at the end after /new:\n%s", errOut)
	}
	out, _, err := runWithInput(t, "", "--data-dir", data, "log", id, "--json")
	if err != nil {
		t.Fatal(err)
	}
	es := chatEvents(t, out)
	var ops []string
	for _, p := range payloadsOf[event.PolicyChangedPayload](t, es, event.PolicyChanged) {
		ops = append(ops, p.Level+" "+p.Op)
	}
	if d := cmp.Diff([]string{"session add", "session remove"}, ops); d != "" {
		t.Errorf("policy.changed (-want +got):\n%s", d)
	}
	if n := len(payloadsOf[event.ModeChangedPayload](t, es, event.ModeChanged)); n != 1 {
		t.Errorf("%d session.mode_changed, want 1", n)
	}
	var prompts []string
	for _, p := range payloadsOf[event.UserMessagePayload](t, es, event.UserMessage) {
		prompts = append(prompts, p.Content)
	}
	if d := cmp.Diff([]string{"make a", "/etc/hosts is what I mean"}, prompts); d != "" {
		t.Errorf("prompts (-want +got):\n%s", d)
	}

	// Resumed, the session has no rule for touch a any more: it is asked
	// (and denied for want of an answer).
	again := writeScript(t, `{"toolCalls":[{"id":"t9","name":"shell","args":{"command":"touch a"}}]}
{"text":"asked"}
`)
	out, errOut, err = runWithInput(t, "deny\n", "--data-dir", data, "run", "--model", "script:"+again, "--cwd", cwd, "--session", id, "--mode", "default", "--json", "again")
	if err != nil {
		t.Fatalf("run --session: %v\n%s", err, errOut)
	}
	if asked := payloadsOf[event.PermissionRequestedPayload](t, chatEvents(t, out), event.PermissionRequested); len(asked) != 1 {
		t.Errorf("the revoked rule came back: touch a was asked %d times, want 1\n%s", len(asked), out)
	}
}

func TestParseInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want prompt
		ok   bool
	}{
		{"hello", prompt{text: "hello"}, true},
		{"/mode plan", prompt{isCommand: true, command: "mode plan"}, true},
		{"/", prompt{isCommand: true}, true},
		{"//x", prompt{text: "/x"}, true},
		{" /etc/hosts", prompt{text: " /etc/hosts"}, true},
		{"   ", prompt{}, false},
		{"", prompt{}, false},
	}
	for _, tt := range tests {
		got, ok := parseInput(tt.line)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseInput(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestUnknownSlashSuggests(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"hlep":  "did you mean /help?",
		"perm":  "did you mean /permissions?",
		"quite": "did you mean /quit?",
		"zzzz":  "(/help lists the commands",
	} {
		if got := unknownSlash(name); !strings.Contains(got, want) {
			t.Errorf("unknownSlash(%q) = %q, want it to hold %q", name, got, want)
		}
	}
	if !slices.ContainsFunc(slashCommands, func(s slashCommand) bool { return s.name == "exit" }) {
		t.Error("no /exit")
	}
}

// Issue 25: /permissions unapprove N revokes one approved call (recorded
// as policy.changed op revoke_approval); the same call is asked again.
func TestChatUnapprovesOneCall(t *testing.T) {
	withoutBuiltinRules(t)
	data, cwd := t.TempDir(), t.TempDir()
	m := writeScript(t, `{"toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch a"}}]}
{"text":"made a"}
{"toolCalls":[{"id":"t2","name":"shell","args":{"command":"touch a"}}]}
{"text":"made a again"}
`)
	input := strings.Join([]string{
		"make a", "allow_once",
		"/permissions",
		"/permissions unapprove 2",
		"/permissions unapprove 1",
		"/permissions",
		"again", "deny",
		"/exit",
	}, "\n") + "\n"
	_, errOut, err := runWithInput(t, input, "--data-dir", data, "chat", "--model", "script:"+m, "--cwd", cwd)
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, errOut)
	}
	for _, want := range []string{
		"approved in this session, allowed again when identical (1)",
		"1. shell {\"command\":\"touch a\"} · risk execute (/permissions unapprove 1)",
		`no approved call numbered "2": /permissions lists 1`,
		"revoked the approval of shell {\"command\":\"touch a\"}: the same call is asked again",
		"approved in this session, allowed again when identical (0)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("chat did not say %q:\n%s", want, errOut)
		}
	}
	named := regexp.MustCompile(`\(custom-agent log (\S+)\)`).FindStringSubmatch(errOut)
	if named == nil {
		t.Fatalf("chat named no session:\n%s", errOut)
	}
	out, _, err := runWithInput(t, "", "--data-dir", data, "log", named[1], "--json")
	if err != nil {
		t.Fatal(err)
	}
	var asked, revokes int
	for _, e := range chatEvents(t, out) {
		switch e.Type {
		case event.PermissionRequested:
			asked++
		case event.PolicyChanged:
			revokes++
		}
	}
	if asked != 2 || revokes != 1 {
		t.Errorf("%d questions and %d policy.changed, want 2 (the same call asked again) and 1 (the revoke)", asked, revokes)
	}
}
