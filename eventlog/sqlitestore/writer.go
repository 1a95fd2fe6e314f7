package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/custom-agent/custom-agent/event"
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
// A writer is used by the leading appender only.
type writer struct {
	conn  any // the driver connection the statements were prepared on
	stmts writerStmts
	args  [9]driver.NamedValue
	dest  [8]driver.Value
}

// stmt is what the writer needs of a driver statement.
type stmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type writerStmts struct {
	insert, upsertHead, updateHead, head, dataVersion, stored stmt
}

func (st *writerStmts) all() []*stmt {
	return []*stmt{&st.insert, &st.upsertHead, &st.updateHead, &st.head, &st.dataVersion, &st.stored}
}

var writerQueries = [...]string{
	`INSERT INTO events (session_id, seq, v, turn_id, type, ts, payload, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?)`,
	`INSERT INTO sessions (session_id, created_at, updated_at, last_seq, head_hash) VALUES (?,?,?,?,?)
		ON CONFLICT (session_id) DO UPDATE SET updated_at = excluded.updated_at, last_seq = excluded.last_seq, head_hash = excluded.head_hash`,
	`UPDATE sessions SET updated_at = ?, last_seq = ?, head_hash = ? WHERE session_id = ?`,
	`SELECT last_seq, head_hash, created_at FROM sessions WHERE session_id = ?`,
	`PRAGMA data_version`,
	`SELECT ` + columns + ` FROM events WHERE session_id = ? AND seq = ?`,
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
		ds, err := pc.PrepareContext(ctx, writerQueries[i])
		if err != nil {
			w.closeStmts()
			return fmt.Errorf("preparing event log statements: %w", err)
		}
		st, ok := ds.(stmt)
		if !ok {
			ds.Close()
			w.closeStmts()
			return fmt.Errorf("sqlite driver statement %T cannot run with a context", ds)
		}
		*dst = st
	}
	return nil
}

func (w *writer) closeStmts() error {
	var errs []error
	for _, st := range w.stmts.all() {
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
	for i, v := range vs {
		w.args[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return w.args[:len(vs)]
}

func (w *writer) insert(ctx context.Context, e *event.Event, ts string) error {
	_, err := w.stmts.insert.ExecContext(ctx, w.bind(e.SessionID, int64(e.Seq), int64(e.V), e.TurnID, string(e.Type), ts, []byte(e.Payload), e.PrevHash, e.Hash))
	return err
}

// updateHead reports how many rows it changed: 0 when the session has no
// row.
func (w *writer) updateHead(ctx context.Context, id string, h *head, now string) (int64, error) {
	res, err := w.stmts.updateHead.ExecContext(ctx, w.bind(now, int64(h.seq), h.hash, id))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (w *writer) upsertHead(ctx context.Context, id string, h *head, now string) error {
	_, err := w.stmts.upsertHead.ExecContext(ctx, w.bind(id, h.created, now, int64(h.seq), h.hash))
	return err
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

// readHead reads the session's head from its row; a session without one
// starts at the genesis hash.
func (w *writer) readHead(ctx context.Context, id string) (*head, error) {
	h := &head{hash: event.GenesisHash}
	found, err := w.query(ctx, w.stmts.head, w.bind(id), 3)
	if err != nil || !found {
		return h, err
	}
	seq, ok := w.dest[0].(int64)
	if !ok || seq < 0 {
		return nil, fmt.Errorf("session %s: last_seq %v is not a count", id, w.dest[0])
	}
	hash, ok1 := textValue(w.dest[1])
	created, ok2 := textValue(w.dest[2])
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("session %s: head_hash or created_at is not text", id)
	}
	h.seq, h.hash, h.created, h.stored = uint64(seq), hash, created, true
	return h, nil
}

// stored reads the event at seq of the session.
func (w *writer) stored(ctx context.Context, session string, seq uint64) (event.Event, error) {
	found, err := w.query(ctx, w.stmts.stored, w.bind(session, int64(seq)), len(w.dest))
	if err != nil {
		return event.Event{}, err
	}
	if !found {
		return event.Event{}, fmt.Errorf("session %s has no stored event at seq %d", session, seq)
	}
	return eventFromValues(w.dest[:], session)
}
