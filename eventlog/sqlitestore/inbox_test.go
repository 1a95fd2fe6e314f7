package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

func webAnswer(session, call, option string) eventlog.Answer {
	return eventlog.Answer{SessionID: session, ToolCallID: call, Option: option, UI: "web", At: time.Now(), RequestSeq: 3}
}

// TestInboxAcrossHandles: an answer offered through one handle on the file
// (the web UI's process) is taken through another (the asking process's),
// and the first offer wins whichever handle made it. The chain is not
// touched: answers are not events.
func TestInboxAcrossHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	asker, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer asker.Close()
	if _, err := asker.Append(ctx, storetest.Draft(t, "s1", "hello", 1)); err != nil {
		t.Fatal(err)
	}
	web, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	if err := web.OfferAnswer(ctx, webAnswer("s1", "tc_1", "allow_once")); err != nil {
		t.Fatal(err)
	}
	got, ok, err := asker.TakeAnswer(ctx, "s1", "tc_1", 3)
	if err != nil || !ok || got.Option != "allow_once" || got.UI != "web" {
		t.Fatalf("the asking handle took %+v, %v, %v", got, ok, err)
	}
	terminal := webAnswer("s1", "tc_1", "deny")
	terminal.UI = "terminal"
	if err := asker.OfferAnswer(ctx, terminal); !errors.Is(err, eventlog.ErrAnswered) {
		t.Fatalf("a second offer through the other handle: %v, want ErrAnswered", err)
	}
	// The offers appended nothing: the session still has its one event
	// and verifies.
	ss, err := web.Sessions(ctx)
	if err != nil || len(ss) != 1 || ss[0].Events != 1 {
		t.Fatalf("sessions after the offers: %+v, %v", ss, err)
	}
	if err := web.Verify(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	// A read-only handle takes answers but offers none.
	ro, err := sqlitestore.Open(ctx, path, &sqlitestore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, ok, err := ro.TakeAnswer(ctx, "s1", "tc_1", 3); !ok || err != nil {
		t.Fatalf("read-only TakeAnswer: %v, %v", ok, err)
	}
	if err := ro.OfferAnswer(ctx, webAnswer("s1", "tc_2", "deny")); !errors.Is(err, sqlitestore.ErrReadOnly) {
		t.Fatalf("read-only OfferAnswer: %v, want ErrReadOnly", err)
	}
}

// TestALogWithoutAnswersHoldsNone: a schema 4 log (before the inbox)
// opened read-only holds no answers and says so without an error; opened
// for writing it is migrated and takes them.
func TestALogWithoutAnswersHoldsNone(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, storetest.Draft(t, "s1", "before the inbox", 1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE answers; PRAGMA user_version = 4`); err != nil { // schema 4 is schema 5 without answers
		t.Fatal(err)
	}
	db.Close()
	ro, err := sqlitestore.Open(ctx, path, &sqlitestore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ro.TakeAnswer(ctx, "s1", "tc_1", 3); ok || err != nil {
		t.Fatalf("a schema 4 log: ok %v, %v; want none and no error", ok, err)
	}
	ro.Close()
	s, err = sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("migrating to the inbox: %v", err)
	}
	defer s.Close()
	if err := s.OfferAnswer(ctx, webAnswer("s1", "tc_1", "deny")); err != nil {
		t.Fatal(err)
	}
	if a, ok, err := s.TakeAnswer(ctx, "s1", "tc_1", 3); !ok || err != nil || a.Option != "deny" {
		t.Fatalf("after the migration: %+v, %v, %v", a, ok, err)
	}
	if err := s.Verify(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationKeysAnswersByRequestSeq: a schema 5 log kept one answer per
// (session, tool call id), so a reused tool call id could never be answered
// again. Migration 6 keeps its answers and keys them by the request seq too.
func TestMigrationKeysAnswersByRequestSeq(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, storetest.Draft(t, "s1", "hello", 1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	// Back to schema 5's answers table, with an answer to request 3.
	if _, err := db.Exec(`DROP TABLE answers;
		CREATE TABLE answers (
			session_id   TEXT    NOT NULL,
			tool_call_id TEXT    NOT NULL,
			option       TEXT    NOT NULL,
			confirm      TEXT    NOT NULL,
			ui           TEXT    NOT NULL,
			at           TEXT    NOT NULL,
			request_seq  INTEGER NOT NULL CHECK (request_seq >= 0),
			PRIMARY KEY (session_id, tool_call_id)
		) WITHOUT ROWID;
		INSERT INTO answers VALUES ('s1', 'call_0', 'deny', '', 'web', '2026-12-02T01:00:00.000000Z', 3);
		PRAGMA user_version = 5`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err = sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("migrating: %v", err)
	}
	defer s.Close()
	if a, ok, err := s.TakeAnswer(ctx, "s1", "call_0", 3); !ok || err != nil || a.Option != "deny" {
		t.Fatalf("the schema 5 answer after migrating: %+v, %v, %v", a, ok, err)
	}
	again := webAnswer("s1", "call_0", "allow_once")
	again.RequestSeq = 7
	if err := s.OfferAnswer(ctx, again); err != nil {
		t.Fatalf("an answer to the reused tool call id at seq 7: %v", err)
	}
	if a, ok, err := s.TakeAnswer(ctx, "s1", "call_0", 7); !ok || err != nil || a.Option != "allow_once" {
		t.Fatalf("the answer at seq 7: %+v, %v, %v", a, ok, err)
	}
	if err := s.Verify(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
}
