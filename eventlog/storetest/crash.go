package storetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// The crash child learns where to append from its environment.
const (
	crashDSNEnv       = "CUSTOM_AGENT_CRASH_DSN"
	crashAppendersEnv = "CUSTOM_AGENT_CRASH_APPENDERS"
)

// DSNOpener opens the store at dsn (a file path, a database URL) in a
// process of its own, as the crash child does.
type DSNOpener func(ctx context.Context, dsn string) (eventlog.Store, error)

// CrashSessions are the sessions the crash child appends to.
var CrashSessions = []string{"crash-0", "crash-1"}

// CrashChild is the body of a store package's TestCrashChild, the child
// process of its crash tests: it appends forever, from as many goroutines
// as the parent asked, and prints every acknowledged event as one JSON
// line, until it is killed. Odd appenders write as a turn does: deferred
// events handed over with the durable one, in one batch. An append that
// fails ends it with exit status 4. Outside a crash test it skips.
func CrashChild(t *testing.T, open DSNOpener) {
	dsn := os.Getenv(crashDSNEnv)
	if dsn == "" {
		t.Skip("only runs as the child of a crash test")
	}
	n, _ := strconv.Atoi(os.Getenv(crashAppendersEnv))
	s, err := open(context.Background(), dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	b, ok := s.(eventlog.BatchAppender)
	if !ok {
		fmt.Fprintf(os.Stderr, "%T is not an eventlog.BatchAppender\n", s)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for a := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := CrashSessions[a%2] // appenders share sessions
			parts := 1
			if a%2 == 1 {
				parts = 3
			}
			for i := 0; ; i++ {
				drafts := make([]event.Draft, parts)
				for k := range drafts {
					d, err := event.NewDraft(session, "t", time.Now(), event.UserMessagePayload{Content: fmt.Sprintf("appender %d event %d part %d/%d %s", a, i, k+1, parts, strings.Repeat("x", 48))})
					if err != nil {
						panic(err)
					}
					drafts[k] = d
				}
				var es []event.Event
				var err error // this appender's own
				if parts == 1 {
					var e event.Event
					e, err = s.Append(context.Background(), drafts[0])
					es = []event.Event{e}
				} else {
					es, err = b.AppendBatch(context.Background(), drafts)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
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

// RunAndKill runs the test binary's TestCrashChild against dsn with the
// given number of appenders, lets it append for after (or while during
// runs, which is handed a count of the acknowledgements so far), SIGKILLs
// it and returns the lines it acknowledged. A child that ends on its own
// fails the test.
func RunAndKill(t *testing.T, dsn string, appenders int, after time.Duration, during func(t *testing.T, acks func() int)) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDSNEnv+"="+dsn, crashAppendersEnv+"="+strconv.Itoa(appenders))
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

// WaitAcks waits until acks reports at least n, for at most a minute.
func WaitAcks(t *testing.T, acks func() int, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for acks() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the child acknowledged %d events in a minute, want %d", acks(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// CheckAfterCrash proves, on the store reopened after a kill, that every
// acknowledged event is stored byte for byte, that seq has no gap, that no
// batch was cut or interleaved, and that each chain verifies.
func CheckAfterCrash(t *testing.T, s eventlog.Store, acked []string) {
	t.Helper()
	stored := map[string]map[uint64]string{}
	for _, session := range CrashSessions {
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
