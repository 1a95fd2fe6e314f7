package sqlitestore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
)

const (
	crashDBEnv        = "CUSTOM_AGENT_CRASH_DB"
	crashAppendersEnv = "CUSTOM_AGENT_CRASH_APPENDERS"
)

// TestCrashChild is the child process of TestCrash: it appends forever and
// prints every acknowledged event as one JSON line, until it is killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		t.Skip("only runs as the child of TestCrash")
	}
	n, _ := strconv.Atoi(os.Getenv(crashAppendersEnv))
	s, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for a := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprintf("crash-%d", a%2) // appenders share sessions
			for i := 0; ; i++ {
				// Odd appenders write as a turn does: deferred events
				// handed over with the durable one, in one batch.
				parts := 1
				if a%2 == 1 {
					parts = 3
				}
				drafts := make([]event.Draft, parts)
				for k := range drafts {
					d, err := event.NewDraft(session, "t", time.Now(), event.UserMessagePayload{Content: fmt.Sprintf("appender %d event %d part %d/%d %s", a, i, k+1, parts, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")})
					if err != nil {
						panic(err)
					}
					drafts[k] = d
				}
				var es []event.Event
				if parts == 1 {
					e, err := s.Append(context.Background(), drafts[0])
					if err != nil {
						fmt.Fprintln(os.Stderr, "append:", err)
						os.Exit(4)
					}
					es = []event.Event{e}
				} else if es, err = s.AppendBatch(context.Background(), drafts); err != nil {
					fmt.Fprintln(os.Stderr, "append batch:", err)
					os.Exit(4)
				}
				mu.Lock()
				for _, e := range es {
					line, _ := json.Marshal(e)
					out.Write(line)
					out.WriteByte('\n')
				}
				out.Flush()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestCrash SIGKILLs a process that is appending, at random moments, and
// proves each time that every acknowledged event is stored byte for byte,
// that seq has no gap and that the chain verifies.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test kills child processes; skipped with -short")
	}
	path := filepath.Join(t.TempDir(), "events.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	kills, total := 0, 0
	for _, appenders := range []int{1, 8} {
		for round := 0; round < 12; round++ {
			acked := runAndKill(t, path, appenders, time.Duration(40+rng.IntN(260))*time.Millisecond)
			kills++
			total += len(acked)
			checkAfterCrash(t, path, acked)
		}
	}
	if total == 0 {
		t.Fatal("no child acknowledged any event before it was killed: the test proved nothing")
	}
	t.Logf("%d kills survived, %d acknowledged events checked", kills, total)
}

func runAndKill(t *testing.T, path string, appenders int, after time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDBEnv+"="+path, crashAppendersEnv+"="+strconv.Itoa(appenders))
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
		var acked []string
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			acked = append(acked, sc.Text()) // a torn last line has no newline and is not returned complete
		}
		lines <- acked
	}()
	time.Sleep(after)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	acked := <-lines
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child ended on its own before the kill: %v", err)
	}
	return acked
}

func checkAfterCrash(t *testing.T, path string, acked []string) {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	stored := map[string]map[uint64]string{}
	for _, session := range []string{"crash-0", "crash-1"} {
		stored[session] = map[uint64]string{}
		var next uint64 = 1
		open := ""
		for e, err := range s.Read(context.Background(), session, 1) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Seq != next {
				t.Fatalf("%s: seq gap: got %d, want %d", session, e.Seq, next)
			}
			next++
			b, _ := json.Marshal(e)
			stored[session][e.Seq] = string(b)
			// A batch is committed whole: the log never ends inside
			// one, and no other event comes between its parts.
			if open != "" && !strings.Contains(string(b), open) {
				t.Fatalf("%s: seq %d interrupts a batch: want %q next, got %s", session, e.Seq, open, b)
			}
			open = nextPart(t, e)
		}
		if open != "" {
			t.Fatalf("%s: the log ends inside a batch (%q missing): a deferred event was stored without its durable commit", session, open)
		}
		if next > 1 {
			if err := s.Verify(context.Background(), session); err != nil {
				t.Fatalf("Verify after kill: %v", err)
			}
		}
	}
	for _, line := range acked {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			continue // the line being written when the child died
		}
		if got := stored[e.SessionID][e.Seq]; got != line {
			t.Fatalf("acknowledged event %s/%d lost or changed after kill:\n ack: %s\n got: %s", e.SessionID, e.Seq, line, got)
		}
	}
}

// nextPart returns what the event after e must contain when e is a part of
// a batch before its last ("appender 1 event 7 part 2/3"), and "" otherwise.
func nextPart(t *testing.T, e event.Event) string {
	t.Helper()
	p, err := e.Decode()
	if err != nil {
		t.Fatal(err)
	}
	var a, i, k, n int
	if _, err := fmt.Sscanf(p.(*event.UserMessagePayload).Content, "appender %d event %d part %d/%d", &a, &i, &k, &n); err != nil {
		t.Fatalf("seq %d: %v", e.Seq, err)
	}
	if k == n {
		return ""
	}
	return fmt.Sprintf("appender %d event %d part %d/%d", a, i, k+1, n)
}
