package sqlitestore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
)

// TestLease: a session leased once is busy for every other lease, through
// this handle or another on the same file, until it is released; other
// sessions are not affected. (A lease ending with its process is
// cmd/custom-agent's TestSecondProcessLeavesLiveAskOpen and the restart
// tests.)
func TestLease(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "log.db")
	a, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	release, err := a.Lease(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*sqlitestore.Store{"same handle": a, "other handle": b} {
		if _, err := s.Lease(ctx, "s1"); !errors.Is(err, eventlog.ErrSessionBusy) {
			t.Fatalf("%s: a second lease of a held session: %v, want ErrSessionBusy", name, err)
		}
	}
	other, err := b.Lease(ctx, "s2/../../x") // any id: the file is named by a digest
	if err != nil {
		t.Fatalf("another session: %v", err)
	}
	other()
	ran, err := eventlog.IfIdle(ctx, b, "s1", func() error { t.Error("ran while held"); return nil })
	if ran || err != nil {
		t.Fatalf("IfIdle on a held session: ran %v, %v", ran, err)
	}
	release()
	again, err := b.Lease(ctx, "s1")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	ran, err = eventlog.IfIdle(ctx, b, "s1", func() error { return nil })
	if !ran || err != nil {
		t.Fatalf("IfIdle on a released session: ran %v, %v", ran, err)
	}
}
