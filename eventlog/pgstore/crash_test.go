package pgstore_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
)

func openURL(ctx context.Context, url string) (eventlog.Store, error) {
	return pgstore.Open(ctx, url, nil)
}

// TestCrashChild is the child process of the crash tests
// (storetest.CrashChild).
func TestCrashChild(t *testing.T) { storetest.CrashChild(t, openURL) }

// checkAfterCrash reopens the store at url and runs storetest.CheckAfterCrash.
func checkAfterCrash(t *testing.T, url string, acked []string) {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	storetest.CheckAfterCrash(t, s, acked)
}

// TestCrash SIGKILLs a process that is appending to the PostgreSQL store,
// 24 times at random moments, and proves each time that every
// acknowledged event is stored byte for byte, that seq has no gap, that no
// batch was cut and that the chain verifies.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test kills child processes; skipped with -short")
	}
	url := pgtest.Shared(t).CreateDB(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	kills, total := 0, 0
	for _, appenders := range []int{1, 8} {
		for round := 0; round < 12; round++ {
			acked := storetest.RunAndKill(t, url, appenders, time.Duration(150+rng.IntN(350))*time.Millisecond, nil)
			kills++
			total += len(acked)
			checkAfterCrash(t, url, acked)
		}
	}
	if total == 0 {
		t.Fatal("no child acknowledged any event before it was killed: the test proved nothing")
	}
	t.Logf("%d kills survived, %d acknowledged events checked", kills, total)
}

// TestServerRestartMidRun: while a process appends, the server is killed
// (SIGKILL, crash recovery at the next start) or stopped, and started
// again, three times; the process rides through (its appends wait and
// reconnect), then is killed itself. Every acknowledged event is stored,
// once, with no gap, and the chains verify.
func TestServerRestartMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server; skipped with -short")
	}
	srv := pgtest.New(t)
	url := srv.CreateDB(t)
	for _, appenders := range []int{1, 8} {
		acked := storetest.RunAndKill(t, url, appenders, 0, func(t *testing.T, acks func() int) {
			for i := range 3 {
				storetest.WaitAcks(t, acks, acks()+20)
				var err error
				if i == 1 {
					err = srv.Stop()
				} else {
					err = srv.Kill()
				}
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(300 * time.Millisecond)
				if err := srv.Start(); err != nil {
					t.Fatal(err)
				}
			}
			// The child goes on appending after the last restart.
			storetest.WaitAcks(t, acks, acks()+20)
		})
		checkAfterCrash(t, url, acked)
		t.Logf("%d appenders: %d acknowledged events across 3 server restarts", appenders, len(acked))
	}
}
