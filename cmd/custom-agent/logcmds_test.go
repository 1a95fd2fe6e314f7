package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runCLI runs the command in-process and returns stdout, stderr and the error.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs (go test -update rewrites it):\n--- want\n%s\n--- got\n%s", name, want, got)
	}
}

// seedSection5 records the spec's §5 worked example as session "s5".
func seedSection5(t *testing.T, dir string) {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	args := json.RawMessage(`{"command":"npm test","cwd":"/Users/u/project"}`)
	zero := 0
	payloads := []event.Payload{
		event.SessionStartedPayload{Cwd: "/Users/u/project", Mode: "default", Model: "script:demo.jsonl"},
		event.TurnStartedPayload{},
		event.UserMessagePayload{Content: "把测试跑一遍"},
		event.ContextBuiltPayload{MessageCount: 1},
		event.ModelDeltaPayload{Text: "我来跑 npm test。"},
		event.ModelToolCallRequestedPayload{ToolCallID: "tc_xyz", Tool: "shell", Args: args},
		event.PermissionRequestedPayload{ToolCallID: "tc_xyz", Tool: "shell", Args: args, RiskAtDecision: 3, SourcedFrom: "default", SuggestedDecision: "ask", Reason: "shell runs commands; execute is asked by default", Options: []string{"allow_once", "allow_session", "allow_project", "deny"}, TimeoutMs: 30000},
		event.PermissionResolvedPayload{ToolCallID: "tc_xyz", Decision: "allow", Reason: "user approved (allow_once)", Actor: event.ActorUser, RiskAtDecision: 3, SourcedFrom: "default", Option: "allow_once"},
		event.ToolStartedPayload{ToolCallID: "tc_xyz", Tool: "shell", Args: args},
		event.ToolCompletedPayload{ToolCallID: "tc_xyz", ExitCode: &zero, StdoutBytes: 1840, DurationMs: 12340, StdoutPreview: "PASS  packages/storage/src/...\n", Artifacts: []event.Artifact{{Name: "stdout", Digest: "sha256:0f", Bytes: 1840}}},
		event.ModelDeltaPayload{Text: "测试全过，共 27 条。"},
		event.TurnCompletedPayload{StopReason: event.StopFinal},
	}
	for i, p := range payloads {
		d, err := event.NewDraft("s5", "turn-1", t0.Add(time.Duration(i)*time.Second), p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLogCommands(t *testing.T) {
	dir := t.TempDir()
	seedSection5(t, dir)

	out, _, err := runCLI(t, "--data-dir", dir, "log", "s5")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "log-s5.golden", out)

	out, _, err = runCLI(t, "--data-dir", dir, "log", "s5", "--json")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "log-s5.jsonl.golden", out)
	// The JSONL is the stored events: each line decodes and re-encodes to itself.
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(e)
		if string(b) != line || e.ComputeHash() != e.Hash {
			t.Fatalf("JSONL line does not round-trip or verify: %s", line)
		}
	}

	out, _, err = runCLI(t, "--data-dir", dir, "sessions", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sessions []struct {
		ID     string `json:"id"`
		Events int    `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &sessions); err != nil || len(sessions) != 1 || sessions[0].ID != "s5" || sessions[0].Events != 12 {
		t.Fatalf("sessions --json = %s (%v)", out, err)
	}

	out, _, err = runCLI(t, "--data-dir", dir, "audit", "verify", "s5")
	if err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("verify intact: %q %v", out, err)
	}

	if _, _, err := runCLI(t, "--data-dir", dir, "log", "nope"); exitCode(err) != 1 {
		t.Fatalf("log of an unknown session: %v, want exit 1", err)
	}
	if _, _, err := runCLI(t, "--data-dir", dir, "audit", "verify"); err == nil {
		t.Fatal("verify without a session or --all succeeded")
	}

	// Tamper with seq 8 (the user's approval) and verify again.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "events.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE events SET payload = replace(payload, 'allow_once', 'allow_session') WHERE seq = 8`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, _, err = runCLI(t, "--data-dir", dir, "audit", "verify", "--all")
	if exitCode(err) != 1 || !strings.Contains(out, "TAMPERED  s5  first bad seq 8") {
		t.Fatalf("verify tampered: %q, %v; want exit 1 naming seq 8", out, err)
	}
}

func TestSessionsWithoutLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	out, errOut, err := runCLI(t, "--data-dir", dir, "sessions")
	if err != nil || out != "" || !strings.Contains(errOut, "no sessions yet") {
		t.Fatalf("sessions without a log: %q %q %v", out, errOut, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("listing sessions created the data dir")
	}
	out, _, err = runCLI(t, "--data-dir", dir, "sessions", "--json")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Fatalf("sessions --json without a log: %q %v", out, err)
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	root := newRootCmd()
	for _, c := range root.Commands() {
		if c.Short == "" {
			t.Errorf("command %q has no short help", c.Name())
		}
		for _, sub := range c.Commands() {
			if sub.Short == "" {
				t.Errorf("command %q %q has no short help", c.Name(), sub.Name())
			}
		}
	}
	out, _, err := runCLI(t, "completion", "bash")
	if err != nil || !strings.Contains(out, "custom-agent") {
		t.Fatalf("bash completion: %v", err)
	}
}

func exitCode(err error) int {
	var ex *exitError
	if errors.As(err, &ex) {
		return ex.code
	}
	if err != nil {
		return 2
	}
	return 0
}

// TestLogFollow follows a session while another store (as another process
// would) appends to it, and stops cleanly when its context ends.
func TestLogFollow(t *testing.T) {
	dir := t.TempDir()
	seedSection5(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out testenv.Buffer
	root := newRootCmd()
	root.SetArgs([]string{"--data-dir", dir, "log", "s5", "--follow", "--from", "12"})
	root.SetOut(&out)
	root.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	waitFor := func(substr string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), substr) {
			if time.Now().After(deadline) {
				t.Fatalf("log --follow never printed %q; got:\n%s", substr, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("turn.completed")
	s, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := event.NewDraft("s5", "turn-2", time.Now(), event.UserMessagePayload{Content: "再清理一遍"})
	if _, err := s.Append(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	s.Close()
	waitFor(`"再清理一遍"`)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("log --follow ended with %v after cancel", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("log --follow did not stop when its context was cancelled")
	}
	if strings.Contains(out.String(), "    1  ") {
		t.Fatal("--from 12 printed seq 1")
	}
}
