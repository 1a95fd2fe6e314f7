package sqlitestore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

func TestChunks(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []int // sizes, in order
	}{
		{0, nil},
		{1, []int{1}},
		{3, []int{2, 1}},
		{35, []int{32, 2, 1}},
		{64, []int{64}},
		{65, []int{64, 1}},
		{200, []int{64, 64, 64, 8}},
	} {
		var got []int
		next := 0
		err := chunks(tc.n, func(start, k int) error {
			if start != next {
				t.Errorf("n=%d: a part starts at %d, want %d", tc.n, start, next)
			}
			got = append(got, 1<<k)
			next = start + 1<<k
			return nil
		})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("chunks(%d) = %v, %v; want %v", tc.n, got, err, tc.want)
		}
	}
}

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func request(t *testing.T, s *Store, ds ...event.Draft) *appendReq {
	t.Helper()
	r := &appendReq{ds: ds}
	for _, d := range ds {
		p, err := s.check(d)
		if err != nil {
			t.Fatal(err)
		}
		r.ps = append(r.ps, p)
		r.ts = append(r.ts, p.Draft().TS.Format(event.TimeFormat))
	}
	return r
}

// TestRetryInTheCommitOfItsOriginal: a retried append (naming its seq) in
// the same commit as the append it retries is answered with that event,
// which the commit has not yet inserted when it comes to the retry.
func TestRetryInTheCommitOfItsOriginal(t *testing.T) {
	s := openStore(t)
	d := storetest.Draft(t, "s", "once", 1)
	retry := d
	retry.Seq = 1
	other := storetest.Draft(t, "s", "not the same", 2)
	other.Seq = 1
	results, committed, _ := s.commit([]*appendReq{request(t, s, d), request(t, s, retry), request(t, s, other)})
	if results[0].err != nil || results[1].err != nil {
		t.Fatalf("append %v, retry %v", results[0].err, results[1].err)
	}
	if len(committed) != 1 || results[1].es[0].Hash != results[0].es[0].Hash {
		t.Fatalf("the retry got %+v, the append %+v; %d events committed", results[1].es, results[0].es, len(committed))
	}
	if results[2].err == nil {
		t.Fatalf("a different draft naming the stored seq was taken: %+v", results[2].es)
	}
}

// TestCommitsLargerThanOneStatement: commits of more events and sessions
// than one statement writes (maxRows) are stored whole, each chain
// verifies, and each session's head is its last event.
func TestCommitsLargerThanOneStatement(t *testing.T) {
	s := openStore(t)
	const sessions = maxRows + 37
	var batch []*appendReq
	for i := range sessions {
		batch = append(batch, request(t, s, storetest.Draft(t, fmt.Sprintf("s%03d", i), "first", i)))
	}
	var long []event.Draft
	for i := range 2*maxRows + 5 {
		long = append(long, storetest.Draft(t, "long", "part", i))
	}
	batch = append(batch, request(t, s, long...))
	results, committed, _ := s.commit(batch)
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
	}
	if want := sessions + len(long); len(committed) != want {
		t.Fatalf("%d events committed, want %d", len(committed), want)
	}
	// And a second commit over the same sessions updates every head.
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Append(context.Background(), storetest.Draft(t, fmt.Sprintf("s%03d", i), "second", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	infos, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != sessions+1 {
		t.Fatalf("%d sessions listed, want %d", len(infos), sessions+1)
	}
	for _, si := range infos {
		want := uint64(2)
		if si.ID == "long" {
			want = uint64(len(long))
		}
		var last event.Event
		n := uint64(0)
		for e, err := range s.Read(context.Background(), si.ID, 1) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			last = e
		}
		if si.Events != want || n != want || si.HeadHash != last.Hash {
			t.Fatalf("session %s: head %d %s, %d events read ending %s; want %d", si.ID, si.Events, si.HeadHash, n, last.Hash, want)
		}
		if err := s.Verify(context.Background(), si.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadBeforeTheSessionExists: a Read of a session with no key yet
// finds nothing, and does not keep that: once the session is appended to,
// Read finds its events.
func TestReadBeforeTheSessionExists(t *testing.T) {
	s := openStore(t)
	count := func() int {
		n := 0
		for _, err := range s.Read(context.Background(), "later", 1) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("read %d events of a session never appended to", n)
	}
	if _, err := s.Append(context.Background(), storetest.Draft(t, "later", "now", 1)); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("read %d events after the first append, want 1", n)
	}
}
