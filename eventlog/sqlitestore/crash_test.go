package sqlitestore_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

func openPath(ctx context.Context, path string) (eventlog.Store, error) {
	return sqlitestore.Open(ctx, path, nil)
}

// TestCrashChild is the child process of TestCrash (storetest.CrashChild).
func TestCrashChild(t *testing.T) { storetest.CrashChild(t, openPath) }

// TestCrash SIGKILLs a process that is appending, at random moments, and
// proves each time that every acknowledged event is stored byte for byte,
// that seq has no gap, that no batch was cut and that the chain verifies.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test kills child processes; skipped with -short")
	}
	path := filepath.Join(t.TempDir(), "events.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	kills, total := 0, 0
	for _, appenders := range []int{1, 8} {
		for round := 0; round < 12; round++ {
			acked := storetest.RunAndKill(t, path, appenders, time.Duration(40+rng.IntN(260))*time.Millisecond, nil)
			kills++
			total += len(acked)
			s, err := sqlitestore.Open(context.Background(), path, nil)
			if err != nil {
				t.Fatalf("reopen after kill: %v", err)
			}
			storetest.CheckAfterCrash(t, s, acked)
			s.Close()
		}
	}
	if total == 0 {
		t.Fatal("no child acknowledged any event before it was killed: the test proved nothing")
	}
	t.Logf("%d kills survived, %d acknowledged events checked", kills, total)
}
