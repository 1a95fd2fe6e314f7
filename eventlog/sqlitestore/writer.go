package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// writer runs a commit on the writer connection's driver connection, with
// statements prepared on it once. database/sql's per-statement work (a
// conversion and an interface box per argument, a lock, a result object,
// the statement's lookup by connection) was about a tenth of a commit's CPU
// and the largest share of its allocations; here each statement's
// arguments go to the driver in one reused slice.
//
// The statements belong to one driver connection. The writer pool has one
// connection, kept open for the store's life, so it is the same one each
// time; should database/sql ever replace it (after a connection error), the
// statements are prepared again on the new one (conn tells them apart).
//
// A commit's events, and the heads of its sessions, are each written by
// as few statements as can hold them: a statement of many rows pays a
// statement's setup (cursors opened and positioned, bindings reset) once
// instead of once per row. With 64 appenders on 64 sessions this took the
// inserts' CPU from 0.91 to 0.71 s and the heads' from 0.34 to 0.29 s per
// 160,000 events (one profile each, tmpfs). The statements of 1, 2, 4 …
// maxRows rows are prepared when first needed; a commit of n rows runs
// one of them per bit of n (after n/maxRows of the largest).
//
// A writer is used by the leading appender only.
type writer struct {
	conn  any // the driver connection the statements were prepared on
	stmts writerStmts
	// inserts[k] and heads[k] write 1<<k events and heads; nil until
	// first needed.
	inserts, heads [maxRowsLog + 1]stmt
	args           []driver.NamedValue
	dest           [8]driver.Value
	rows           []pendingRow // events sealed for the commit, not yet inserted
}

// pendingRow is an event of the commit under way, its session's key and
// its timestamp as stored.
type pendingRow struct {
	e   *event.Event
	sid int64
	ts  string
}

// maxRows (1<<maxRowsLog) is the most rows one statement writes: 64 rows of
// 9 parameters, far below SQLite's limit on parameters.
const (
	maxRowsLog = 6
	maxRows    = 1 << maxRowsLog
)

// stmt is what the writer needs of a driver statement.
type stmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type writerStmts struct {
	head, newSession, dataVersion, stored, blob stmt
}

func (st *writerStmts) all() []*stmt {
	return []*stmt{&st.head, &st.newSession, &st.dataVersion, &st.stored, &st.blob}
}

var writerQueries = [...]string{
	`SELECT s.sid, h.last_seq, h.head_hash FROM sessions s LEFT JOIN heads h USING (sid) WHERE s.session_id = ?`,
	`INSERT INTO sessions (session_id, created_at) VALUES (?, ?)`,
	`PRAGMA data_version`,
	`SELECT ` + columns + ` FROM events WHERE sid = ? AND seq = ?`,
	// A blob already held is the same bytes (same SHA-256): kept.
	`INSERT OR IGNORE INTO blobs (sum, data) VALUES (?, ?)`,
}

// insertQuery inserts n events.
//
// OR ROLLBACK: a statement of many rows that may fail half-way (a
// constraint) is otherwise given a statement journal, so that it can be
// undone alone, and every page it changes is first copied there (a write
// to a temporary file per page, which made a 64-row insert slower than 64
// inserts of one row). A failed statement fails its whole commit anyway
// (commitOn), so it may as well roll the transaction back itself.
func insertQuery(n int) string {
	return `INSERT OR ROLLBACK INTO events (sid, seq, v, turn_id, type, ts, payload, prev_hash, hash) VALUES ` + placeholders(n, 9)
}

// headsQuery writes n sessions' heads: a new session's row is inserted,
// an existing one's replaced in place.
func headsQuery(n int) string {
	return `INSERT OR ROLLBACK INTO heads (sid, updated_at, last_seq, head_hash) VALUES ` + placeholders(n, 4) + `
		ON CONFLICT (sid) DO UPDATE SET updated_at = excluded.updated_at, last_seq = excluded.last_seq, head_hash = excluded.head_hash`
}

// placeholders is n rows of cols parameters: (?,?),(?,?).
func placeholders(n, cols int) string {
	row := "(" + strings.Repeat("?,", cols-1) + "?)"
	return strings.Repeat(row+",", n-1) + row
}

// run calls f with the writer on the pool's driver connection, preparing
// the statements first when that connection is not the one they were
// prepared on.
func (w *writer) run(ctx context.Context, db *sql.DB, f func(*writer) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		if dc != w.conn {
			w.closeStmts()
			if err := w.prepare(ctx, dc); err != nil {
				return err
			}
			w.conn = dc
		}
		return f(w)
	})
}

func (w *writer) prepare(ctx context.Context, dc any) error {
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("sqlite driver connection %T cannot prepare statements", dc)
	}
	for i, dst := range w.stmts.all() {
		st, err := prepareOn(ctx, pc, writerQueries[i])
		if err != nil {
			w.closeStmts()
			return err
		}
		*dst = st
	}
	// The statements of one row are prepared now, so that a log they do
	// not fit fails at Open; the others when a commit first needs them.
	w.conn = dc
	if _, err := w.rowStmt(ctx, &w.inserts, 0, insertQuery); err != nil {
		w.closeStmts()
		return err
	}
	if _, err := w.rowStmt(ctx, &w.heads, 0, headsQuery); err != nil {
		w.closeStmts()
		return err
	}
	return nil
}

func prepareOn(ctx context.Context, pc driver.ConnPrepareContext, query string) (stmt, error) {
	ds, err := pc.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("preparing event log statements: %w", err)
	}
	st, ok := ds.(stmt)
	if !ok {
		ds.Close()
		return nil, fmt.Errorf("sqlite driver statement %T cannot run with a context", ds)
	}
	return st, nil
}

// rowStmt is sts[k] (of w.inserts or w.heads), the statement that writes
// 1<<k rows, prepared from query(1<<k) if it is not yet.
func (w *writer) rowStmt(ctx context.Context, sts *[maxRowsLog + 1]stmt, k int, query func(int) string) (stmt, error) {
	if sts[k] != nil {
		return sts[k], nil
	}
	pc, ok := w.conn.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("sqlite driver connection %T cannot prepare statements", w.conn)
	}
	st, err := prepareOn(ctx, pc, query(1<<k))
	if err != nil {
		return nil, err
	}
	sts[k] = st
	return st, nil
}

// chunks calls f with the start and the size (1<<k) of each statement's
// part of n rows: maxRows at a time, then one part per bit of the rest.
func chunks(n int, f func(start, k int) error) error {
	start := 0
	for ; n-start >= maxRows; start += maxRows {
		if err := f(start, maxRowsLog); err != nil {
			return err
		}
	}
	for rest := n - start; rest > 0; {
		k := bits.Len(uint(rest)) - 1
		if err := f(start, k); err != nil {
			return err
		}
		start += 1 << k
		rest -= 1 << k
	}
	return nil
}

func (w *writer) closeStmts() error {
	var errs []error
	all := w.stmts.all()
	for k := range w.inserts {
		all = append(all, &w.inserts[k], &w.heads[k])
	}
	for _, st := range all {
		if *st != nil {
			errs = append(errs, (*st).Close())
			*st = nil
		}
	}
	w.conn = nil
	return errors.Join(errs...)
}

// close closes the statements on their connection.
func (w *writer) close(db *sql.DB) error {
	if w.conn == nil {
		return nil
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		if dc != w.conn {
			w.conn = nil // those statements went with their connection
			return nil
		}
		return w.closeStmts()
	})
}

func (w *writer) begin(ctx context.Context) (driver.Tx, error) {
	bc, ok := w.conn.(driver.ConnBeginTx)
	if !ok {
		return nil, fmt.Errorf("sqlite driver connection %T cannot begin a transaction", w.conn)
	}
	// BEGIN IMMEDIATE: the DSN's _txlock.
	return bc.BeginTx(ctx, driver.TxOptions{})
}

// bind sets the arguments of the next statement; they stay valid until the
// next bind (the driver copies them when it binds).
func (w *writer) bind(vs ...driver.Value) []driver.NamedValue {
	w.args = w.args[:0]
	return w.add(vs...)
}

// add appends to the arguments bind set.
func (w *writer) add(vs ...driver.Value) []driver.NamedValue {
	for _, v := range vs {
		w.args = append(w.args, driver.NamedValue{Ordinal: len(w.args) + 1, Value: v})
	}
	return w.args
}

// queue adds an event of the session keyed sid to the commit's rows;
// flush inserts them.
func (w *writer) queue(e *event.Event, sid int64, ts string) {
	w.rows = append(w.rows, pendingRow{e, sid, ts})
}

// flush inserts the queued events, in the order they were queued.
func (w *writer) flush(ctx context.Context) error {
	rows := w.rows
	w.rows = w.rows[:0]
	defer clear(rows) // keep no event past its commit
	return chunks(len(rows), func(start, k int) error {
		st, err := w.rowStmt(ctx, &w.inserts, k, insertQuery)
		if err != nil {
			return err
		}
		w.args = w.args[:0]
		for _, r := range rows[start : start+1<<k] {
			e := r.e
			w.add(r.sid, int64(e.Seq), int64(e.V), e.TurnID, string(e.Type), r.ts, []byte(e.Payload), e.PrevHash, e.Hash)
		}
		_, err = st.ExecContext(ctx, w.args)
		return err
	})
}

// newSession records a session that has no key yet, created at created,
// and returns its key.
func (w *writer) newSession(ctx context.Context, id, created string) (int64, error) {
	res, err := w.stmts.newSession.ExecContext(ctx, w.bind(id, created))
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// writeHeads writes the heads, updated at now.
func (w *writer) writeHeads(ctx context.Context, heads []*head, now string) error {
	return chunks(len(heads), func(start, k int) error {
		st, err := w.rowStmt(ctx, &w.heads, k, headsQuery)
		if err != nil {
			return err
		}
		w.args = w.args[:0]
		for _, h := range heads[start : start+1<<k] {
			w.add(h.sid, now, int64(h.seq), h.hash)
		}
		_, err = st.ExecContext(ctx, w.args)
		return err
	})
}

// query runs st and reads its first row into w.dest; found is false when
// there is none.
func (w *writer) query(ctx context.Context, st stmt, args []driver.NamedValue, n int) (found bool, err error) {
	rows, err := st.QueryContext(ctx, args)
	if err != nil {
		return false, err
	}
	defer func() {
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
	}()
	switch err := rows.Next(w.dest[:n]); {
	case errors.Is(err, io.EOF):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

func (w *writer) dataVersion(ctx context.Context) (int64, error) {
	found, err := w.query(ctx, w.stmts.dataVersion, nil, 1)
	if err != nil {
		return 0, err
	}
	v, ok := w.dest[0].(int64)
	if !found || !ok {
		return 0, fmt.Errorf("PRAGMA data_version gave %v", w.dest[0])
	}
	return v, nil
}

// readHead reads the session's key and head; a session without a key
// (new) has sid 0, and one without a head starts at the genesis hash.
func (w *writer) readHead(ctx context.Context, id string) (*head, error) {
	h := &head{hash: event.GenesisHash}
	found, err := w.query(ctx, w.stmts.head, w.bind(id), 3)
	if err != nil || !found {
		return h, err
	}
	sid, ok := w.dest[0].(int64)
	if !ok || sid <= 0 {
		return nil, fmt.Errorf("session %s: key %v is not a positive integer", id, w.dest[0])
	}
	h.sid = sid
	if w.dest[1] == nil && w.dest[2] == nil {
		return h, nil // no head
	}
	seq, ok := w.dest[1].(int64)
	if !ok || seq < 0 {
		return nil, fmt.Errorf("session %s: last_seq %v is not a count", id, w.dest[1])
	}
	hash, ok := textValue(w.dest[2])
	if !ok {
		return nil, fmt.Errorf("session %s: head_hash is not text", id)
	}
	h.seq, h.hash = uint64(seq), hash
	return h, nil
}

// putBlob writes a blob, unless the log holds it already.
func (w *writer) putBlob(ctx context.Context, b eventlog.Blob) error {
	_, err := w.stmts.blob.ExecContext(ctx, w.bind(b.Sum[:], b.Data))
	return err
}

// stored reads the event at seq of the session keyed sid.
func (w *writer) stored(ctx context.Context, session string, sid int64, seq uint64) (event.Event, error) {
	found, err := w.query(ctx, w.stmts.stored, w.bind(sid, int64(seq)), len(w.dest))
	if err != nil {
		return event.Event{}, err
	}
	if !found {
		return event.Event{}, fmt.Errorf("session %s has no stored event at seq %d", session, seq)
	}
	return eventFromValues(w.dest[:], session)
}
