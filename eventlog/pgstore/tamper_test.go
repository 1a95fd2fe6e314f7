package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
)

func dbName(t testing.TB, url string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Database
}

// TestTamper edits the database behind the store's back, as someone with
// access to the server would, and checks that Verify names the first bad
// seq: the SQLite store's tamper cases, in PostgreSQL's SQL.
func TestTamper(t *testing.T) {
	tests := []struct {
		name    string
		sql     []string
		wantSeq uint64
	}{
		{"edit payload", []string{`UPDATE custom_agent.events SET payload = '{"content":"nothing to see"}' WHERE seq = 3`}, 3},
		{"edit type", []string{`UPDATE custom_agent.events SET type = 'model.delta' WHERE seq = 2`}, 2},
		{"edit timestamp", []string{`UPDATE custom_agent.events SET ts = '2020-01-01T00:00:00.000000Z' WHERE seq = 4`}, 4},
		{"reformat payload without changing its meaning", []string{`UPDATE custom_agent.events SET payload = '{"content": "m3"}' WHERE seq = 3`}, 3},
		{"edit hash to match nothing", []string{`UPDATE custom_agent.events SET hash = repeat('0', 64) WHERE seq = 2`}, 2},
		{"delete middle row", []string{`DELETE FROM custom_agent.events WHERE seq = 3`}, 3},
		{"delete first row", []string{`DELETE FROM custom_agent.events WHERE seq = 1`}, 1},
		{"delete last row", []string{`DELETE FROM custom_agent.events WHERE seq = 5`}, 5},
		{"reorder two rows", []string{
			`UPDATE custom_agent.events SET seq = 100 WHERE seq = 2`,
			`UPDATE custom_agent.events SET seq = 2 WHERE seq = 4`,
			`UPDATE custom_agent.events SET seq = 4 WHERE seq = 100`,
		}, 2},
		{"insert row at the end", []string{
			`INSERT INTO custom_agent.events SELECT sid, 6, v, turn_id, type, ts, payload, hash, hash FROM custom_agent.events WHERE seq = 5`,
		}, 6},
		{"insert row in the middle", []string{
			`UPDATE custom_agent.events SET seq = seq + 100 WHERE seq >= 3`,
			`UPDATE custom_agent.events SET seq = seq - 99 WHERE seq >= 103`,
			`INSERT INTO custom_agent.events SELECT sid, 3, v, turn_id, type, ts, payload, prev_hash, hash FROM custom_agent.events WHERE seq = 2`,
		}, 3},
		{"drop session head", []string{`DELETE FROM custom_agent.heads`}, 1},
		{"drop session key", []string{`DELETE FROM custom_agent.sessions`}, 1},
		{"drop session key and head", []string{`DELETE FROM custom_agent.sessions`, `DELETE FROM custom_agent.heads`}, 1},
		{"corrupt timestamp", []string{`UPDATE custom_agent.events SET ts = 'yesterday' WHERE seq = 2`}, 2},
		{"rewind the head", []string{`UPDATE custom_agent.heads SET last_seq = 4`}, 5},
	}
	srv := pgtest.Shared(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			url := srv.CreateDB(t)
			s, err := pgstore.Open(ctx, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 5; i++ {
				if _, err := s.Append(ctx, storetest.Draft(t, "s", "m"+string(rune('0'+i)), i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Verify(ctx, "s"); err != nil {
				t.Fatalf("before tampering: %v", err)
			}
			s.Close()
			if err := srv.Exec(ctx, dbName(t, url), tc.sql...); err != nil {
				t.Fatal(err)
			}
			s, err = pgstore.Open(ctx, url, &pgstore.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = s.Verify(ctx, "s")
			var ce *eventlog.ChainError
			if !errors.As(err, &ce) {
				t.Fatalf("Verify after tampering = %v, want a ChainError", err)
			}
			if ce.Seq != tc.wantSeq {
				t.Fatalf("Verify named seq %d (%s), want %d", ce.Seq, ce.Problem, tc.wantSeq)
			}
		})
	}
}

// TestAppendAfterHeadRewoundIsRefused: a head edited back behind its
// events makes the next append hit a stored seq; the primary key refuses
// it and the error says the log was edited, instead of a second event at
// that seq.
func TestAppendAfterHeadRewoundIsRefused(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	url := srv.CreateDB(t)
	s, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 3; i++ {
		if _, err := s.Append(ctx, storetest.Draft(t, "s", "x", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Exec(ctx, dbName(t, url), `UPDATE custom_agent.heads SET last_seq = 2`); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(ctx, storetest.Draft(t, "s", "y", 4))
	if err == nil {
		t.Fatal("an append over a stored seq succeeded")
	}
	if want := "edited behind custom-agent's back"; !contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
	n := 0
	for _, err := range s.Read(ctx, "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d events stored, want 3", n)
	}
}
