package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
)

// seedSession records a session with the given payloads, one second apart
// from t0.
func seedSession(t *testing.T, dir, id string, t0 time.Time, payloads ...event.Payload) {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, p := range payloads {
		d, err := event.NewDraft(id, "turn-1", t0.Add(time.Duration(i)*time.Second), p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
}

// threeSessions seeds s5 (completed), "running" (a turn open), "stopped"
// (cancelled, continued in another directory with another model) and
// "failed" (max_steps), newest last.
func threeSessions(t *testing.T) string {
	dir := t.TempDir()
	seedSection5(t, dir) // 2026-11-30T09:00
	day := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	seedSession(t, dir, "stopped", day,
		event.SessionStartedPayload{Cwd: "/home/u/a", Mode: "default", Model: "openai:gpt-4.1"},
		event.TurnStartedPayload{},
		event.UserMessagePayload{Content: "first\x1b]0;pwned\x07 prompt"},
		event.TurnCompletedPayload{StopReason: event.StopFinal},
		event.TurnStartedPayload{Cwd: "/home/u/b", Model: "anthropic:claude-sonnet-4-5", Mode: "plan"},
		event.UserMessagePayload{Content: "second prompt"},
		event.TurnCompletedPayload{StopReason: event.StopCancelled},
	)
	seedSession(t, dir, "failed", day.Add(time.Hour),
		event.SessionStartedPayload{Cwd: "/srv/x", Mode: "default", Model: "script:s.jsonl"},
		event.TurnStartedPayload{},
		event.UserMessagePayload{Content: "loop"},
		event.TurnCompletedPayload{StopReason: event.StopMaxSteps},
	)
	seedSession(t, dir, "running", day.Add(2*time.Hour),
		event.SessionStartedPayload{Cwd: "/srv/y", Mode: "default", Model: "script:s.jsonl"},
		event.TurnStartedPayload{},
		event.UserMessagePayload{Content: "go"},
	)
	return dir
}

func tamper(t *testing.T, dir, id string, seq int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "events.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(`UPDATE events SET payload = replace(payload, 'allow_once', 'allow_session') WHERE sid = (SELECT sid FROM sessions WHERE session_id = ?) AND seq = ?`, id, seq)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("tampered with %d rows", n)
	}
}

func TestSessionsShowStateChainAndWhere(t *testing.T) {
	dir := threeSessions(t)
	tamper(t, dir, "s5", 8)

	out, _, err := runCLI(t, "--data-dir", dir, "sessions", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []sessionSummary
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	type row struct{ id, cwd, model, mode, prompt, state, stop string }
	want := []row{
		{"running", "/srv/y", "script:s.jsonl", "default", "go", StateOpen, ""},
		{"failed", "/srv/x", "script:s.jsonl", "default", "loop", StateError, event.StopMaxSteps},
		{"stopped", "/home/u/b", "anthropic:claude-sonnet-4-5", "plan", "first\x1b]0;pwned\x07 prompt", StateCancelled, event.StopCancelled},
		{"s5", "/Users/u/project", "script:demo.jsonl", "default", "把测试跑一遍", StateCompleted, event.StopFinal},
	}
	if len(got) != len(want) {
		t.Fatalf("sessions --json listed %d sessions, want %d:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		g := got[i]
		if (row{g.ID, g.Cwd, g.Model, g.Mode, g.FirstPrompt, g.State, g.StopReason}) != w {
			t.Errorf("session %d = %+v, want %+v", i, row{g.ID, g.Cwd, g.Model, g.Mode, g.FirstPrompt, g.State, g.StopReason}, w)
		}
		if g.Verified != (g.ID != "s5") || (g.ChainError != "") != (g.ID == "s5") {
			t.Errorf("session %s: verified %v (%q)", g.ID, g.Verified, g.ChainError)
		}
	}
	if !strings.Contains(out, `"events": 12`) || !strings.Contains(out, `"headHash"`) {
		t.Errorf("sessions --json lost the fields it had:\n%s", out)
	}

	out, errOut, err := runCLI(t, "--data-dir", dir, "sessions")
	if err != nil {
		t.Fatal(err)
	}
	if want := "custom-agent: warning: the hash chain of session s5 does not verify: session s5: chain broken at seq 8"; !strings.Contains(errOut, want) {
		t.Errorf("sessions stderr %q lacks %q", errOut, want)
	}
	for _, want := range []string{
		"SESSION", "STATE", "CHAIN", "FIRST PROMPT",
		"running", "open", "error (max_steps)", "cancelled", "completed", "BROKEN",
		`first\x1b]0;pwned\a prompt`, "/home/u/b", "anthropic:claude-sonnet-4-5",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sessions lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) {
		t.Errorf("sessions printed a control character from the log:\n%q", out)
	}
}

func TestLogLastAndArtifactsAndChainWarning(t *testing.T) {
	dir := t.TempDir()
	seedSection5(t, dir)
	byID, _, err := runCLI(t, "--data-dir", dir, "log", "s5")
	if err != nil {
		t.Fatal(err)
	}
	last, lastErr, err := runCLI(t, "--data-dir", dir, "log", "last")
	if err != nil || last != byID || lastErr != "" {
		t.Fatalf("log last = %q, %q, %v; want the same as log s5:\n%s", last, lastErr, err, byID)
	}
	if !strings.Contains(byID, "artifact stdout sha256:0f (1840B)") {
		t.Errorf("log does not name the artifact's digest:\n%s", byID)
	}
	if out, _, err := runCLI(t, "--data-dir", dir, "audit", "verify", "last"); err != nil || !strings.Contains(out, "ok        s5") {
		t.Fatalf("audit verify last: %q %v", out, err)
	}

	tamper(t, dir, "s5", 8)
	for _, args := range [][]string{{"log", "s5"}, {"log", "last", "--json"}} {
		out, errOut, err := runCLI(t, append([]string{"--data-dir", dir}, args...)...)
		if err != nil || out == "" {
			t.Fatalf("%v on a tampered session: %v", args, err)
		}
		if !strings.Contains(errOut, "warning: the hash chain of session s5 does not verify") || !strings.Contains(errOut, "first bad seq 8") {
			t.Errorf("%v on a tampered session does not warn: stderr %q", args, errOut)
		}
	}
	if _, _, err := runCLI(t, "--data-dir", dir, "log", "s5", "--from", "99"); exitCode(err) != 1 || !strings.Contains(err.Error(), "session s5 has no events with seq ≥ 99") {
		t.Errorf("log --from past the end: %v", err)
	}
}

// TestUnknownSessionIsTheSameErrorEverywhere: every command that takes a
// session id says the same about one that names none, and points to sessions.
func TestUnknownSessionIsTheSameErrorEverywhere(t *testing.T) {
	full := t.TempDir()
	seedSection5(t, full)
	empty := filepath.Join(t.TempDir(), "none") // no log file at all
	for _, dir := range []string{full, empty} {
		want := `custom-agent: no session "nope" in ` + dir + ` (custom-agent sessions lists the recorded ones; "last" is the most recent)`
		for _, args := range [][]string{{"log", "nope"}, {"log", "nope", "--json"}, {"log", "nope", "--follow"}, {"audit", "verify", "nope"}} {
			_, _, err := runCLI(t, append([]string{"--data-dir", dir}, args...)...)
			if exitCode(err) != 1 || err.Error() != want {
				t.Errorf("%s %v: exit %d, %v; want exit 1, %q", filepath.Base(dir), args, exitCode(err), err, want)
			}
		}
	}
	_, _, err := runCLI(t, "--data-dir", empty, "log", "last")
	if exitCode(err) != 1 || !strings.Contains(err.Error(), `no sessions are recorded in `+empty+` yet, so "last" names none`) {
		t.Errorf("log last without sessions: %v", err)
	}
}
