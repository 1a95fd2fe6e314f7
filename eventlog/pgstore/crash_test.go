package pgstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/internal/pgtest"
)

const (
	crashURLEnv       = "CUSTOM_AGENT_PG_CRASH_URL"
	crashAppendersEnv = "CUSTOM_AGENT_PG_CRASH_APPENDERS"
)

// TestCrashChild is the child process of the crash tests: it appends
// forever and prints every acknowledged event as one JSON line, until it
// is killed. An append that fails ends it with exit status 4.
func TestCrashChild(t *testing.T) {
	url := os.Getenv(crashURLEnv)
	if url == "" {
		t.Skip("only runs as the child of TestCrash")
	}
	n, _ := strconv.Atoi(os.Getenv(crashAppendersEnv))
	s, err := pgstore.Open(context.Background(), url, nil)
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
				var err error // this appender's own: not Open's, which every appender shares
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

// TestCrash SIGKILLs a process that is appending to the PostgreSQL store,
// 24 times at random moments, and proves each time that every
// acknowledged event is stored byte for byte, that seq has no gap, that no
// batch was cut and that the chain verifies.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test kills child processes; skipped with -short")
	}
	url := pgtest.Shared(t).CreateDB(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	kills, total := 0, 0
	for _, appenders := range []int{1, 8} {
		for round := 0; round < 12; round++ {
			acked := runAndKill(t, url, appenders, time.Duration(150+rng.IntN(350))*time.Millisecond, nil)
			kills++
			total += len(acked)
			checkAfterCrash(t, url, acked)
		}
	}
	if total == 0 {
		t.Fatal("no child acknowledged any event before it was killed: the test proved nothing")
	}
	t.Logf("%d kills survived, %d acknowledged events checked", kills, total)
}

// TestServerRestartMidRun: while a process appends, the server is killed
// (SIGKILL, crash recovery at the next start) or stopped, and started
// again, three times; the process rides through (its appends wait and
// reconnect), then is killed itself. Every acknowledged event is stored,
// once, with no gap, and the chains verify.
func TestServerRestartMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server; skipped with -short")
	}
	srv := pgtest.New(t)
	url := srv.CreateDB(t)
	for _, appenders := range []int{1, 8} {
		acked := runAndKill(t, url, appenders, 0, func(t *testing.T, acks func() int) {
			for i := range 3 {
				before := acks()
				waitAcks(t, acks, before+20)
				var err error
				if i == 1 {
					err = srv.Stop()
				} else {
					err = srv.Kill()
				}
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(300 * time.Millisecond)
				if err := srv.Start(); err != nil {
					t.Fatal(err)
				}
			}
			// The child goes on appending after the last restart.
			waitAcks(t, acks, acks()+20)
		})
		checkAfterCrash(t, url, acked)
		t.Logf("%d appenders: %d acknowledged events across 3 server restarts", appenders, len(acked))
	}
}

func waitAcks(t *testing.T, acks func() int, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for acks() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the child acknowledged %d events in a minute, want %d", acks(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runAndKill runs the child, lets it append for after (or while during
// runs), SIGKILLs it and returns the lines it acknowledged.
func runAndKill(t *testing.T, url string, appenders int, after time.Duration, during func(*testing.T, func() int)) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashURLEnv+"="+url, crashAppendersEnv+"="+strconv.Itoa(appenders))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			mu.Lock()
			acked = append(acked, sc.Text()) // a torn last line is not returned complete
			mu.Unlock()
		}
	}()
	if during != nil {
		during(t, func() int { mu.Lock(); defer mu.Unlock(); return len(acked) })
	} else {
		time.Sleep(after)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child ended on its own before the kill: %v", err)
	}
	return acked
}

func checkAfterCrash(t *testing.T, url string, acked []string) {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, nil)
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
			if open != "" && !strings.Contains(string(b), open) {
				t.Fatalf("%s: seq %d interrupts a batch: want %q next, got %s", session, e.Seq, open, b)
			}
			open = nextPart(t, e)
		}
		if open != "" {
			t.Fatalf("%s: the log ends inside a batch (%q missing)", session, open)
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
