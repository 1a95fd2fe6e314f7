package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/support/datadir"
)

// sessionOf returns the session id "run" printed on stderr.
func sessionOf(t *testing.T, errOut string) string {
	t.Helper()
	for _, line := range strings.Split(errOut, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "session" {
			return f[1]
		}
	}
	t.Fatalf("no session id in %q", errOut)
	return ""
}

func writeScript(t *testing.T, lines string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunSessionLastAndMovedAndTampered (issue 10 items 3 and 13): "last"
// continues the newest session; continuing it in another directory says so
// and asks again; a session whose chain was edited is refused.
func TestRunSessionLastAndMovedAndTampered(t *testing.T) {
	withoutBuiltinRules(t)
	data, a, b := t.TempDir(), t.TempDir(), t.TempDir()
	m := writeScript(t, `{"toolCalls":[{"id":"t1","name":"shell","args":{"command":"go env GOOS"}}]}
{"text":"ok"}
{"toolCalls":[{"id":"t2","name":"shell","args":{"command":"go env GOARCH"}}]}
{"text":"asked again"}
`)
	_, errOut, err := runWithInput(t, "allow_session\n", "--data-dir", data, "run", "--model", "script:"+m, "--cwd", a, "--json", "in A")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	id := sessionOf(t, errOut)
	out, errOut, err := runWithInput(t, "deny\n", "--data-dir", data, "run", "--model", "script:"+m, "--cwd", b, "--session", "last", "--json", "in B")
	if err != nil {
		t.Fatalf("run --session last: %v\n%s", err, errOut)
	}
	if got := sessionOf(t, errOut); got != id {
		t.Fatalf("last continued %s, want %s", got, id)
	}
	if !strings.Contains(errOut, "last ran in ") || !strings.Contains(errOut, "1 session rule(s)") || !strings.Contains(errOut, "asked again") {
		t.Fatalf("moving the session was not announced:\n%s", errOut)
	}
	var asked, moved bool
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		json.Unmarshal([]byte(line), &e)
		switch e.Type {
		case event.PermissionRequested:
			asked = true
		case event.TurnStarted:
			var p event.TurnStartedPayload
			json.Unmarshal(e.Payload, &p)
			moved = p.CwdChangedFrom != "" && p.Cwd != p.CwdChangedFrom
		}
	}
	if !asked || !moved {
		t.Fatalf("in B: asked=%v, turn.started records the move=%v\n%s", asked, moved, out)
	}

	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, datadir.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE events SET payload = '{"content":"something else"}' WHERE seq = 3 AND sid = (SELECT sid FROM sessions WHERE session_id = ?)`, id); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, errOut, err = runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+m, "--cwd", a, "--session", id, "again")
	if err == nil || !strings.Contains(err.Error(), "does not verify, so it is not continued") || !strings.Contains(err.Error(), "audit verify "+id) {
		t.Fatalf("a tampered session was continued: %v\n%s", err, errOut)
	}
}

func TestPromptFromStdinAndFile(t *testing.T) {
	m := writeScript(t, `{"text":"ok"}
`)
	file := filepath.Join(t.TempDir(), "task.md")
	os.WriteFile(file, []byte("from the file\n"), 0o644)
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
		err   string
	}{
		{stdin: "from stdin\n", args: []string{"-"}, want: "from stdin\n"},
		{args: []string{"@" + file}, want: "from the file\n"},
		{args: []string{"--prompt-file", file}, want: "from the file\n"},
		{stdin: "piped", args: []string{"--prompt-file", "-"}, want: "piped"},
		{args: []string{"--prompt-file", file, "also"}, err: "not both"},
		{args: nil, err: "no prompt"},
		{stdin: " \n", args: []string{"-"}, err: "the prompt is empty"},
		{args: []string{"@" + file + ".missing"}, err: "reading the prompt"},
	} {
		args := append([]string{"--data-dir", t.TempDir(), "run", "--model", "script:" + m, "--cwd", t.TempDir(), "--json"}, tc.args...)
		out, errOut, err := runWithInput(t, tc.stdin, args...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v\n%s", tc.args, err, errOut)
			continue
		}
		want, _ := json.Marshal(tc.want)
		if !strings.Contains(out, `"payload":{"content":`+string(want)+`}`) {
			t.Errorf("%v: user.message is not %q:\n%s", tc.args, tc.want, out)
		}
	}
}

// TestRunSessionSkipsHookSessions: a hook session (Claude Code's or Gemini
// CLI's calls, recorded by custom-agent hook) holds another agent's tool
// output; "last" skips it, and naming it is refused, so that its output
// never reaches our model.
func TestRunSessionSkipsHookSessions(t *testing.T) {
	withoutBuiltinRules(t)
	data, a := t.TempDir(), t.TempDir()
	m := writeScript(t, `{"text":"ok"}
{"text":"again"}
`)
	_, errOut, err := runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+m, "--cwd", a, "--json", "in A")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	id := sessionOf(t, errOut)
	hookID := "claude-code-9f1c"
	seedSession(t, data, hookID, time.Now().Add(time.Hour),
		event.SessionStartedPayload{Cwd: a, Mode: "default", SessionSource: "claude-code"},
		event.ModelToolCallRequestedPayload{ToolCallID: "toolu_1", Tool: "Bash", Args: json.RawMessage(`{"command":"cat README.md"}`)},
	)
	_, errOut, err = runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+m, "--cwd", a, "--session", "last", "--json", "more")
	if err != nil {
		t.Fatalf("run --session last: %v\n%s", err, errOut)
	}
	if got := sessionOf(t, errOut); got != id {
		t.Fatalf("last continued %s, want %s (not the hook session)", got, id)
	}
	_, errOut, err = runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+m, "--cwd", a, "--session", hookID, "more")
	if err == nil || !strings.Contains(err.Error(), "hook session") {
		t.Fatalf("the hook session was continued: %v\n%s", err, errOut)
	}
}
