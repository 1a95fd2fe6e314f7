package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
)

// TestTwoHostsAskAndAnswer: two "hosts" (a custom-agent run process with
// its own data directory, and this test with another) share one
// PostgreSQL log. The run asks before a shell command; nobody answers at
// its terminal (its stdin stays open and silent). The other host follows
// the session, sees the permission.requested, and offers an answer through
// the store's inbox; the run takes it, records permission.resolved by the
// user from the web UI, runs the command and ends. Both hosts read the
// same chain, and it verifies.
func TestTwoHostsAskAndAnswer(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.CreateDB(t)
	hostA, cwd := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"text":"making it","toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch made-on-host-a"}}]}
{"text":"done"}
`), 0o644)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, self, "--data-dir", hostA, "--store", url, "run", "--model", "script:"+script,
		"--cwd", cwd, "--approval-timeout", "90s", "--json", "make the file")
	run.Env = append(os.Environ(), asCLI+"=1", "XDG_CONFIG_HOME="+t.TempDir(), "CUSTOM_AGENT_SANDBOX=off")
	stdin, err := run.StdinPipe() // open and silent: only the other host answers
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var out, errOut bytes.Buffer
	run.Stdout, run.Stderr = &out, &errOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()

	// Host B: its own store on the same log (it reads, and writes answers
	// as the web UI would).
	b, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var session string
	for session == "" {
		ss, err := b.Sessions(ctx)
		if err == nil && len(ss) > 0 {
			session = ss[0].ID
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("run ended before it asked: %v\n%s\n%s", err, out.String(), errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	var seen []event.Event
	answered := false
	for e, err := range eventlog.Follow(ctx, b, session, 1, 0) {
		if err != nil {
			t.Fatalf("following on host B: %v\n%s", err, errOut.String())
		}
		seen = append(seen, e)
		if e.Type == event.PermissionRequested && !answered {
			var p event.PermissionRequestedPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			// A process starting on host B recovers what dead processes
			// left open, and nothing of host A's live run: A holds its
			// session's lease (an advisory lock).
			quiet := filepath.Join(t.TempDir(), "quiet.jsonl")
			os.WriteFile(quiet, []byte(`{"text":"nothing"}`+"\n"), 0o644)
			second := exec.CommandContext(ctx, self, "--data-dir", t.TempDir(), "--store", url, "run", "--model", "script:"+quiet, "--cwd", cwd, "hello")
			second.Env = append(os.Environ(), asCLI+"=1", "XDG_CONFIG_HOME="+t.TempDir(), "CUSTOM_AGENT_SANDBOX=off")
			if o, err := second.CombinedOutput(); err != nil {
				t.Fatalf("a second run on host B: %v\n%s", err, o)
			}
			if open, err := approval.OpenAsks(ctx, b, session); err != nil || len(open) != 1 {
				t.Fatalf("after a run started on host B, host A's open questions: %d (%v), want 1", len(open), err)
			}
			err := b.OfferAnswer(ctx, eventlog.Answer{SessionID: session, ToolCallID: p.ToolCallID, Option: "allow_once", UI: "web", At: time.Now(), RequestSeq: e.Seq})
			if err != nil {
				t.Fatal(err)
			}
			answered = true
		}
		if e.Type == event.TurnCompleted {
			break
		}
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("run: %v\n%s", err, errOut.String())
		}
	case <-ctx.Done():
		t.Fatal("run did not end")
	}
	if _, err := os.Stat(filepath.Join(cwd, "made-on-host-a")); err != nil {
		t.Fatalf("the command allowed from host B did not run on host A: %v", err)
	}
	var resolved *event.PermissionResolvedPayload
	for _, e := range seen {
		if e.Type == event.PermissionResolved {
			p, _ := e.Decode()
			resolved = p.(*event.PermissionResolvedPayload)
		}
	}
	if resolved == nil || resolved.Decision != "allow" || resolved.Actor != event.ActorUser || resolved.UI != "web" {
		t.Fatalf("permission.resolved on host B's view: %+v", resolved)
	}
	// Host A printed the same chain it wrote.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(seen) {
		t.Fatalf("host A printed %d events, host B saw %d", len(lines), len(seen))
	}
	for i, line := range lines {
		want, _ := json.Marshal(seen[i])
		if line != string(want) {
			t.Fatalf("event %d differs between the hosts:\n A: %s\n B: %s", i+1, line, want)
		}
	}
	if err := b.Verify(ctx, session); err != nil {
		t.Fatal(err)
	}
	t.Logf("session %s: %d events, asked on host A, answered from host B (%s by %s, ui %q)", session, len(seen), resolved.Decision, resolved.Actor, resolved.UI)
}
