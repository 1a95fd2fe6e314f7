package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

func openTemp(t testing.TB) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) eventlog.Store { return openTemp(t) })
}

// TestTwoWritersShareOneFile is two processes' stores on one file: each must
// see the other's appends and keep one gap-free chain per session.
func TestTwoWritersShareOneFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.db")
	a, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	stores := []*sqlitestore.Store{a, b}
	for i := 1; i <= 6; i++ {
		e, err := stores[i%2].Append(context.Background(), storetest.Draft(t, "s", "x", i))
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq != uint64(i) {
			t.Fatalf("append %d by store %d got seq %d", i, i%2, e.Seq)
		}
	}
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := s.Append(context.Background(), storetest.Draft(t, "s", "y", i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := a.Verify(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range b.Read(context.Background(), "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 106 {
		t.Fatalf("stored %d events, want 106", n)
	}
}

// TestTailsAreBounded: appending to more sessions than the store keeps
// tails of forgets them instead of growing without end, and every chain
// still verifies (a forgotten tail only means the leader seals).
func TestTailsAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := sqlitestore.MaxTails + 10
	for i := range n {
		for range 2 {
			d, err := event.NewDraft(fmt.Sprintf("s%d", i), "t", time.Now(), event.UserMessagePayload{Content: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := s.Tails(); got > sqlitestore.MaxTails {
		t.Fatalf("%d tails kept after %d sessions, want at most %d", got, n, sqlitestore.MaxTails)
	}
	for _, id := range []string{"s0", fmt.Sprintf("s%d", n-1)} {
		if err := s.Verify(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
}
