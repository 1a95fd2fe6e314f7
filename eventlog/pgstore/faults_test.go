package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// assertExplained: the error wraps the sentinel, names the server and
// database, never the password, and says what to do.
func assertExplained(t *testing.T, err error, sentinel error, where string, advice string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v does not wrap %v", err, sentinel)
	}
	msg := err.Error()
	if !strings.Contains(msg, where) {
		t.Fatalf("error %q does not name %s", msg, where)
	}
	if !strings.Contains(msg, advice) {
		t.Fatalf("error %q does not advise %q", msg, advice)
	}
	if srv := pgtest.Shared(t); strings.Contains(msg, srv.Password) {
		t.Fatalf("error %q shows the password", msg)
	}
}

func TestFaultsAtOpen(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	host := fmt.Sprintf("127.0.0.1:%d", srv.Port)

	t.Run("server unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close() // nothing listens there now
		url := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/x?sslmode=disable", srv.Password, port)
		_, err = pgstore.Open(ctx, url, &pgstore.Options{ConnectTimeout: 2 * time.Second})
		assertExplained(t, err, pgstore.ErrUnreachable, fmt.Sprintf("127.0.0.1:%d", port), "is PostgreSQL running")
	})
	t.Run("authentication failure", func(t *testing.T) {
		_, err := pgstore.Open(ctx, srv.URLAs(pgtest.Superuser, "not-the-password", "postgres"), nil)
		assertExplained(t, err, pgstore.ErrAuth, host, "check the user and password")
		if strings.Contains(err.Error(), "not-the-password") {
			t.Fatalf("error %q shows the password", err)
		}
	})
	t.Run("wrong database", func(t *testing.T) {
		_, err := pgstore.Open(ctx, srv.URL("no_such_db"), nil)
		assertExplained(t, err, pgstore.ErrNoDatabase, host+"/no_such_db", "createdb")
	})
	t.Run("newer schema", func(t *testing.T) {
		url := srv.CreateDB(t)
		s, err := pgstore.Open(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if err := srv.Exec(ctx, dbName(t, url), `UPDATE custom_agent.meta SET version = 99`); err != nil {
			t.Fatal(err)
		}
		_, err = pgstore.Open(ctx, url, nil)
		assertExplained(t, err, pgstore.ErrTooNew, host, "upgrade custom-agent")
		_, err = pgstore.Open(ctx, url, &pgstore.Options{ReadOnly: true})
		assertExplained(t, err, pgstore.ErrTooNew, host, "upgrade custom-agent")
	})
	t.Run("foreign schema", func(t *testing.T) {
		url := srv.CreateDB(t)
		if err := srv.Exec(ctx, dbName(t, url), `CREATE SCHEMA custom_agent`, `CREATE TABLE custom_agent.recipes (name text)`); err != nil {
			t.Fatal(err)
		}
		_, err := pgstore.Open(ctx, url, nil)
		assertExplained(t, err, pgstore.ErrForeign, host, "another database")
	})
	t.Run("no log yet, read-only", func(t *testing.T) {
		url := srv.CreateDB(t)
		_, err := pgstore.Open(ctx, url, &pgstore.Options{ReadOnly: true})
		assertExplained(t, err, pgstore.ErrNoLog, host, "nothing has been recorded")
		// Looking created nothing.
		s, err := pgstore.Open(ctx, url, &pgstore.Options{ReadOnly: true})
		if err == nil {
			s.Close()
			t.Fatal("a read-only open created the log")
		}
	})
	t.Run("synchronous_commit off", func(t *testing.T) {
		url := srv.CreateDB(t)
		db := dbName(t, url)
		if err := srv.Exec(ctx, "postgres", "ALTER DATABASE "+db+" SET synchronous_commit = off"); err != nil {
			t.Fatal(err)
		}
		_, err := pgstore.Open(ctx, url, nil)
		assertExplained(t, err, pgstore.ErrNotDurable, host, "synchronous_commit = on")
		// Turned on in the URL, it is accepted.
		s, err := pgstore.Open(ctx, url+"&options=-c%20synchronous_commit%3Don", nil)
		if err != nil {
			t.Fatalf("with synchronous_commit on in the URL: %v", err)
		}
		s.Close()
		// A read-only store writes nothing and does not need it.
		ro, err := pgstore.Open(ctx, url, &pgstore.Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only on a server without synchronous_commit: %v", err)
		}
		ro.Close()
	})
	t.Run("permission denied", func(t *testing.T) {
		url := srv.CreateDB(t)
		db := dbName(t, url)
		if err := srv.Exec(ctx, db, `CREATE ROLE visitor LOGIN PASSWORD 'pw'`, `REVOKE CREATE ON DATABASE `+db+` FROM PUBLIC`); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
		_, err := pgstore.Open(ctx, srv.URLAs("visitor", "pw", db), nil)
		assertExplained(t, err, pgstore.ErrPermission, host, "CREATE on the database")
	})
	t.Run("bad URL", func(t *testing.T) {
		_, err := pgstore.Open(ctx, "postgres://u:secret@[::1/x", nil)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Fatalf("bad URL: %v", err)
		}
	})
}

// TestConnectionLostMidAppend: the server ends the writer's connection
// (pg_terminate_backend, as a restart or a network cut would) between two
// appends and while appends are under way; the store reconnects, every
// acknowledged event is stored once, and the chain verifies.
func TestConnectionLostMidAppend(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	url := srv.CreateDB(t)
	s, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := dbName(t, url)
	kill := func() {
		t.Helper()
		if err := srv.Exec(ctx, db, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'custom-agent'`); err != nil {
			t.Fatal(err)
		}
	}
	acked := 0
	for i := range 40 {
		if i%10 == 5 {
			kill()
		}
		if _, err := s.Append(ctx, storetest.Draft(t, "s", fmt.Sprintf("e%d", i), i)); err != nil {
			t.Fatalf("append %d after the connection was cut: %v", i, err)
		}
		acked++
	}
	// Cut while 8 appenders are committing.
	errs := make(chan error, 8)
	for a := range 8 {
		go func() {
			for i := range 20 {
				if _, err := s.Append(ctx, storetest.Draft(t, "s", fmt.Sprintf("a%d-%d", a, i), i)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 3 {
		time.Sleep(20 * time.Millisecond)
		kill()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	acked += 8 * 20
	n := 0
	for e, err := range s.Read(ctx, "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if e.Seq != uint64(n) {
			t.Fatalf("position %d holds seq %d", n, e.Seq)
		}
	}
	if n != acked {
		t.Fatalf("%d events stored, %d acknowledged", n, acked)
	}
	if err := s.Verify(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Reconnects == 0 {
		t.Fatalf("no reconnect counted: %+v", st)
	}
}

// TestServerGoneAppendFailsExplained: with the server down for longer than
// ReconnectTimeout an append fails, saying the connection was lost, and
// when the server is back the store appends again.
func TestServerGoneAppendFailsExplained(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t)
	url := srv.CreateDB(t)
	s, err := pgstore.Open(ctx, url, &pgstore.Options{ReconnectTimeout: time.Second, ConnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(ctx, storetest.Draft(t, "s", "before", 1)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(ctx, storetest.Draft(t, "s", "while down", 2))
	if !errors.Is(err, pgstore.ErrConnLost) {
		t.Fatalf("append with the server down: %v, want ErrConnLost", err)
	}
	if !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("error %q does not say the event was not written", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	e, err := s.Append(ctx, storetest.Draft(t, "s", "after", 3))
	if err != nil {
		t.Fatalf("append after the server came back: %v", err)
	}
	if e.Seq != 2 {
		t.Fatalf("after the failed append got seq %d, want 2", e.Seq)
	}
	if err := s.Verify(ctx, "s"); err != nil {
		t.Fatal(err)
	}
}
