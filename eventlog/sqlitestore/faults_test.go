package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
)

func draft(t *testing.T, session, text string) event.Draft {
	t.Helper()
	d, err := event.NewDraft(session, "t", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), event.UserMessagePayload{Content: text})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Every fault names the file and says what to do.
func assertExplained(t *testing.T, err error, sentinel error, path string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v does not wrap %v", err, sentinel)
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q does not name %s", err, path)
	}
}

func TestCorruptFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not a database\n", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path, nil)
	assertExplained(t, err, ErrCorrupt, path)
	if !strings.Contains(err.Error(), "move the file aside") {
		t.Fatalf("no advice in %q", err)
	}
}

func TestForeignDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE recipes (name TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(context.Background(), path, nil)
	assertExplained(t, err, ErrForeign, path)
	_, err = Open(context.Background(), path, &Options{ReadOnly: true})
	assertExplained(t, err, ErrForeign, path)
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, _ := sql.Open("sqlite", "file:"+path)
	if _, err := db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(context.Background(), path, nil)
	assertExplained(t, err, ErrTooNew, path)
}

func TestReadOnlyMissingLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "none", "events.db")
	_, err := Open(context.Background(), path, &Options{ReadOnly: true})
	assertExplained(t, err, ErrNoLog, path)
	if _, statErr := os.Stat(filepath.Dir(path)); !errors.Is(statErr, os.ErrNotExist) {
		t.Fatal("a read-only open created the data dir")
	}
}

func TestMissingDataDirIsCreated(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a", "b", "events.db")
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	st, err := os.Stat(filepath.Dir(path))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("data dir: %v, mode %v; want 0700", err, st.Mode().Perm())
	}
}

func TestReadOnlyDataDir(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		// root ignores directory permissions; use a path under a file,
		// which no user can create.
		dir := t.TempDir()
		blocker := filepath.Join(dir, "file")
		os.WriteFile(blocker, nil, 0o600)
		path := filepath.Join(blocker, "events.db")
		_, err := Open(context.Background(), path, nil)
		if err == nil || !strings.Contains(err.Error(), filepath.Dir(path)) || !strings.Contains(err.Error(), "CUSTOM_AGENT_DATA_DIR") {
			t.Fatalf("unwritable data dir: %v", err)
		}
		return
	}
	dir := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(dir, 0o500)
	path := filepath.Join(dir, "events.db")
	_, err := Open(context.Background(), path, nil)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("read-only data dir: %v", err)
	}
}

func TestLockedPastBusyTimeout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := Open(context.Background(), path, &Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Another "process" holds the write lock.
	other, _ := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(100)")
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(context.Background(), draft(t, "s", "x"))
	assertExplained(t, err, ErrLocked, path)
	conn.ExecContext(context.Background(), "ROLLBACK")
	// Once released, appends work and nothing was half-written.
	e, err := s.Append(context.Background(), draft(t, "s", "x"))
	if err != nil || e.Seq != 1 {
		t.Fatalf("after the lock was released: seq %d, %v", e.Seq, err)
	}
}

func TestDiskFull(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(context.Background(), draft(t, "s", "first")); err != nil {
		t.Fatal(err)
	}
	// The writer has exactly one connection: cap its file size, as a full
	// disk would.
	var pages int
	if err := s.w.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec("PRAGMA max_page_count = " + strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 64<<10)
	var full error
	for i := 0; i < 50 && full == nil; i++ {
		_, full = s.Append(context.Background(), draft(t, "s", big))
	}
	assertExplained(t, full, ErrDiskFull, path)
	if err := s.Verify(context.Background(), "s"); err != nil {
		t.Fatalf("a failed append left the chain broken: %v", err)
	}
	var last uint64
	for e, err := range s.Read(context.Background(), "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
		last = e.Seq
	}
	sessions, _ := s.Sessions(context.Background())
	if len(sessions) != 1 || sessions[0].Events != last {
		t.Fatalf("head %v does not match the stored events (last %d)", sessions, last)
	}
}
