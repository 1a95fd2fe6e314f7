// Package storetest is the conformance suite every eventlog.Store backend
// must pass. A backend's test calls Run with a function that opens a fresh,
// empty store.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// Opener returns a new, empty store; the suite closes it.
type Opener func(t *testing.T) eventlog.Store

// T0 is the base time of every draft the suite makes.
var T0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// Draft makes a valid draft: a user.message whose content is text.
func Draft(t testing.TB, session, text string, n int) event.Draft {
	t.Helper()
	d, err := event.NewDraft(session, "turn-1", T0.Add(time.Duration(n)*time.Millisecond), event.UserMessagePayload{Content: text})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Run runs every conformance test against stores made by open.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, eventlog.Store)
	}{
		{"AppendAssignsSeqAndChains", testAppendChains},
		{"ReadIsByteIdentical", testReadByteIdentical},
		{"ReadFromSeq", testReadFromSeq},
		{"ConcurrentAppendersNoGaps", testConcurrent},
		{"RetryWithSeqIsIdempotent", testIdempotent},
		{"SeqConflictAndGap", testSeqConflictAndGap},
		{"InvalidDraftsRefused", testInvalidDrafts},
		{"SessionsNewestFirst", testSessions},
		{"VerifyIntactAndUnknown", testVerify},
		{"SubscribeDeliversLive", testSubscribe},
		{"SlowSubscriberNeverBlocks", testSlowSubscriber},
		{"FollowBacklogThenLive", testFollow},
		{"ClosedStoreRefuses", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
	for _, tc := range batchTests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			b, ok := s.(eventlog.BatchAppender)
			if !ok {
				t.Skipf("%T is not an eventlog.BatchAppender", s)
			}
			tc.fn(t, s, b)
		})
	}
	for _, tc := range inboxTests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			in, ok := s.(eventlog.Inbox)
			if !ok {
				t.Skipf("%T is not an eventlog.Inbox", s)
			}
			tc.fn(t, s, in)
		})
	}
	t.Run("LeaseHeldIsBusyUntilReleased", func(t *testing.T) {
		s := open(t)
		t.Cleanup(func() { _ = s.Close() })
		l, ok := s.(eventlog.Leases)
		if !ok {
			t.Skipf("%T is not an eventlog.Leases", s)
		}
		testLease(t, s, l)
	})
}

func mustAppend(t *testing.T, s eventlog.Store, d event.Draft) event.Event {
	t.Helper()
	e, err := s.Append(context.Background(), d)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return e
}

func readAll(t *testing.T, s eventlog.Store, session string, from uint64) []event.Event {
	t.Helper()
	var out []event.Event
	for e, err := range s.Read(context.Background(), session, from) {
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		out = append(out, e)
	}
	return out
}

func jsonOf(t testing.TB, e event.Event) string {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func testAppendChains(t *testing.T, s eventlog.Store) {
	prev := event.GenesisHash
	for i := 1; i <= 5; i++ {
		e := mustAppend(t, s, Draft(t, "s1", fmt.Sprintf("m%d", i), i))
		if e.Seq != uint64(i) {
			t.Fatalf("event %d got seq %d", i, e.Seq)
		}
		if e.PrevHash != prev {
			t.Fatalf("seq %d prevHash %s, want %s", e.Seq, e.PrevHash, prev)
		}
		if e.Hash != e.ComputeHash() || e.V != event.Version {
			t.Fatalf("seq %d: bad hash or version: %+v", e.Seq, e)
		}
		prev = e.Hash
	}
	// Another session has its own seq.
	if e := mustAppend(t, s, Draft(t, "s2", "other", 0)); e.Seq != 1 || e.PrevHash != event.GenesisHash {
		t.Fatalf("second session's first event: seq %d prev %s", e.Seq, e.PrevHash)
	}
}

func testReadByteIdentical(t *testing.T, s eventlog.Store) {
	payloads := []event.Payload{
		event.SessionStartedPayload{Cwd: "/home/u/project", Mode: "default", Model: "script:x.jsonl"},
		event.UserMessagePayload{Content: "把测试跑一遍 <b>&amp;</b> \u2028 \x00"},
		event.ModelToolCallRequestedPayload{ToolCallID: "tc_1", Tool: "shell", Args: json.RawMessage(`{"command":"npm test","cwd":"/Users/u/project"}`)},
		event.TurnCompletedPayload{StopReason: event.StopFinal},
	}
	var acked []string
	for i, p := range payloads {
		d, err := event.NewDraft("s", "t1", T0.Add(time.Duration(i)*time.Nanosecond*1500), p)
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, jsonOf(t, mustAppend(t, s, d)))
	}
	var got []string
	for _, e := range readAll(t, s, "s", 1) {
		got = append(got, jsonOf(t, e))
	}
	if diff := cmp.Diff(acked, got); diff != "" {
		t.Fatalf("read differs from acknowledged (-acked +read):\n%s", diff)
	}
}

func testReadFromSeq(t *testing.T, s eventlog.Store) {
	for i := 1; i <= 10; i++ {
		mustAppend(t, s, Draft(t, "s", "x", i))
	}
	got := readAll(t, s, "s", 7)
	if len(got) != 4 || got[0].Seq != 7 || got[3].Seq != 10 {
		t.Fatalf("Read from 7: got %d events starting at %v", len(got), got)
	}
	if got := readAll(t, s, "nope", 1); len(got) != 0 {
		t.Fatalf("unknown session read %d events", len(got))
	}
	// Stopping early must not leak or fail.
	for range s.Read(context.Background(), "s", 1) {
		break
	}
}

func testConcurrent(t *testing.T, s eventlog.Store) {
	const appenders, each = 16, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[uint64]string{}
	errs := make(chan error, appenders)
	for a := 0; a < appenders; a++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				e, err := s.Append(context.Background(), Draft(t, "shared", fmt.Sprintf("a%d-%d", a, i), i))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if _, dup := acked[e.Seq]; dup {
					errs <- fmt.Errorf("seq %d acknowledged twice", e.Seq)
				}
				acked[e.Seq] = jsonOf(t, e)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	events := readAll(t, s, "shared", 1)
	if len(events) != appenders*each {
		t.Fatalf("stored %d events, acknowledged %d", len(events), appenders*each)
	}
	for i, e := range events {
		if e.Seq != uint64(i+1) {
			t.Fatalf("gap: position %d has seq %d", i, e.Seq)
		}
		if acked[e.Seq] != jsonOf(t, e) {
			t.Fatalf("seq %d differs from its acknowledgement", e.Seq)
		}
	}
	if err := s.Verify(context.Background(), "shared"); err != nil {
		t.Fatalf("Verify after concurrent appends: %v", err)
	}
}

func testIdempotent(t *testing.T, s eventlog.Store) {
	mustAppend(t, s, Draft(t, "s", "first", 1))
	d := Draft(t, "s", "second", 2)
	d.Seq = 2
	first := mustAppend(t, s, d)
	again := mustAppend(t, s, d) // the retry after a lost acknowledgement
	if diff := cmp.Diff(jsonOf(t, first), jsonOf(t, again)); diff != "" {
		t.Fatalf("retry returned another event:\n%s", diff)
	}
	if n := len(readAll(t, s, "s", 1)); n != 2 {
		t.Fatalf("retry duplicated: %d events", n)
	}
}

func testSeqConflictAndGap(t *testing.T, s eventlog.Store) {
	mustAppend(t, s, Draft(t, "s", "first", 1))
	other := Draft(t, "s", "not the first", 1)
	other.Seq = 1
	if _, err := s.Append(context.Background(), other); !errors.Is(err, eventlog.ErrSeqConflict) {
		t.Fatalf("different content at stored seq: err %v, want ErrSeqConflict", err)
	}
	gap := Draft(t, "s", "far", 2)
	gap.Seq = 5
	if _, err := s.Append(context.Background(), gap); !errors.Is(err, eventlog.ErrSeqGap) {
		t.Fatalf("seq beyond next: err %v, want ErrSeqGap", err)
	}
	if n := len(readAll(t, s, "s", 1)); n != 1 {
		t.Fatalf("refused appends wrote something: %d events", n)
	}
}

func testInvalidDrafts(t *testing.T, s eventlog.Store) {
	good := Draft(t, "s", "x", 1)
	cases := map[string]func(d *event.Draft){
		"no session":   func(d *event.Draft) { d.SessionID = "" },
		"unknown type": func(d *event.Draft) { d.Type = "tool.exploded" },
		"no time":      func(d *event.Draft) { d.TS = time.Time{} },
		"bad payload":  func(d *event.Draft) { d.Payload = json.RawMessage(`{"content":`) },
		"seq > int64":  func(d *event.Draft) { d.Seq = math.MaxInt64 + 1 },
	}
	for name, mutate := range cases {
		d := good
		mutate(&d)
		if _, err := s.Append(context.Background(), d); err == nil {
			t.Errorf("%s: Append accepted an invalid draft", name)
		}
	}
	if n := len(readAll(t, s, "s", 1)); n != 0 {
		t.Fatalf("invalid drafts wrote %d events", n)
	}
}

func testSessions(t *testing.T, s eventlog.Store) {
	for _, id := range []string{"a", "b", "c"} {
		mustAppend(t, s, Draft(t, id, "x", 0))
		time.Sleep(2 * time.Millisecond) // distinct update times
	}
	mustAppend(t, s, Draft(t, "a", "again", 1))
	got, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, si := range got {
		ids = append(ids, si.ID)
	}
	if diff := cmp.Diff([]string{"a", "c", "b"}, ids); diff != "" {
		t.Fatalf("sessions not newest first (-want +got):\n%s", diff)
	}
	if got[0].Events != 2 || got[0].HeadHash == "" {
		t.Fatalf("session a: %+v", got[0])
	}
}

func testVerify(t *testing.T, s eventlog.Store) {
	for i := 1; i <= 3; i++ {
		mustAppend(t, s, Draft(t, "s", "x", i))
	}
	if err := s.Verify(context.Background(), "s"); err != nil {
		t.Fatalf("intact chain: %v", err)
	}
	if err := s.Verify(context.Background(), "missing"); !errors.Is(err, eventlog.ErrNoSession) {
		t.Fatalf("unknown session: %v, want ErrNoSession", err)
	}
}

func testSubscribe(t *testing.T, s eventlog.Store) {
	sub := s.Subscribe("s")
	defer sub.Close()
	all := s.Subscribe("")
	defer all.Close()
	mustAppend(t, s, Draft(t, "other", "x", 0))
	want := mustAppend(t, s, Draft(t, "s", "x", 0))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := sub.Next(ctx)
	if err != nil || got.Hash != want.Hash {
		t.Fatalf("session subscriber got %+v, %v", got, err)
	}
	if e, err := all.Next(ctx); err != nil || e.SessionID != "other" {
		t.Fatalf("all-sessions subscriber first got %+v, %v", e, err)
	}
}

func testSlowSubscriber(t *testing.T, s eventlog.Store) {
	sub := s.Subscribe("s") // never read while appending
	defer sub.Close()
	const n = 600 // more than any reasonable buffer
	done := make(chan error, 1)
	go func() {
		for i := 1; i <= n; i++ {
			if _, err := s.Append(context.Background(), Draft(t, "s", "x", i)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("appends blocked behind a subscriber that does not read")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var sawMissed bool
	for i := 0; i < n+1; i++ {
		_, err := sub.Next(ctx)
		if errors.Is(err, eventlog.ErrMissed) {
			sawMissed = true
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !sawMissed {
		t.Fatal("a subscriber that fell behind was not told it missed events")
	}
	// After ErrMissed, delivery resumes with the next append.
	e := mustAppend(t, s, Draft(t, "s", "after", n+1))
	got, err := sub.Next(ctx)
	if err != nil || got.Seq != e.Seq {
		t.Fatalf("after ErrMissed got %v, %v; want seq %d", got.Seq, err, e.Seq)
	}
}

func testFollow(t *testing.T, s eventlog.Store) {
	for i := 1; i <= 3; i++ {
		mustAppend(t, s, Draft(t, "s", "x", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		for i := 4; i <= 6; i++ {
			time.Sleep(5 * time.Millisecond)
			if _, err := s.Append(context.Background(), Draft(t, "s", "live", i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var seqs []uint64
	for e, err := range eventlog.Follow(ctx, s, "s", 2, 50*time.Millisecond) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
		if e.Seq == 6 {
			break
		}
	}
	if diff := cmp.Diff([]uint64{2, 3, 4, 5, 6}, seqs); diff != "" {
		t.Fatalf("Follow (-want +got):\n%s", diff)
	}
}

func testClosed(t *testing.T, s eventlog.Store) {
	mustAppend(t, s, Draft(t, "s", "x", 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), Draft(t, "s", "y", 2)); !errors.Is(err, eventlog.ErrClosed) {
		t.Fatalf("append after Close: %v, want ErrClosed", err)
	}
}
