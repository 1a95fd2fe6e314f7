package sqlitestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

// payload1KB makes a user.message whose sealed event is about 1 KB.
func payload1KB() event.Payload {
	return event.UserMessagePayload{Content: strings.Repeat("x", 700)}
}

// BenchmarkAppend measures durable appends of 1 KB events by 1, 16 and 64
// concurrent appenders, each on its own session (many sessions served at
// once), and, for 16 and 64, all on one session. Compare events/s and p99
// with BenchmarkFileFdatasync, the floor: the same bytes appended to a plain
// file with fdatasync after each. events/commit is the mean group size.
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct{ appenders, sessions int }{{1, 1}, {16, 16}, {64, 64}, {16, 1}, {64, 1}} {
		name := fmt.Sprintf("appenders=%d", c.appenders)
		if c.sessions != c.appenders {
			name += "/one-session"
		}
		n := c.appenders
		b.Run(name, func(b *testing.B) {
			s, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "events.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			drafts := make([]event.Draft, n)
			for i := range drafts {
				drafts[i], err = event.NewDraft(fmt.Sprintf("bench-%d", i%c.sessions), "t", time.Now(), payload1KB())
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			cpu0 := storetest.CPUTime()
			lat, elapsed := appendRun(b, s, drafts, b.N)
			b.StopTimer()
			storetest.ReportLatency(b, lat, elapsed, cpu0)
			st := s.Stats()
			b.ReportMetric(float64(st.Events)/float64(max(st.Commits, 1)), "events/commit")
			b.SetBytes(1024)
		})
	}
}

// appendRun appends events drafts, one appender per draft (drafts[a] again
// and again), and returns each append's latency and the time taken.
func appendRun(b *testing.B, s *sqlitestore.Store, drafts []event.Draft, events int) ([]time.Duration, time.Duration) {
	n := len(drafts)
	lat := make([]time.Duration, events)
	var wg sync.WaitGroup
	start := time.Now()
	for a := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := a; i < events; i += n {
				t := time.Now()
				if _, err := s.Append(context.Background(), drafts[a]); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start)
}

// BenchmarkFileFdatasync is the floor for one appender: the JSON of a 1 KB
// event appended to a plain file, with fdatasync after each write.
func BenchmarkFileFdatasync(b *testing.B) {
	d, _ := event.NewDraft("bench", "t", time.Now(), payload1KB())
	e, _ := event.Seal(d, 1, event.GenesisHash)
	line, _ := json.Marshal(e)
	line = append(line, '\n')
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "events.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	start, cpu0 := time.Now(), storetest.CPUTime()
	for i := range b.N {
		t := time.Now()
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	storetest.ReportLatency(b, lat, elapsed, cpu0)
	b.SetBytes(int64(len(line)))
}

var (
	replayOnce sync.Once
	replayPath string
	replayErr  error
)

// TestMain removes the replay fixture, which outlives each benchmark (it
// is built once per binary), when the binary ends: left behind, every run
// kept 13 MB in the temporary directory.
func TestMain(m *testing.M) {
	code := m.Run()
	if replayPath != "" {
		os.RemoveAll(filepath.Dir(replayPath))
	}
	os.Exit(code)
}

// replayFixture builds, once per benchmark binary, a log of 50,000 events in
// which one session ("replay") has 10,000.
func replayFixture(b *testing.B) string {
	replayOnce.Do(func() {
		dir, err := os.MkdirTemp("", "custom-agent-replay-")
		if err != nil {
			replayErr = err
			return
		}
		replayPath = filepath.Join(dir, "events.db")
		s, err := sqlitestore.Open(context.Background(), replayPath, nil)
		if err != nil {
			replayErr = err
			return
		}
		defer s.Close()
		var wg sync.WaitGroup
		errs := make(chan error, 5)
		for w := range 5 { // 5 sessions × 10,000 events
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("other-%d", w)
				if w == 0 {
					id = "replay"
				}
				for i := 0; i < 10000; i++ {
					d, _ := event.NewDraft(id, "t", time.Now(), event.ModelDeltaPayload{Text: fmt.Sprintf("delta %d of a streamed answer", i)})
					if _, err := s.Append(context.Background(), d); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		replayErr = <-errs
	})
	if replayErr != nil {
		b.Fatal(replayErr)
	}
	return replayPath
}

// BenchmarkReplay reads a 10,000-event session among 50,000, warm.
func BenchmarkReplay(b *testing.B) {
	path := replayFixture(b)
	s, err := sqlitestore.Open(context.Background(), path, &sqlitestore.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for range b.N {
		n := 0
		for _, err := range s.Read(context.Background(), "replay", 1) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 10000 {
			b.Fatalf("replayed %d events", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/replay")
}

// BenchmarkFollow measures how long after its Append returns an event
// reaches a follower (eventlog.Follow, woken by the in-process
// subscription, reading from the store): p50 and p99 per event.
func BenchmarkFollow(b *testing.B) {
	s, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "events.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan time.Time, 1)
	go func() {
		for _, err := range eventlog.Follow(ctx, s, "follow", 1, time.Hour) {
			if err != nil {
				return
			}
			seen <- time.Now()
		}
	}()
	d, err := event.NewDraft("follow", "t", time.Now(), event.ModelDeltaPayload{Text: "a streamed delta"})
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	start, cpu0 := time.Now(), storetest.CPUTime()
	for i := range b.N {
		if _, err := s.Append(context.Background(), d); err != nil {
			b.Fatal(err)
		}
		acked := time.Now()
		select {
		case got := <-seen:
			lat[i] = got.Sub(acked)
		case <-time.After(10 * time.Second):
			b.Fatalf("event %d never reached the follower", i+1)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	storetest.ReportLatency(b, lat, elapsed, cpu0)
}
