package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog"
)

// testLease: a leased session is busy for every other lease, this
// handle's included, until released; other sessions are not affected,
// and IfIdle runs only on a session nobody holds.
func testLease(t *testing.T, s eventlog.Store, l eventlog.Leases) {
	ctx := context.Background()
	release, err := l.Lease(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lease(ctx, "s1"); !errors.Is(err, eventlog.ErrSessionBusy) {
		t.Fatalf("a second lease of a held session: %v, want ErrSessionBusy", err)
	}
	other, err := l.Lease(ctx, "s2/../../x") // any id
	if err != nil {
		t.Fatalf("another session: %v", err)
	}
	other()
	ran, err := eventlog.IfIdle(ctx, s, "s1", func() error { t.Error("ran while held"); return nil })
	if ran || err != nil {
		t.Fatalf("IfIdle on a held session: ran %v, %v", ran, err)
	}
	release()
	again, err := l.Lease(ctx, "s1")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	if ran, err := eventlog.IfIdle(ctx, s, "s1", func() error { return nil }); !ran || err != nil {
		t.Fatalf("IfIdle on a released session: ran %v, %v", ran, err)
	}
}
