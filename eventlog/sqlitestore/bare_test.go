package sqlitestore_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
)

// bareDB opens a plain modernc SQLite file as the store does (WAL,
// synchronous FULL) with the simplest table that can hold the log: a rowid
// table and an index on (session, seq). It is the floor BenchmarkAppend is
// measured against, in the same run.
func bareDB(b *testing.B) *sql.DB {
	path := filepath.Join(b.TempDir(), "bare.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, body BLOB NOT NULL);
		CREATE UNIQUE INDEX events_session_seq ON events (session_id, seq)`); err != nil {
		b.Fatal(err)
	}
	return db
}

// bareBody is the sealed 1 KB event BenchmarkAppend appends, as JSON.
func bareBody(b *testing.B) []byte {
	d, err := event.NewDraft("bench", "t", time.Now(), payload1KB())
	if err != nil {
		b.Fatal(err)
	}
	e, err := event.Seal(d, 1, event.GenesisHash)
	if err != nil {
		b.Fatal(err)
	}
	line, err := json.Marshal(e)
	if err != nil {
		b.Fatal(err)
	}
	return line
}

// bareLog is bareDB with its insert statement, the row it appends and each
// session's last seq.
type bareLog struct {
	db   *sql.DB
	ins  *sql.Stmt
	body []byte
	seqs map[string]int64
}

func openBare(b *testing.B) *bareLog {
	db := bareDB(b)
	ins, err := db.Prepare(`INSERT INTO events (session_id, seq, body) VALUES (?,?,?)`)
	if err != nil {
		b.Fatal(err)
	}
	return &bareLog{db: db, ins: ins, body: bareBody(b), seqs: map[string]int64{}}
}

func (l *bareLog) close() {
	l.ins.Close()
	l.db.Close()
}

// run appends events rows, n appenders each on its own session: one
// transaction per row for one appender, and for many a writer goroutine
// that commits whatever is waiting in one transaction (group commit), as
// the store does. It returns each append's latency and the time taken.
func (l *bareLog) run(b *testing.B, n, events int) ([]time.Duration, time.Duration) {
	db, ins, body, seqs := l.db, l.ins, l.body, l.seqs
	type req struct {
		session string
		done    chan error
	}
	reqs := make(chan req, 256)
	var writer sync.WaitGroup
	writer.Add(1)
	go func() {
		defer writer.Done()
		batch := []req{}
		for r := range reqs {
			batch = append(batch[:0], r)
		gather:
			for len(batch) < 256 {
				select {
				case r, ok := <-reqs:
					if !ok {
						break gather
					}
					batch = append(batch, r)
				default:
					break gather
				}
			}
			err := func() error {
				tx, err := db.Begin()
				if err != nil {
					return err
				}
				defer tx.Rollback()
				st := tx.Stmt(ins)
				for _, r := range batch {
					seqs[r.session]++
					if _, err := st.Exec(r.session, seqs[r.session], body); err != nil {
						return err
					}
				}
				return tx.Commit()
			}()
			for _, r := range batch {
				r.done <- err
			}
		}
	}()
	lat := make([]time.Duration, events)
	var wg sync.WaitGroup
	start := time.Now()
	for a := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan error, 1)
			session := fmt.Sprintf("bench-%d", a)
			for i := a; i < events; i += n {
				t := time.Now()
				if n == 1 {
					// One appender: no hand-off at all.
					tx, err := db.Begin()
					if err == nil {
						seqs[session]++
						if _, err = tx.Stmt(ins).Exec(session, seqs[session], body); err == nil {
							err = tx.Commit()
						} else {
							tx.Rollback()
						}
					}
					if err != nil {
						b.Error(err)
						return
					}
				} else {
					reqs <- req{session: session, done: done}
					if err := <-done; err != nil {
						b.Error(err)
						return
					}
				}
				lat[i] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(reqs)
	writer.Wait()
	return lat, elapsed
}

// BenchmarkBareSQLite is BenchmarkAppend's floor: the same 1 KB rows into
// bare SQLite, one transaction per event for one appender, and for many
// appenders (each on its own session) a writer goroutine that commits
// whatever is waiting in one transaction (group commit), as the store does.
// Compare events/s of appenders=N here with BenchmarkAppend/appenders=N,
// or see BenchmarkPaired for the two interleaved.
func BenchmarkBareSQLite(b *testing.B) {
	for _, n := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) {
			l := openBare(b)
			defer l.close()
			b.ResetTimer()
			cpu0 := storetest.CPUTime()
			lat, elapsed := l.run(b, n, b.N)
			b.StopTimer()
			storetest.ReportLatency(b, lat, elapsed, cpu0)
			b.SetBytes(1024)
		})
	}
}
