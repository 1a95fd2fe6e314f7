package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// batchTests are run by Run against a store that is an
// eventlog.BatchAppender, and reported skipped by one that is not.
var batchTests = []struct {
	name string
	fn   func(*testing.T, eventlog.Store, eventlog.BatchAppender)
}{
	{"BatchTakesNextSeqsAndChains", testBatchChains},
	{"BatchIsAllOrNothing", testBatchAllOrNothing},
	{"BatchesAndAppendsInterleaveWithoutGaps", testBatchConcurrent},
}

func testBatchChains(t *testing.T, s eventlog.Store, b eventlog.BatchAppender) {
	first := mustAppend(t, s, Draft(t, "s", "before", 0))
	sub := s.Subscribe("s")
	defer sub.Close()
	drafts := []event.Draft{Draft(t, "s", "b1", 1), Draft(t, "s", "b2", 2), Draft(t, "s", "b3", 3)}
	es, err := b.AppendBatch(context.Background(), drafts)
	if err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	if len(es) != len(drafts) {
		t.Fatalf("AppendBatch returned %d events for %d drafts", len(es), len(drafts))
	}
	prev := first.Hash
	for i, e := range es {
		if e.Seq != uint64(i+2) || e.PrevHash != prev || e.Hash != e.ComputeHash() {
			t.Fatalf("batch event %d: seq %d prev %s hash ok %v; want seq %d prev %s", i, e.Seq, e.PrevHash, e.Hash == e.ComputeHash(), i+2, prev)
		}
		prev = e.Hash
	}
	stored := readAll(t, s, "s", 2)
	if len(stored) != len(es) {
		t.Fatalf("read %d events after the batch, want %d", len(stored), len(es))
	}
	for i := range es {
		if jsonOf(t, stored[i]) != jsonOf(t, es[i]) {
			t.Fatalf("stored batch event %d differs from the one returned:\n got %s\nwant %s", i, jsonOf(t, stored[i]), jsonOf(t, es[i]))
		}
	}
	if err := s.Verify(context.Background(), "s"); err != nil {
		t.Fatalf("Verify after a batch: %v", err)
	}
	// Offered to subscribers, in order, before AppendBatch returned.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range es {
		got, err := sub.Next(ctx)
		if err != nil || got.Hash != es[i].Hash {
			t.Fatalf("subscriber's event %d: %+v, %v; want seq %d", i, got, err, es[i].Seq)
		}
	}
	if got, err := b.AppendBatch(context.Background(), nil); err != nil || len(got) != 0 {
		t.Fatalf("empty batch: %v, %v", got, err)
	}
}

func testBatchAllOrNothing(t *testing.T, s eventlog.Store, b eventlog.BatchAppender) {
	mustAppend(t, s, Draft(t, "s", "before", 0))
	withSeq := Draft(t, "s", "seq", 2)
	withSeq.Seq = 2
	unknown := Draft(t, "s", "unknown", 3)
	unknown.Type = "no.such_type"
	for _, c := range []struct {
		name   string
		drafts []event.Draft
	}{
		{"expected seq", []event.Draft{Draft(t, "s", "ok", 1), withSeq}},
		{"unknown type", []event.Draft{Draft(t, "s", "ok", 1), unknown}},
		{"two sessions", []event.Draft{Draft(t, "s", "ok", 1), Draft(t, "other", "ok", 2)}},
	} {
		if es, err := b.AppendBatch(context.Background(), c.drafts); err == nil {
			t.Fatalf("%s: batch accepted: %+v", c.name, es)
		}
		if got := readAll(t, s, "s", 1); len(got) != 1 {
			t.Fatalf("%s: a refused batch left %d events, want the 1 from before", c.name, len(got))
		}
		if got := readAll(t, s, "other", 1); len(got) != 0 {
			t.Fatalf("%s: a refused batch wrote %d events to another session", c.name, len(got))
		}
	}
}

func testBatchConcurrent(t *testing.T, s eventlog.Store, b eventlog.BatchAppender) {
	const writers, rounds, size = 4, 20, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				text := fmt.Sprintf("w%d r%d", w, r)
				if w%2 == 0 {
					if _, err := s.Append(context.Background(), Draft(t, "s", text, r)); err != nil {
						errs <- err
						return
					}
					continue
				}
				drafts := make([]event.Draft, size)
				for i := range drafts {
					drafts[i] = Draft(t, "s", fmt.Sprintf("%s #%d", text, i), r)
				}
				if _, err := b.AppendBatch(context.Background(), drafts); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := readAll(t, s, "s", 1)
	if want := writers / 2 * rounds * (1 + size); len(got) != want {
		t.Fatalf("%d events stored, want %d", len(got), want)
	}
	// Each batch is contiguous: its #0, #1, #2 follow one another.
	for i, e := range got {
		p, err := e.Decode()
		if err != nil {
			t.Fatal(err)
		}
		var w, r, k int
		if n, _ := fmt.Sscanf(p.(*event.UserMessagePayload).Content, "w%d r%d #%d", &w, &r, &k); n == 3 && k > 0 {
			prev, _ := got[i-1].Decode()
			if want := fmt.Sprintf("w%d r%d #%d", w, r, k-1); prev.(*event.UserMessagePayload).Content != want {
				t.Fatalf("seq %d holds %q after %q: a batch was split", e.Seq, p.(*event.UserMessagePayload).Content, prev.(*event.UserMessagePayload).Content)
			}
		}
	}
	if err := s.Verify(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
}
