package sqlitestore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

// TestMigrateFromSchema1: testdata/schema-v1.db was written by the store of
// schema 1 (the WITHOUT ROWID events table); schema-v1.golden is what that
// store read back from it. Opened by this build, the log is migrated: every
// event reads back byte for byte, the sessions and heads are the same, the
// chains verify, the schema is the current one, and appends go on where
// each chain ended.
func TestMigrateFromSchema1(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/schema-v1.db")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/schema-v1.golden")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "events.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(golden), "\n"), "\n")
	// Read-only, the log is read as it is, and left at schema 1.
	ro, err := sqlitestore.Open(context.Background(), path, &sqlitestore.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of a schema 1 log: %v", err)
	}
	if got := readAll(t, ro); got != strings.Join(lines, "\n") {
		t.Fatalf("read-only, schema 1:\n%s\nwant:\n%s", got, strings.Join(lines, "\n"))
	}
	ro.Close()
	if v, ddl := schemaOf(t, path); v != 1 || !strings.Contains(ddl, "WITHOUT ROWID") {
		t.Fatalf("a read-only open changed the file: version %d, events %s", v, ddl)
	}
	s, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("migrating: %v", err)
	}
	defer s.Close()
	if got := readAll(t, s); got != strings.Join(lines, "\n") {
		t.Fatalf("after migration:\n%s\nwant:\n%s", got, strings.Join(lines, "\n"))
	}
	e, err := s.Append(context.Background(), storetest.Draft(t, "20261130-100000-aaaaaaaa", "after the migration", 9))
	if err != nil {
		t.Fatal(err)
	}
	if e.Seq != 6 {
		t.Fatalf("first append after migration got seq %d, want 6", e.Seq)
	}
	if err := s.Verify(context.Background(), "20261130-100000-aaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	if v, ddl := schemaOf(t, path); v != 2 || strings.Contains(ddl, "WITHOUT ROWID") {
		t.Fatalf("schema after migration: version %d, events %s", v, ddl)
	}
}

// readAll is every event of the two sessions of schema-v1.db as JSON lines,
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
