package pgstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
)

// The benchmarks of issue 28, each run against both stores in one run:
// the SQLite file in a temporary directory and a database of the test
// PostgreSQL server (fsync and synchronous_commit on, on the same disk).
//
//	go test -run='^$' -bench=. -benchtime=2s ./eventlog/pgstore/

type storeKind struct {
	name string
	open func(b *testing.B) (eventlog.Store, func() eventlog.Store) // the store, and how to open another on the same log ("another host")
}

func kinds() []storeKind {
	return []storeKind{
		{"sqlite", func(b *testing.B) (eventlog.Store, func() eventlog.Store) {
			path := filepath.Join(b.TempDir(), "events.db")
			open := func() eventlog.Store {
				s, err := sqlitestore.Open(context.Background(), path, nil)
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
			return open(), open
		}},
		{"postgres", func(b *testing.B) (eventlog.Store, func() eventlog.Store) {
			url := pgtest.Shared(b).CreateDB(b)
			open := func() eventlog.Store {
				s, err := pgstore.Open(context.Background(), url, nil)
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
			return open(), open
		}},
	}
}

// BenchmarkAppend: durable appends of 1 KB events by 1, 16 and 64
// concurrent appenders, each on its own session. events/commit is the mean
// group commit size. (cpu-µs/event counts this process only: the
// PostgreSQL server's work is not in it.)
func BenchmarkAppend(b *testing.B) {
	for _, k := range kinds() {
		for _, n := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("store=%s/appenders=%d", k.name, n), func(b *testing.B) {
				s, _ := k.open(b)
				defer s.Close()
				drafts := make([]event.Draft, n)
				for i := range drafts {
					var err error
					drafts[i], err = event.NewDraft(fmt.Sprintf("bench-%d", i), "t", time.Now(), event.UserMessagePayload{Content: strings.Repeat("x", 700)})
					if err != nil {
						b.Fatal(err)
					}
				}
				lat := make([]time.Duration, b.N)
				var wg sync.WaitGroup
				b.ResetTimer()
				start, cpu0 := time.Now(), storetest.CPUTime()
				for a := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := a; i < b.N; i += n {
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
				elapsed := time.Since(start)
				b.StopTimer()
				storetest.ReportLatency(b, lat, elapsed, cpu0)
				var commits, events uint64
				switch s := s.(type) {
				case *sqlitestore.Store:
					commits, events = s.Stats().Commits, s.Stats().Events
				case *pgstore.Store:
					commits, events = s.Stats().Commits, s.Stats().Events
				}
				b.ReportMetric(float64(events)/float64(max(commits, 1)), "events/commit")
			})
		}
	}
}

// BenchmarkReplay reads a 10,000-event session among 50,000 (five sessions
// whose events were appended interleaved), warm.
func BenchmarkReplay(b *testing.B) {
	for _, k := range kinds() {
		b.Run("store="+k.name, func(b *testing.B) {
			s, _ := k.open(b)
			defer s.Close()
			fill(b, s)
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
		})
	}
}

// fill appends 5 sessions × 10,000 model.delta events, interleaved in
// batches of 50 (as turns write them).
func fill(b *testing.B, s eventlog.Store) {
	ba := s.(eventlog.BatchAppender)
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for w := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("other-%d", w)
			if w == 0 {
				id = "replay"
			}
			for i := 0; i < 10000; i += 50 {
				drafts := make([]event.Draft, 50)
				for j := range drafts {
					drafts[j], _ = event.NewDraft(id, "t", time.Now(), event.ModelDeltaPayload{Text: fmt.Sprintf("delta %d of a streamed answer", i+j)})
				}
				if _, err := ba.AppendBatch(context.Background(), drafts); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFollow: how long after its Append returns an event reaches a
// follower (eventlog.Follow, reading from the store), p50 and p99.
// follower=local follows through the appending store (in-process
// subscription); follower=other-host through another store on the same
// log, as another machine would: for PostgreSQL woken by NOTIFY, for
// SQLite (one file, one host) by Follow's poll of 250 ms.
func BenchmarkFollow(b *testing.B) {
	for _, k := range kinds() {
		for _, where := range []string{"local", "other-host"} {
			b.Run(fmt.Sprintf("store=%s/follower=%s", k.name, where), func(b *testing.B) {
				s, another := k.open(b)
				defer s.Close()
				follower := s
				if where == "other-host" {
					follower = another()
					defer follower.Close()
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				seen := make(chan time.Time, 1)
				ready := make(chan struct{})
				go func() {
					first := true
					for _, err := range eventlog.Follow(ctx, follower, "follow", 1, 0) {
						if err != nil {
							return
						}
						if first {
							first = false
							close(ready)
							continue
						}
						seen <- time.Now()
					}
				}()
				d, err := event.NewDraft("follow", "t", time.Now(), event.ModelDeltaPayload{Text: "a streamed delta"})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Append(context.Background(), d); err != nil {
					b.Fatal(err)
				}
				<-ready
				if ps, ok := follower.(*pgstore.Store); ok {
					for !ps.Listening() {
						time.Sleep(time.Millisecond)
					}
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
			})
		}
	}
}
