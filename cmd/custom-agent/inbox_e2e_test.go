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
	"github.com/custom-agent/custom-agent/support/datadir"
	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// TestAnswerFromAnotherProcess: `custom-agent run`, a process of its own,
// asks about a shell call and waits (its stdin stays open and silent). This
// process, as the web UI would, finds the open question in the log through
// a second store handle on the same SQLite file and offers an answer. The
// run's relay takes it: the tool runs, permission.resolved has actor user
// and ui "web", the run's open question closes saying where it was
// answered, and a second offer is refused.
func TestAnswerFromAnotherProcess(t *testing.T) {
	w := startWaitingRun(t)
	ctx, web, session, open, cwd := context.Background(), w.web, w.session, w.open, w.cwd
	exited, stderr := w.exited, w.stderr
	var waitErr error
	ans := eventlog.Answer{SessionID: session, ToolCallID: "t1", Option: "allow_once", UI: "web", At: time.Now(), RequestSeq: open[0].Seq}
	if err := web.OfferAnswer(ctx, ans); err != nil {
		t.Fatal(err)
	}
	// Unanswered, the run denies after --approval-timeout and ends; a
	// run that hangs is killed when the test ends.
	<-exited
	waitErr = *w.waitErr
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

// waitingRun is a `custom-agent run`, a process of its own, waiting on a
// question about a shell call (its stdin open and silent), with a second
// store handle on its log, as the web UI has.
type waitingRun struct {
	data, cwd, home string
	web             *sqlitestore.Store
	session         string
	open            []approval.OpenAsk
	exited          chan struct{}
	waitErr         *error
	stderr          *testenv.Buffer
}

func startWaitingRun(t *testing.T) *waitingRun {
	t.Helper()
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
	t.Cleanup(func() { stdin.Close() })
	var stdout testenv.Buffer
	w := &waitingRun{data: data, cwd: cwd, home: home, exited: make(chan struct{}), waitErr: new(error), stderr: new(testenv.Buffer)}
	c.Stdout, c.Stderr = &stdout, w.stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { *w.waitErr = c.Wait(); close(w.exited) }()
	t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			_ = c.Process.Kill()
			<-w.exited
		}
	})
	ctx := context.Background()
	path := filepath.Join(data, datadir.LogFile)
	// Wait for the question: by counting looks, not by a timed assertion
	// (a look is a few milliseconds; the bound is generous).
	for i := 0; ; i++ {
		if i == 2000 {
			t.Fatalf("no open question in the log; the run's stderr:\n%s", w.stderr.String())
		}
		select {
		case <-w.exited:
			t.Fatalf("run exited before it asked: %v\n%s", *w.waitErr, w.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if w.web == nil {
			if _, err := os.Stat(path); err != nil {
				continue
			}
			if w.web, err = sqlitestore.Open(ctx, path, nil); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.web.Close() })
		}
		ss, err := w.web.Sessions(ctx)
		if err != nil || len(ss) == 0 {
			continue
		}
		w.session = ss[0].ID
		if w.open, err = approval.OpenAsks(ctx, w.web, w.session); err != nil {
			t.Fatal(err)
		}
		if len(w.open) > 0 {
			break
		}
	}
	if len(w.open) != 1 || w.open[0].Request.ToolCallID != "t1" {
		t.Fatalf("open questions: %+v", w.open)
	}
	return w
}

// TestSecondProcessLeavesLiveAskOpen: while `custom-agent run` waits on a
// question, a second run starts in the same data directory. Its start-up
// recovery must leave the first run's question and turn alone (the first
// process is alive: it holds its session's lease), and the question can
// still be answered, from another UI here. Before leases, the second run
// closed them as "process restarted".
func TestSecondProcessLeavesLiveAskOpen(t *testing.T) {
	w := startWaitingRun(t)
	ctx := context.Background()
	script := filepath.Join(t.TempDir(), "done.jsonl")
	if err := os.WriteFile(script, []byte(`{"text":"nothing to do"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	second := exec.Command(self, "--data-dir", w.data, "run", "--model", "script:"+script, "--cwd", w.cwd, "hello")
	second.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"), "TMPDIR=" + os.TempDir(), asCLI + "=1"}
	if out, err := second.CombinedOutput(); err != nil {
		t.Fatalf("the second run: %v\n%s", err, out)
	} else if strings.Contains(string(out), "left pending") {
		t.Errorf("the second run closed a question:\n%s", out)
	}
	open, err := approval.OpenAsks(ctx, w.web, w.session)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 {
		var types []string
		for e, err := range w.web.Read(ctx, w.session, 1) {
			if err != nil {
				t.Fatal(err)
			}
			types = append(types, string(e.Type))
		}
		t.Fatalf("after a second process started, the live run's open questions: %d, want 1; its log: %v", len(open), types)
	}
	ans := eventlog.Answer{SessionID: w.session, ToolCallID: "t1", Option: "allow_once", UI: "web", At: time.Now(), RequestSeq: open[0].Seq}
	if err := w.web.OfferAnswer(ctx, ans); err != nil {
		t.Fatal(err)
	}
	<-w.exited
	if *w.waitErr != nil {
		t.Fatalf("the first run: %v\n%s", *w.waitErr, w.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "ran.txt")); err != nil {
		t.Fatalf("the tool did not run after the answer: %v\n%s", err, w.stderr.String())
	}
	if err := w.web.Verify(ctx, w.session); err != nil {
		t.Fatal(err)
	}
}
