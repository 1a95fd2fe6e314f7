package sqlitestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

func blobOf(s string) eventlog.Blob {
	return eventlog.Blob{Sum: sha256.Sum256([]byte(s)), Data: []byte(s)}
}

func events(t *testing.T, s *Store, session string) int {
	t.Helper()
	n := 0
	for _, err := range s.Read(context.Background(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func TestBlobsAreWrittenWithTheirEvents(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	out := blobOf("a tool's whole output\n")
	es, err := s.AppendBatchBlobs(ctx, []event.Draft{storetest.Draft(t, "s", "names it", 1)}, []eventlog.Blob{out})
	if err != nil || len(es) != 1 {
		t.Fatalf("AppendBatchBlobs = %d events, %v", len(es), err)
	}
	data, found, err := s.Blob(ctx, out.Sum)
	if err != nil || !found || !bytes.Equal(data, out.Data) {
		t.Fatalf("Blob = %q, %v, %v; want the bytes written", data, found, err)
	}
	// The same blob again (another call printed the same) is kept once.
	if _, err := s.AppendBatchBlobs(ctx, []event.Draft{storetest.Draft(t, "s", "again", 2)}, []eventlog.Blob{out, out}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM blobs`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d blob rows (%v), want 1", n, err)
	}
	if _, found, err := s.Blob(ctx, sha256.Sum256([]byte("never written"))); found || err != nil {
		t.Fatalf("a blob never written: found %v, %v", found, err)
	}
	if err := s.Verify(ctx, "s"); err != nil {
		t.Fatal(err)
	}
}

func TestABlobThatDoesNotHashToItsDigestIsRefused(t *testing.T) {
	s := openStore(t)
	bad := eventlog.Blob{Sum: sha256.Sum256([]byte("what the event names")), Data: []byte("something else")}
	if _, err := s.AppendBatchBlobs(context.Background(), []event.Draft{storetest.Draft(t, "s", "x", 1)}, []eventlog.Blob{bad}); err == nil {
		t.Fatal("a blob whose bytes do not hash to its digest was taken")
	}
	if n := events(t, s, "s"); n != 0 {
		t.Fatalf("the refused batch wrote %d events", n)
	}
	if _, err := s.AppendBatchBlobs(context.Background(), nil, []eventlog.Blob{blobOf("orphan")}); err == nil {
		t.Fatal("blobs with no event naming them were taken")
	}
}

// TestAFailedCommitWritesNoBlob: the blobs share the transaction of the
// events, so a commit that fails after inserting them (here a trigger on
// heads, which are written last) leaves neither.
func TestAFailedCommitWritesNoBlob(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER fail BEFORE INSERT ON heads BEGIN SELECT RAISE(ABORT, 'injected fault'); END`); err != nil {
		t.Fatal(err)
	}
	out := blobOf("lost with its commit\n")
	ctx := context.Background()
	if _, err := s.AppendBatchBlobs(ctx, []event.Draft{storetest.Draft(t, "s", "x", 1)}, []eventlog.Blob{out}); err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("the commit did not fail as injected: %v", err)
	}
	if _, found, err := s.Blob(ctx, out.Sum); found || err != nil {
		t.Fatalf("a failed commit left its blob (found %v, %v)", found, err)
	}
	if n := events(t, s, "s"); n != 0 {
		t.Fatalf("a failed commit left %d events", n)
	}
	if _, err := db.Exec(`DROP TRIGGER fail`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendBatchBlobs(ctx, []event.Draft{storetest.Draft(t, "s", "x", 1)}, []eventlog.Blob{out}); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.Blob(ctx, out.Sum); !found || err != nil {
		t.Fatalf("the retried commit has no blob (found %v, %v)", found, err)
	}
}

func TestABlobEditedInTheFileIsNotReturned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := blobOf("as the tool printed it\n")
	if _, err := s.AppendBatchBlobs(context.Background(), []event.Draft{storetest.Draft(t, "s", "x", 1)}, []eventlog.Blob{out}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE blobs SET data = ?`, []byte("rewritten afterwards\n")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Blob(context.Background(), out.Sum); err == nil || !strings.Contains(err.Error(), "modified") {
		t.Fatalf("an edited blob was read back: %v", err)
	}
}

// TestALogWithoutBlobsHoldsNone: a log of schema 3 (before blobs) opened
// read-only holds none and says so without an error; opened for writing it
// is migrated and takes them.
func TestALogWithoutBlobsHoldsNone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), storetest.Draft(t, "s", "before blobs", 1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE blobs; DROP TABLE answers; PRAGMA user_version = 3`); err != nil { // schema 3 is schema 5 without blobs and answers
		t.Fatal(err)
	}
	db.Close()
	out := blobOf("later\n")
	ro, err := Open(context.Background(), path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, err := ro.Blob(context.Background(), out.Sum); found || err != nil {
		t.Fatalf("a schema 3 log: found %v, %v; want none and no error", found, err)
	}
	ro.Close()
	s, err = Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("migrating to blobs: %v", err)
	}
	defer s.Close()
	if _, err := s.AppendBatchBlobs(context.Background(), []event.Draft{storetest.Draft(t, "s", "after", 2)}, []eventlog.Blob{out}); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.Blob(context.Background(), out.Sum); !found || err != nil {
		t.Fatalf("after the migration: found %v, %v", found, err)
	}
	if n := events(t, s, "s"); n != 2 {
		t.Fatalf("%d events after the migration, want 2", n)
	}
	if err := s.Verify(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
}
