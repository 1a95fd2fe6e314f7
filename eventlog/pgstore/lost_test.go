package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
)

// TestLostAcknowledgementResolved: the connection is lost around a COMMIT,
// so the store cannot know from the driver whether its events were
// written. Lost after the commit, the store finds them stored and answers
// with them (no second copy); lost before, it finds nothing and commits
// again. Either way each event is stored exactly once and the chain
// verifies.
func TestLostAcknowledgementResolved(t *testing.T) {
	for _, after := range []bool{true, false} {
		name := map[bool]string{true: "lost after COMMIT", false: "lost before COMMIT"}[after]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := pgstore.Open(ctx, pgtest.Shared(t).CreateDB(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			first, err := s.Append(ctx, storetest.Draft(t, "s", "first", 1))
			if err != nil {
				t.Fatal(err)
			}
			s.LoseConnection(after)
			e, err := s.Append(ctx, storetest.Draft(t, "s", "second", 2))
			if err != nil {
				t.Fatalf("append whose acknowledgement was lost: %v", err)
			}
			if e.Seq != 2 || e.PrevHash != first.Hash {
				t.Fatalf("got seq %d after %s", e.Seq, first.Hash)
			}
			var stored []string
			for e, err := range s.Read(ctx, "s", 1) {
				if err != nil {
					t.Fatal(err)
				}
				stored = append(stored, e.Hash)
			}
			if len(stored) != 2 || stored[1] != e.Hash {
				t.Fatalf("stored %d events (%v), want 2 ending with the acknowledged %s", len(stored), stored, e.Hash)
			}
			if err := s.Verify(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			if st := s.Stats(); st.Reconnects != 1 {
				t.Fatalf("reconnects %d, want 1", st.Reconnects)
			}
		})
	}
}

// TestOutcomeUnknownThenIdempotentRetry: the acknowledgement of a COMMIT
// is lost and the server stays away longer than ReconnectTimeout. The
// append cannot know whether it was written and says so (ErrOutcomeUnknown,
// never a false "nothing was written"); once the server is back, a retry of
// the same draft with its seq set returns the stored event, once.
func TestOutcomeUnknownThenIdempotentRetry(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t)
	s, err := pgstore.Open(ctx, srv.CreateDB(t), &pgstore.Options{ReconnectTimeout: time.Second, ConnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(ctx, storetest.Draft(t, "s", "first", 1)); err != nil {
		t.Fatal(err)
	}
	s.OnCommit(func(after bool) bool {
		if !after {
			return false
		}
		s.OnCommit(nil)
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
		return true
	})
	d := storetest.Draft(t, "s", "second", 2)
	_, err = s.Append(ctx, d)
	if !errors.Is(err, pgstore.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "retrying an append with its seq set is safe") {
		t.Fatalf("append whose acknowledgement was lost with the server away: %v, want ErrOutcomeUnknown", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	d.Seq = 2
	e, err := s.Append(ctx, d)
	if err != nil || e.Seq != 2 {
		t.Fatalf("retry with seq 2: %v, %v", e.Seq, err)
	}
	n := 0
	for _, err := range s.Read(ctx, "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d events stored, want 2 (the lost commit landed; the retry added nothing)", n)
	}
	if err := s.Verify(ctx, "s"); err != nil {
		t.Fatal(err)
	}
}
