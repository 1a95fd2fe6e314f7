package sqlitestore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

// TestMigrate: testdata/schema-vN.db was written by the store of schema N
// (1: the WITHOUT ROWID events table; 2: events in a rowid table, named by
// session id), and schema-vN.golden is what that store read back from it.
// Read-only, this build reads the log as it is and leaves it unchanged.
// Opened for writing, the log is migrated: every event reads back byte for
// byte, the sessions and heads are the same, the chains verify, the schema
// is the current one, and appends go on where each chain ended.
//
// schema-v2.db also holds a session whose head was deleted behind the
// store's back (made by the schema 2 store, then DELETE FROM sessions): Verify
// reports it before the migration and after.
func TestMigrate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version int
		// isVersion tells the events table of that schema by its DDL.
		isVersion func(ddl string) bool
		nextSeq   uint64 // of session aaaaaaaa
		headless  string // a session whose head was deleted, if any
	}{
		{1, func(ddl string) bool { return strings.Contains(ddl, "WITHOUT ROWID") }, 6, ""},
		{2, func(ddl string) bool {
			return strings.Contains(ddl, "session_id") && !strings.Contains(ddl, "WITHOUT ROWID")
		}, 7, "20261201-090000-cccccccc"},
	} {
		t.Run(fmt.Sprintf("schema %d", tc.version), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(fmt.Sprintf("testdata/schema-v%d.db", tc.version))
			if err != nil {
				t.Fatal(err)
			}
			golden, err := os.ReadFile(fmt.Sprintf("testdata/schema-v%d.golden", tc.version))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "events.db")
			if err := os.WriteFile(path, src, 0o600); err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSuffix(string(golden), "\n")
			checkHeadless := func(s *sqlitestore.Store, when string) {
				t.Helper()
				if tc.headless == "" {
					return
				}
				var ce *eventlog.ChainError
				if err := s.Verify(context.Background(), tc.headless); !errors.As(err, &ce) || ce.Seq != 1 {
					t.Fatalf("%s: Verify of the session whose head was deleted = %v, want a chain error at seq 1", when, err)
				}
			}
			// Read-only, the log is read as it is, and left at its schema.
			ro, err := sqlitestore.Open(context.Background(), path, &sqlitestore.Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only open of a schema %d log: %v", tc.version, err)
			}
			if got := readAll(t, ro); got != want {
				t.Fatalf("read-only, schema %d:\n%s\nwant:\n%s", tc.version, got, want)
			}
			checkHeadless(ro, "read-only")
			ro.Close()
			if v, ddl := schemaOf(t, path); v != tc.version || !tc.isVersion(ddl) {
				t.Fatalf("a read-only open changed the file: version %d, events %s", v, ddl)
			}
			s, err := sqlitestore.Open(context.Background(), path, nil)
			if err != nil {
				t.Fatalf("migrating: %v", err)
			}
			defer s.Close()
			if got := readAll(t, s); got != want {
				t.Fatalf("after migration:\n%s\nwant:\n%s", got, want)
			}
			checkHeadless(s, "after migration")
			e, err := s.Append(context.Background(), storetest.Draft(t, "20261130-100000-aaaaaaaa", "after the migration", 9))
			if err != nil {
				t.Fatal(err)
			}
			if e.Seq != tc.nextSeq {
				t.Fatalf("first append after migration got seq %d, want %d", e.Seq, tc.nextSeq)
			}
			if err := s.Verify(context.Background(), "20261130-100000-aaaaaaaa"); err != nil {
				t.Fatal(err)
			}
			if v, ddl := schemaOf(t, path); v != sqlitestore.SchemaVersion || !strings.Contains(ddl, "sid ") || strings.Contains(ddl, "session_id") {
				t.Fatalf("schema after migration: version %d, events %s", v, ddl)
			}
		})
	}
}

// readAll is every event of the two sessions of schema-v1.db (also in
// schema-v2.db) as JSON lines,
// then the session list, each chain verified on the way.
func readAll(t *testing.T, s *sqlitestore.Store) string {
	t.Helper()
	var got []string
	for _, id := range []string{"20261130-100000-aaaaaaaa", "20261130-100000-bbbbbbbb"} {
		for e, err := range s.Read(context.Background(), id, 1) {
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(e)
			got = append(got, string(b))
		}
		if err := s.Verify(context.Background(), id); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	}
	ss, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ss)
	return strings.Join(append(got, string(b)), "\n")
}

// schemaOf reads the file's schema version and the events table's DDL.
func schemaOf(t *testing.T, path string) (int, string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version int
	var ddl string
	if err := db.QueryRow(`SELECT (SELECT user_version FROM pragma_user_version), (SELECT sql FROM sqlite_schema WHERE name = 'events')`).Scan(&version, &ddl); err != nil {
		t.Fatal(err)
	}
	return version, ddl
}
