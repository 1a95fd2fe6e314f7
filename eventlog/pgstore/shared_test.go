package pgstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
)

// TestTwoWritersOneSession: two stores on one database, each with its own
// connections, stand for two hosts. Appending to the same sessions at once,
// they never both get one seq: every acknowledged seq is acknowledged once,
// the chains have no gap and verify.
func TestTwoWritersOneSession(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).CreateDB(t)
	var stores []*pgstore.Store
	for range 2 {
		s, err := pgstore.Open(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	const perStore, appenders = 4, 60
	type ack struct {
		session string
		seq     uint64
	}
	var mu sync.Mutex
	acked := map[ack]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 2*perStore)
	for si, s := range stores {
		for a := range perStore {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range appenders {
					// Sessions "a" and "b", and new ones both hosts create at once.
					session := []string{"a", "b", fmt.Sprintf("new-%d", i/10)}[i%3]
					e, err := s.Append(ctx, storetest.Draft(t, session, fmt.Sprintf("store %d appender %d #%d", si, a, i), i))
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					k := ack{session, e.Seq}
					if prev, dup := acked[k]; dup {
						errs <- fmt.Errorf("session %s seq %d acknowledged twice: %s and %s", session, e.Seq, prev, e.Hash)
					}
					acked[k] = e.Hash
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	perSession := map[string]int{}
	for k := range acked {
		perSession[k.session]++
	}
	for session, n := range perSession {
		got := 0
		for e, err := range stores[1].Read(ctx, session, 1) {
			if err != nil {
				t.Fatal(err)
			}
			got++
			if e.Seq != uint64(got) || acked[ack{session, e.Seq}] != e.Hash {
				t.Fatalf("session %s position %d: seq %d hash %s is not what was acknowledged", session, got, e.Seq, e.Hash)
			}
		}
		if got != n {
			t.Fatalf("session %s: %d stored, %d acknowledged", session, got, n)
		}
		if err := stores[0].Verify(ctx, session); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFollowAcrossStores: a follower on one store sees what another store
// (another host) appends, woken by NOTIFY long before Follow's poll: the
// poll is set to an hour here. Each commit sends one notice, of (session,
// last seq) only.
func TestFollowAcrossStores(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	url := srv.CreateDB(t)
	writer, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	reader, err := pgstore.Open(ctx, url, &pgstore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	// A raw listener records the notices as they are sent.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN custom_agent_events"); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Append(ctx, storetest.Draft(t, "s", "before", 0)); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	seen := make(chan uint64, 100)
	go func() {
		defer close(seen)
		for e, err := range eventlog.Follow(fctx, reader, "s", 1, time.Hour) {
			if err != nil {
				t.Error(err)
				return
			}
			seen <- e.Seq
		}
	}()
	if got := <-seen; got != 1 {
		t.Fatalf("backlog: seq %d", got)
	}
	waitFor(t, reader.Listening)
	for i := 2; i <= 4; i++ {
		e, err := writer.Append(ctx, storetest.Draft(t, "s", "live", i))
		if err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-seen:
			if got != e.Seq {
				t.Fatalf("follower saw seq %d, want %d", got, e.Seq)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("follower did not see seq %d of another store within 10 s", e.Seq)
		}
	}
	for i := 1; i <= 4; i++ {
		nctx, ncancel := context.WithTimeout(ctx, 5*time.Second)
		n, err := conn.WaitForNotification(nctx)
		ncancel()
		if err != nil {
			t.Fatalf("notice %d: %v", i, err)
		}
		if want := fmt.Sprintf(`[["s",%d]]`, i); n.Payload != want {
			t.Fatalf("notice %d = %q, want %q", i, n.Payload, want)
		}
	}
	if st := writer.Stats(); st.Notifies != st.Commits || st.Commits != 4 {
		t.Fatalf("stats %+v: want one notice per commit, 4 commits", st)
	}
}

// TestFollowerResumesAfterReconnect: the follower's LISTEN connection is
// cut; events appended meanwhile reach it once it reconnects, from its
// last seq, with no gap and no repeat.
func TestFollowerResumesAfterReconnect(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	url := srv.CreateDB(t)
	writer, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	reader, err := pgstore.Open(ctx, url, &pgstore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	seen := make(chan uint64, 100)
	go func() {
		for e, err := range eventlog.Follow(fctx, reader, "s", 1, time.Hour) {
			if err != nil {
				return
			}
			seen <- e.Seq
		}
	}()
	waitFor(t, reader.Listening)
	if _, err := writer.Append(ctx, storetest.Draft(t, "s", "1", 1)); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != 1 {
		t.Fatalf("first: %d", got)
	}
	// Cut the listener (the only LISTENing backend) and keep it away
	// (the database takes no new connection; the writer's stays), and
	// append while it is away.
	db := dbName(t, url)
	if err := srv.Exec(ctx, "postgres", "ALTER DATABASE "+db+" ALLOW_CONNECTIONS false",
		`SELECT pg_terminate_backend(l.pid) FROM pg_stat_activity l WHERE l.query LIKE 'LISTEN%' AND l.datname = '`+db+`'`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !reader.Listening() })
	for i := 2; i <= 5; i++ {
		if _, err := writer.Append(ctx, storetest.Draft(t, "s", "while away", i)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-seen:
		t.Fatalf("the follower saw seq %d with its listener away and a poll of an hour", got)
	case <-time.After(300 * time.Millisecond):
	}
	if err := srv.Exec(ctx, "postgres", "ALTER DATABASE "+db+" ALLOW_CONNECTIONS true"); err != nil {
		t.Fatal(err)
	}
	for want := uint64(2); want <= 5; want++ {
		select {
		case got := <-seen:
			if got != want {
				t.Fatalf("after the reconnect the follower saw seq %d, want %d", got, want)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("seq %d not seen after the listener reconnected", want)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMigrationKeysAnswersByRequestSeq: schema 2 kept one answer per
// (session, tool call id), so a reused tool call id could never be answered
// again. Migration 3 keeps its answers and keys them by the request seq too.
func TestMigrationKeysAnswersByRequestSeq(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	url := srv.CreateDB(t)
	s, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := srv.Exec(ctx, dbName(t, url),
		`ALTER TABLE custom_agent.answers DROP CONSTRAINT answers_pkey`,
		`ALTER TABLE custom_agent.answers ADD PRIMARY KEY (session_id, tool_call_id)`,
		`INSERT INTO custom_agent.answers VALUES ('s1', 'call_0', 'deny', '', 'web', '2026-12-02T01:00:00.000000Z', 3)`,
		`UPDATE custom_agent.meta SET version = 2`); err != nil {
		t.Fatal(err)
	}
	s, err = pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatalf("migrating: %v", err)
	}
	defer s.Close()
	if a, ok, err := s.TakeAnswer(ctx, "s1", "call_0", 3); !ok || err != nil || a.Option != "deny" {
		t.Fatalf("the schema 2 answer after migrating: %+v, %v, %v", a, ok, err)
	}
	again := eventlog.Answer{SessionID: "s1", ToolCallID: "call_0", Option: "allow_once", UI: "web", At: time.Now(), RequestSeq: 7}
	if err := s.OfferAnswer(ctx, again); err != nil {
		t.Fatalf("an answer to the reused tool call id at seq 7: %v", err)
	}
	if a, ok, err := s.TakeAnswer(ctx, "s1", "call_0", 7); !ok || err != nil || a.Option != "allow_once" {
		t.Fatalf("the answer at seq 7: %+v, %v, %v", a, ok, err)
	}
}

// TestMigrateFromSchema1: a log made by a build that knew only migration 1
// (no inbox) is read as it is read-only, with no answers, and is migrated
// when opened for writing, its chain intact.
func TestMigrateFromSchema1(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	url := srv.CreateDB(t)
	s, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := s.Append(ctx, storetest.Draft(t, "s", "x", i)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	// Back to schema 1: migration 2 only added answers.
	if err := srv.Exec(ctx, dbName(t, url), `DROP TABLE custom_agent.answers`, `UPDATE custom_agent.meta SET version = 1`); err != nil {
		t.Fatal(err)
	}
	ro, err := pgstore.Open(ctx, url, &pgstore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ro.TakeAnswer(ctx, "s", "tc_1", 1); ok || err != nil {
		t.Fatalf("schema 1 read-only: answer %v, %v", ok, err)
	}
	if err := ro.Verify(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	ro.Close()
	s, err = pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.OfferAnswer(ctx, eventlog.Answer{SessionID: "s", ToolCallID: "tc_1", Option: "deny", UI: "web", At: time.Now(), RequestSeq: 1}); err != nil {
		t.Fatalf("after migrating: %v", err)
	}
	if e, err := s.Append(ctx, storetest.Draft(t, "s", "after", 4)); err != nil || e.Seq != 4 {
		t.Fatalf("append after migrating: %v, %v", e.Seq, err)
	}
	if err := s.Verify(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	var v int
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT version FROM custom_agent.meta`).Scan(&v); err != nil || v != 3 {
		t.Fatalf("schema version %d (%v), want 3", v, err)
	}
}

// TestConcurrentOpenMigratesOnce: processes opening a new database at the
// same time create the log once (the migration runs under an advisory
// lock) and all of them can append.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).CreateDB(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := pgstore.Open(ctx, url, nil)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			if _, err := s.Append(ctx, storetest.Draft(t, "s", fmt.Sprint(i), i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func blobOf(s string) eventlog.Blob {
	return eventlog.Blob{Sum: sha256.Sum256([]byte(s)), Data: []byte(s)}
}

// TestBlobs: blobs are written with their events, kept once, checked
// against their digest when read, and not written when the batch is
// refused.
func TestBlobs(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	s, url := openFresh(t)
	defer s.Close()
	out := blobOf("a tool's whole output\n")
	if _, err := s.AppendBatchBlobs(ctx, []event.Draft{storetest.Draft(t, "s", "names it", 1)}, []eventlog.Blob{out}); err != nil {
		t.Fatal(err)
	}
	data, found, err := s.Blob(ctx, out.Sum)
	if err != nil || !found || !bytes.Equal(data, out.Data) {
		t.Fatalf("Blob = %q, %v, %v", data, found, err)
	}
	if _, err := s.AppendBatchBlobs(ctx, []event.Draft{storetest.Draft(t, "s", "again", 2)}, []eventlog.Blob{out, out}); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.Blob(ctx, sha256.Sum256([]byte("never written"))); found || err != nil {
		t.Fatalf("a blob never written: %v, %v", found, err)
	}
	bad := blobOf("x")
	bad.Data = []byte("y")
	if _, err := s.AppendBatchBlobs(ctx, []event.Draft{storetest.Draft(t, "s", "bad", 3)}, []eventlog.Blob{bad}); err == nil {
		t.Fatal("a blob that does not hash to its digest was accepted")
	}
	// A batch refused by the store (a gap) writes no blob.
	gap := storetest.Draft(t, "s", "gap", 4)
	gap.Seq = 9
	if _, err := s.Append(ctx, gap); !errors.Is(err, eventlog.ErrSeqGap) {
		t.Fatalf("gap: %v", err)
	}
	// Edited behind the store's back, the blob is refused.
	if err := srv.Exec(ctx, dbName(t, url), `UPDATE custom_agent.blobs SET data = 'changed'`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Blob(ctx, out.Sum); err == nil {
		t.Fatal("an edited blob was returned")
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM custom_agent.blobs`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d blob rows (%v), want 1", n, err)
	}
}
