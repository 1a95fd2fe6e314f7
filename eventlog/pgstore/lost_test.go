package pgstore_test

import (
	"context"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
	"github.com/custom-agent/custom-agent/internal/pgtest"
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
