package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/internal/datadir"
	"github.com/custom-agent/custom-agent/internal/testenv"
)

// TestAnswerFromAnotherProcess: `custom-agent run`, a process of its own,
// asks about a shell call and waits (its stdin stays open and silent). This
// process, as the web UI would, finds the open question in the log through
// a second store handle on the same SQLite file and offers an answer. The
// run's relay takes it: the tool runs, permission.resolved has actor user
// and ui "web", the run's open question closes saying where it was
// answered, and a second offer is refused.
func TestAnswerFromAnotherProcess(t *testing.T) {
	testenv.NeedProgram(t, "touch")
	data, cwd, home := t.TempDir(), t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(script, []byte(`{"text":"touching","toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch ran.txt"}}]}
{"text":"done"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self, "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "--json", "--approval-timeout", "20s", "touch a file")
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "TMPDIR=" + os.TempDir(), asCLI + "=1"}
	stdin, err := c.StdinPipe() // open and silent: the terminal never answers
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stdout, stderr testenv.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = c.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			_ = c.Process.Kill()
			<-exited
		}
	}()

	ctx := context.Background()
	path := filepath.Join(data, datadir.LogFile)
	var web *sqlitestore.Store
	var session string
	var open []approval.OpenAsk
	// Wait for the question: by counting looks, not by a timed assertion
	// (a look is a few milliseconds; the bound is generous).
	for i := 0; ; i++ {
		if i == 2000 {
			t.Fatalf("no open question in the log; the run's stderr:\n%s", stderr.String())
		}
		select {
		case <-exited:
			t.Fatalf("run exited before it asked: %v\n%s", waitErr, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if web == nil {
			if _, err := os.Stat(path); err != nil {
				continue
			}
			if web, err = sqlitestore.Open(ctx, path, nil); err != nil {
				t.Fatal(err)
			}
			defer web.Close()
		}
		ss, err := web.Sessions(ctx)
		if err != nil || len(ss) == 0 {
			continue
		}
		session = ss[0].ID
		if open, err = approval.OpenAsks(ctx, web, session); err != nil {
			t.Fatal(err)
		}
		if len(open) > 0 {
			break
		}
	}
	if len(open) != 1 || open[0].Request.ToolCallID != "t1" {
		t.Fatalf("open questions: %+v", open)
	}
	ans := eventlog.Answer{SessionID: session, ToolCallID: "t1", Option: "allow_once", UI: "web", At: time.Now(), RequestSeq: open[0].Seq}
	if err := web.OfferAnswer(ctx, ans); err != nil {
		t.Fatal(err)
	}
	// Unanswered, the run denies after --approval-timeout and ends; a
	// run that hangs is killed when the test ends.
	<-exited
	if waitErr != nil {
		t.Fatalf("run: %v\n%s", waitErr, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(cwd, "ran.txt")); err != nil {
		t.Fatalf("the tool did not run after the web's allow: %v\n%s", err, stderr.String())
	}
	var resolved []event.PermissionResolvedPayload
	started := false
	for e, err := range web.Read(ctx, session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case event.PermissionResolved:
			var p event.PermissionResolvedPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			resolved = append(resolved, p)
		case event.ToolStarted:
			started = len(resolved) == 1
		}
	}
	if len(resolved) != 1 || resolved[0].Actor != event.ActorUser || resolved[0].UI != "web" || resolved[0].Option != "allow_once" || resolved[0].Decision != "allow" {
		t.Fatalf("permission.resolved: %+v; want one allow_once by user from web", resolved)
	}
	if !started {
		t.Fatal("no tool.started after permission.resolved")
	}
	if err := web.Verify(ctx, session); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "answered in the web UI: allow once") {
		t.Errorf("the run's question did not close saying where it was answered:\n%s", stderr.String())
	}
	// A second answer to the same question is refused.
	ans.Option, ans.UI = "deny", "web"
	if err := web.OfferAnswer(ctx, ans); !errors.Is(err, eventlog.ErrAnswered) {
		t.Fatalf("a second offer: %v, want ErrAnswered", err)
	}
}
