package session_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tools"
)

const turnCrashEnv = "CUSTOM_AGENT_TURN_CRASH_DIR"

// TestTurnCrashChild is the child of TestTurnCrash: it runs turns of tool
// calls forever and prints every event a turn yields, one JSON line each,
// until it is killed.
func TestTurnCrashChild(t *testing.T) {
	dir := os.Getenv(turnCrashEnv)
	if dir == "" {
		t.Skip("only runs as the child of TestTurnCrash")
	}
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	arts, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	cwd := filepath.Join(dir, "project")
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		for k := 1; k <= 20; k++ {
			// A third of the files are kept whole in their events; the
			// others are longer than an event's preview: clean ones are
			// carried in the commit of the event naming them (into the
			// log), and those holding a secret go to the artifact
			// store's pack, which is synced before that commit.
			body := fmt.Appendf(nil, "child %d turn %d file %d\n", os.Getpid(), i, k)
			switch k % 3 {
			case 1:
				body = bytes.Repeat(body, executor.PreviewBytes/len(body)+1)
			case 2:
				body = append(bytes.Repeat(body, executor.PreviewBytes/len(body)+1), crashSecret...)
			}
			if err := os.WriteFile(filepath.Join(cwd, fmt.Sprintf("f-%d.txt", k)), body, 0o600); err != nil {
				panic(err)
			}
		}
		s := session.New(session.Config{Log: store, Model: callsModel{calls: 20}, Router: tools.NewRouter(), Artifacts: arts},
			session.Info{Cwd: cwd, Home: os.TempDir(), Mode: permission.ModeDefault})
		for e, err := range s.RunTurn(context.Background(), fmt.Sprintf("turn %d", i)) {
			if err != nil {
				fmt.Fprintln(os.Stderr, "turn:", err)
				os.Exit(4)
			}
			line, _ := json.Marshal(e)
			out.Write(line)
			out.WriteByte('\n')
			out.Flush() // shown to the reader: it must be in the log
		}
	}
}

// TestTurnCrash SIGKILLs a process running turns at random moments and
// proves each time that every event a turn showed its reader is in the log
// byte for byte (a deferred event is shown only once durable), that every
// session's log has no gap and verifies, and that every artifact a stored
// tool.completed names is there.
func TestTurnCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test kills child processes; skipped with -short")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "project"), 0o700); err != nil {
		t.Fatal(err)
	}
	shown, stores, carried, inEvent := 0, 0, 0, 0
	for round := 0; round < 6; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTurnCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), turnCrashEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan []string, 1)
		go func() {
			var got []string
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				got = append(got, sc.Text())
			}
			lines <- got
		}()
		time.Sleep(time.Duration(100+round*60) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		got := <-lines
		_ = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("child ended on its own before the kill")
		}
		shown += len(got)
		stores, carried, inEvent = checkTurnsAfterCrash(t, dir, got)
	}
	if shown == 0 {
		t.Fatal("no child showed any event before it was killed: the test proved nothing")
	}
	if stores == 0 || carried == 0 || inEvent == 0 {
		t.Fatalf("the log names %d outputs in the artifact store, %d it carried and %d whole in events: every kind must be crash-tested", stores, carried, inEvent)
	}
	t.Logf("%d events shown by killed turns, all found in the log", shown)
}

// crashSecret is a GitHub token (made up) the secret scanner finds: an
// output holding it may not be kept in the log.
const crashSecret = "token ghp_qHS2VFTMtxgRLP17NTP2KJLTkUVOHrlD8JbL\n"

// checkTurnsAfterCrash checks the log and artifacts after a kill and
// returns how many outputs the log names in the artifact store, how many
// it carried (holds in its blobs) and how many it holds whole in events
// (all log-wide, not this round's alone).
func checkTurnsAfterCrash(t *testing.T, dir string, shown []string) (stores, carried, inEvent int) {
	t.Helper()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer store.Close()
	files, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	arts := files.WithSource(store)
	sessions, err := store.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{}
	for _, si := range sessions {
		var next uint64 = 1
		for e, err := range store.Read(context.Background(), si.ID, 1) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Seq != next {
				t.Fatalf("%s: seq gap: got %d, want %d", si.ID, e.Seq, next)
			}
			next++
			b, _ := json.Marshal(e)
			stored[fmt.Sprintf("%s/%d", e.SessionID, e.Seq)] = string(b)
			if e.Type == event.ToolCompleted {
				p, err := e.Decode()
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range p.(*event.ToolCompletedPayload).Artifacts {
					if a.InEvent {
						if err := p.(*event.ToolCompletedPayload).Validate(); err != nil {
							t.Fatalf("%s seq %d: %v", si.ID, e.Seq, err)
						}
						inEvent++
						continue
					}
					if err := arts.Verify(a.Digest); err != nil {
						t.Fatalf("%s seq %d names artifact %s: %v", si.ID, e.Seq, a.Digest, err)
					}
					if files.Verify(a.Digest) == nil {
						stores++
						continue
					}
					carried++
					f, err := arts.Open(a.Digest)
					if err != nil {
						t.Fatal(err)
					}
					b, err := io.ReadAll(f)
					f.Close()
					if err != nil {
						t.Fatal(err)
					}
					if bytes.Contains(b, []byte("ghp_")) {
						t.Fatalf("%s seq %d: the log carried an output holding a secret", si.ID, e.Seq)
					}
				}
			}
		}
		if err := store.Verify(context.Background(), si.ID); err != nil {
			t.Fatalf("Verify after kill: %v", err)
		}
	}
	for _, line := range shown {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			continue // the line being written when the child died
		}
		if got := stored[fmt.Sprintf("%s/%d", e.SessionID, e.Seq)]; got != line {
			t.Fatalf("event %s/%d (%s) was shown to the reader but is not in the log after the kill:\n shown: %s\nstored: %s", e.SessionID, e.Seq, e.Type, line, got)
		}
	}
	return stores, carried, inEvent
}
