package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

// TestTamper edits the database behind the store's back with the SQLite
// driver, the way someone with the file would, and checks that Verify names
// the first bad seq.
func TestTamper(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		sql     []string
		wantSeq uint64
	}{
		{"edit payload", []string{`UPDATE events SET payload = '{"content":"nothing to see"}' WHERE seq = 3`}, 3},
		{"edit type", []string{`UPDATE events SET type = 'model.delta' WHERE seq = 2`}, 2},
		{"edit timestamp", []string{`UPDATE events SET ts = '2020-01-01T00:00:00.000000Z' WHERE seq = 4`}, 4},
		{"reformat payload without changing its meaning", []string{`UPDATE events SET payload = '{"content": "m3"}' WHERE seq = 3`}, 3},
		{"delete middle row", []string{`DELETE FROM events WHERE seq = 3`}, 3},
		{"delete first row", []string{`DELETE FROM events WHERE seq = 1`}, 1},
		{"delete last row", []string{`DELETE FROM events WHERE seq = 5`}, 5},
		{"reorder two rows", []string{
			`UPDATE events SET seq = 100 WHERE seq = 2`,
			`UPDATE events SET seq = 2 WHERE seq = 4`,
			`UPDATE events SET seq = 4 WHERE seq = 100`,
		}, 2},
		{"insert row at the end", []string{
			`INSERT INTO events SELECT sid, 6, v, turn_id, type, ts, payload, hash, hash FROM events WHERE seq = 5`,
		}, 6},
		{"insert row in the middle", []string{
			`UPDATE events SET seq = seq + 100 WHERE seq >= 3`,
			`UPDATE events SET seq = seq - 99 WHERE seq >= 103`,
			`INSERT INTO events SELECT sid, 3, v, turn_id, type, ts, payload, prev_hash, hash FROM events WHERE seq = 2`,
		}, 3},
		{"drop session head", []string{`DELETE FROM heads`}, 1},
		{"drop session key", []string{`DELETE FROM sessions`}, 1},
		{"drop session key and head", []string{`DELETE FROM sessions`, `DELETE FROM heads`}, 1},
		{"corrupt timestamp", []string{`UPDATE events SET ts = 'yesterday' WHERE seq = 2`}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "events.db")
			s, err := sqlitestore.Open(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 5; i++ {
				if _, err := s.Append(context.Background(), storetest.Draft(t, "s", "m"+string(rune('0'+i)), i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Verify(context.Background(), "s"); err != nil {
				t.Fatalf("before tampering: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range tc.sql {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			db.Close()

			s, err = sqlitestore.Open(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = s.Verify(context.Background(), "s")
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
