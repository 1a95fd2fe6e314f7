package session_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
)

// newLogDirs makes what most session tests start from: a data dir
// holding a fresh SQLite log (closed at the test's end), and a working
// directory and a home with their links resolved.
func newLogDirs(t *testing.T) (dir, cwd, home string, store *sqlitestore.Store) {
	t.Helper()
	dir = t.TempDir()
	cwd, _ = filepath.EvalSymlinks(t.TempDir())
	home, _ = filepath.EvalSymlinks(t.TempDir())
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return dir, cwd, home, store
}
