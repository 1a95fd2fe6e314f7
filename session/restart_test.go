package session_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tools"
)

const restartDirEnv = "CUSTOM_AGENT_RESTART_DIR"

const restartScript = `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "echo first"}}]}
{"text": "重启了，我再问一次。", "toolCalls": [{"id": "tc_2", "name": "shell", "args": {"command": "echo second"}}]}
{"text": "好了。"}`

// blockingApprover tells the parent it was asked, then waits forever: the
// process dies with the ask pending.
type blockingApprover struct{}

func (blockingApprover) Ask(ctx context.Context, q executor.Question) (executor.Answer, error) {
	fmt.Println("asked", q.ToolCallID)
	select {}
}

func restartConfig(t *testing.T, dir string, store *sqlitestore.Store, m *script.Model, approver executor.Approver, clockStart time.Time) session.Config {
	arts, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	clock := clockStart
	return session.Config{
		Log: store, Model: m, Router: tools.NewRouter(), Artifacts: arts, Approver: approver,
		Now:   func() time.Time { clock = clock.Add(time.Millisecond); return clock },
		NewID: func() string { return "sess-1" },
	}
}

// TestRestartChild is the process that dies with an ask pending.
func TestRestartChild(t *testing.T) {
	dir := os.Getenv(restartDirEnv)
	if dir == "" {
		t.Skip("only runs as the child of TestRestartWithAskPending")
	}
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := script.Parse([]byte(restartScript))
	cfg := restartConfig(t, dir, store, m, blockingApprover{}, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	s := session.New(cfg, session.Info{Cwd: filepath.Join(dir, "cwd"), Home: dir, Mode: permission.ModeDefault})
	for range s.RunTurn(context.Background(), "跑一下") {
	}
}

// TestRestartWithAskPending kills a process while it waits for an answer,
// then starts again: the pending ask is resolved to deny ("process
// restarted") before anything else, and the session continues.
func TestRestartWithAskPending(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "cwd"), 0o755)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestartChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), restartDirEnv+"="+dir)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	asked := false
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "asked tc_1") {
			asked = true
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !asked {
		t.Fatal("the child never asked")
	}

	// The restart.
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	n, err := approval.RecoverPending(context.Background(), store, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	if err != nil || n != 1 {
		t.Fatalf("RecoverPending = %d, %v; want 1", n, err)
	}
	n, err = session.CloseAbandoned(context.Background(), store, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	if err != nil || n != 1 {
		t.Fatalf("CloseAbandoned = %d, %v; want 1", n, err)
	}
	m, _ := script.Parse([]byte(restartScript))
	for range m.Stream(context.Background(), model.Request{}) { // the dead process consumed line 1
	}
	cfg := restartConfig(t, dir, store, m, &answers{list: []string{"allow_once"}}, time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC))
	s, err := session.Resume(context.Background(), cfg, "sess-1", session.Info{Cwd: filepath.Join(dir, "cwd"), Home: dir, Mode: permission.ModeDefault})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range s.RunTurn(context.Background(), "继续") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Verify(context.Background(), "sess-1"); err != nil {
		t.Fatal(err)
	}
	checkReplay(t, store, "sess-1")
	var out strings.Builder
	for e, err := range store.Read(context.Background(), "sess-1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%3d %-26s %s %s\n", e.Seq, e.Type, e.TurnID, normalise(t, e, filepath.Join(dir, "cwd"), dir))
	}
	path := filepath.Join("testdata", "restart-with-ask-pending.golden")
	if *update {
		os.WriteFile(path, []byte(out.String()), 0o644)
	}
	want, _ := os.ReadFile(path)
	if string(want) != out.String() {
		t.Errorf("event chain differs from %s (go test -update rewrites it):\n%s", path, out.String())
	}
}
