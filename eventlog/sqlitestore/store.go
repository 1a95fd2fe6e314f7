// Package sqlitestore is the embedded default event log: one SQLite file in
// WAL mode with synchronous=FULL (checked at start-up), one writer connection
// that group-commits concurrent appends in a single BEGIN IMMEDIATE
// transaction, and a pool of read-only connections.
//
// There is no writer goroutine: the appender that finds no commit under way
// commits itself (a lone appender pays no hand-off between goroutines), and
// appends that arrive meanwhile wait in a queue; when its commit is done, the
// leader passes the lead to the first of them, which commits all that wait.
// After a commit shared by several appenders the next leader yields once
// before taking the queue, so that those appenders, just answered, join it.
//
// What can be done before the write lock is done by each appender, in
// parallel with the others and with the commit under way: it canonicalises
// its draft, formats its timestamp and seals it (hashes it) after its
// session's tail, the last event queued or committed. The leader checks
// each guess against the head under the lock and seals again whatever does
// not follow it, so the chain never depends on the guess. The commit runs on
// the driver's connection and statements (writer.go).
//
// Layout (schema 3, schema.go): sessions gives each session an integer key
// (sid) and holds its id and creation time, written once; events are in a
// rowid table, in the order they were committed, naming their session by
// its key, with a unique index on (sid, seq); each session's head (last seq
// and hash, time updated) is in heads, a rowid table keyed by sid, written
// in the same transaction as its events, so that Verify sees a deleted last
// event, and apart from sessions, so that it also sees a deleted head. A
// commit of one event writes three pages (event, index entry, head) where
// the bare table of bare_test.go writes two; a commit's events, and its
// heads, are written by one statement each (up to 64 rows, writer.go).
// Read-only, the store also reads schemas 1 and 2 as they are
// (readQueries).
//
// synchronous=NORMAL is not allowed: in WAL mode it can lose acknowledged
// commits on power loss, and this log's promise is that an acknowledged
// event exists.
package sqlitestore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options tune a Store. The zero value is the default.
type Options struct {
	// BusyTimeout is how long an operation waits for another process's
	// lock before failing with ErrLocked. Default 5 s.
	BusyTimeout time.Duration
	// ReadOnly opens an existing log for reading only; a missing file is
	// ErrNoLog instead of a new log.
	ReadOnly bool
	// MaxBatch caps how many appends share one transaction. Default 256.
	MaxBatch int
	// Readers is the size of the read pool. Default 4.
	Readers int
}

// Store is the SQLite event log. Its methods may be called concurrently.
type Store struct {
	path string
	opts Options
	w    *sql.DB // exactly one connection: the writer
	r    *sql.DB // read-only pool
	q    *readQueries
	hub  eventlog.Hub

	mu       sync.RWMutex // guards closed against new appends
	closed   bool
	inflight sync.WaitGroup // appends queued and not yet answered

	qmu     sync.Mutex
	queue   []*appendReq // waiting for the next commit, in arrival order
	leading bool         // an appender is committing (it owns the writer state)

	commits, committedEvents atomic.Uint64

	tails  sync.Map     // session id -> *tail
	ntails atomic.Int64 // tails stored since the map was last cleared

	keys  sync.Map     // session id -> its key (int64), for Read (schema 3)
	nkeys atomic.Int64 // keys stored since the map was last cleared

	// Owned by the leading appender (handed over under qmu).
	wr          writer
	heads       map[string]head // session heads as of dataVersion
	dataVersion int64
	shared      bool // the last commit answered more than one append
}

var _ eventlog.Store = (*Store)(nil)

// appendReq is one Append (one draft) or one AppendBatch (drafts of one
// session with no expected seq, written all or none).
type appendReq struct {
	ds []event.Draft    // as given
	ps []event.Prepared // canonicalised by the appender, not the writer
	ts []string         // each draft's timestamp as stored
	// blobs are written in the same transaction as the drafts
	// (AppendBatchBlobs).
	blobs []eventlog.Blob
	done  chan appendRes

	// sealed, when not nil, holds ps sealed by the appender after the
	// session's tail as it stood when the request was queued. The
	// leader writes them only if each follows the head it finds (same
	// seq, same previous hash), and otherwise seals the draft itself:
	// Seal is a pure function of the draft and its place in the chain,
	// so what is written never depends on the guess.
	sealed []event.Event
	tail   *tail
}

// tail is what appenders know of a session's chain: the last event queued
// or committed, so that an appender seals its event (hashing it) before
// queueing it, in parallel with other appenders and the commit under way,
// instead of the leader hashing every event of its batch one after another.
// It is a guess the leader checks, never trusted.
type tail struct {
	mu    sync.Mutex // held while an appender seals after the tail and queues
	seq   uint64
	hash  string
	known bool // seq and hash name the last event queued or committed
	// pending counts the session's requests queued and not yet
	// answered; when a commit leaves none, the tail is set to the head
	// the commit wrote (or unknown after a failed commit).
	pending int
}

type appendRes struct {
	es  []event.Event
	err error
	// lead, instead of an outcome: the request is still queued, and its
	// appender now commits the queue.
	lead bool
}

// Open opens (creating when needed) the event log at path.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("event log path %s: %w", path, err)
	}
	if err := checkFile(abs, o.ReadOnly); err != nil {
		return nil, err
	}
	s := &Store{path: abs, opts: o, q: queriesFor(len(migrations))}
	if !o.ReadOnly {
		if s.w, err = sql.Open("sqlite", s.dsn(false)); err != nil {
			return nil, fmt.Errorf("opening %s: %w", abs, err)
		}
		s.w.SetMaxOpenConns(1)
		s.w.SetMaxIdleConns(1)
		s.w.SetConnMaxLifetime(0)
		s.w.SetConnMaxIdleTime(0)
		if err := s.openWriter(ctx); err != nil {
			s.w.Close()
			return nil, err
		}
		// The -wal and -shm files SQLite has made by now.
		if err := privatize(abs); err != nil {
			s.w.Close()
			return nil, err
		}
	}
	if s.r, err = sql.Open("sqlite", s.dsn(true)); err != nil {
		if s.w != nil {
			s.w.Close()
		}
		return nil, fmt.Errorf("opening %s: %w", abs, err)
	}
	s.r.SetMaxOpenConns(o.Readers)
	s.r.SetMaxIdleConns(o.Readers)
	if o.ReadOnly {
		if err := s.checkReadable(ctx); err != nil {
			s.r.Close()
			return nil, err
		}
	}
	return s, nil
}

// Stats counts what the writer has done since Open.
type Stats struct {
	Commits uint64 // transactions that wrote at least one event
	Events  uint64 // events written
}

// Stats reports the writer's counters; Events/Commits is the mean group
// commit size.
func (s *Store) Stats() Stats {
	return Stats{Commits: s.commits.Load(), Events: s.committedEvents.Load()}
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

func checkFile(path string, readOnly bool) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if readOnly {
			return fmt.Errorf("%w at %s (nothing has been recorded with this data dir)", ErrNoLog, path)
		}
		dir := filepath.Dir(path)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating data dir %s: %w (set --data-dir or CUSTOM_AGENT_DATA_DIR to a writable directory)", dir, err)
		}
		// Made here at 0600, whatever the umask: SQLite gives the -wal and
		// -shm files it makes the mode of the database file.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscallNoFollow, 0o600)
		if err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating event log %s: %w", path, err)
		}
		if f != nil {
			f.Close()
		}
		return privatize(path)
	case err != nil:
		return fmt.Errorf("event log %s: %w (set --data-dir or CUSTOM_AGENT_DATA_DIR to a usable directory)", path, err)
	case st.IsDir():
		return fmt.Errorf("event log %s is a directory, not a database file", path)
	}
	if readOnly {
		return nil
	}
	return privatize(path)
}

// privatize makes the log and its -wal and -shm files 0600 where they are
// regular files open to others: they hold every argument and output, and a
// data directory made by hand (0755) left them at the umask's 0644.
func privatize(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("event log %s: %w", p, err)
		}
		if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, st.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("making %s private (mode 0600): %w", p, err)
		}
	}
	return nil
}

func (s *Store) dsn(readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", s.opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Set("mode", "ro")
		q.Add("_pragma", "query_only(1)")
		// 16 MiB of page cache per reader instead of SQLite's 2 MiB: a
		// session's events lie among other sessions' (schema 2 keeps them
		// in commit order), so replaying one reads most pages of that
		// part of the table, and with a cache smaller than those pages
		// every replay read each of them again from the file (a fifth of
		// a replay's time). The cache fills only with what is read.
		q.Add("_pragma", "cache_size(-16384)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: s.path}).EscapedPath() + "?" + q.Encode()
}

// prepare checks the file is ours, applies migrations and checks the
// durability settings actually in force.
// openWriter checks the log and prepares the writer's statements (so
// that a log they do not fit fails here rather than at the first append).
// SQLite may answer SQLITE_BUSY at once, without waiting out the busy
// timeout, while another process's connection holds the file in some
// states (seen in CI: a `run` opening the log while `serve` wrote it);
// that is retried until the busy timeout has passed.
func (s *Store) openWriter(ctx context.Context) error {
	deadline := time.Now().Add(s.opts.BusyTimeout)
	for {
		err := s.prepare(ctx)
		if err == nil {
			if err = s.wr.run(ctx, s.w, func(*writer) error { return nil }); err != nil {
				err = explain(s.path, "opening event log", err)
			}
		}
		if err == nil || !errors.Is(err, ErrLocked) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *Store) prepare(ctx context.Context) error {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return explain(s.path, "opening event log", err)
	}
	defer conn.Close()
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return explain(s.path, "opening event log", err)
	}
	if mode != "wal" {
		return fmt.Errorf("event log %s: journal_mode is %q, want wal (is the file on a filesystem without shared memory?)", s.path, mode)
	}
	var sync int
	if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		return explain(s.path, "opening event log", err)
	}
	if sync != 2 { // 2 = FULL
		return fmt.Errorf("event log %s: synchronous is %d, want 2 (FULL): NORMAL may lose acknowledged events on power loss", s.path, sync)
	}
	return migrate(ctx, conn, s.path)
}

func migrate(ctx context.Context, conn *sql.Conn, path string) error {
	var appID, version, tables int
	if err := conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return explain(path, "reading event log header", err)
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return explain(path, "reading event log header", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return explain(path, "reading event log header", err)
	}
	switch {
	case appID == 0 && tables == 0 && version == 0:
		// A new file.
	case appID != applicationID:
		return fmt.Errorf("%s: %w (application id %#x); point --data-dir elsewhere or move the file aside", path, ErrForeign, appID)
	case version > len(migrations):
		return fmt.Errorf("%s: %w (schema version %d, this build knows %d); upgrade custom-agent", path, ErrTooNew, version, len(migrations))
	case version == len(migrations):
		return nil
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return explain(path, "migrating event log", err)
	}
	defer tx.Rollback()
	// Re-read under the write lock: another process may have migrated.
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return explain(path, "migrating event log", err)
	}
	for i := version; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return explain(path, fmt.Sprintf("migrating event log to schema %d", i+1), err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, len(migrations))); err != nil {
		return explain(path, "migrating event log", err)
	}
	return explain(path, "migrating event log", tx.Commit())
}

// readQueries are the reads of one schema.
type readQueries struct {
	verifyHead, verifyEvents, sessions string
	// read reads by session id (schemas 1 and 2). From schema 3, key
	// finds a session's key and readByKey reads by it. readByKey compares the
	// key through CAST: with the integer bound as it is, SQLite prepared
	// each Read's statement twice (sqlite3Reprepare at its first step,
	// about 7 µs of a follower's read).
	read, key, readByKey string
	// orphans lists the keys that events name and sessions does not
	// (none before schema 3: "").
	orphans string
	// blob reads a blob's bytes by its digest (no blobs before schema
	// 4: "").
	blob string
	// answer reads an offered answer (no answers before schema 5: "").
	answer string
}

// queriesFor is the reads of a schema from oldestReadable on.
func queriesFor(schema int) *readQueries {
	if schema < keyedSchema {
		return &readQueries{
			read:         `SELECT ` + columns + ` FROM events WHERE session_id = ? AND seq >= ? ORDER BY seq`,
			verifyHead:   `SELECT last_seq, head_hash FROM sessions WHERE session_id = ?`,
			verifyEvents: `SELECT ` + columns + ` FROM events WHERE session_id = ? ORDER BY seq`,
			sessions:     `SELECT session_id, created_at, updated_at, last_seq, head_hash FROM sessions ORDER BY updated_at DESC, session_id`,
		}
	}
	// The session's key is looked up once, before the events' index is
	// searched by it.
	const bySession = `sid = (SELECT sid FROM sessions WHERE session_id = ?)`
	q := &readQueries{
		key:          `SELECT sid FROM sessions WHERE session_id = ?`,
		readByKey:    `SELECT ` + columns + ` FROM events WHERE sid = CAST(? AS INTEGER) AND seq >= ? ORDER BY seq`,
		verifyHead:   `SELECT h.last_seq, h.head_hash FROM sessions s JOIN heads h USING (sid) WHERE s.session_id = ?`,
		verifyEvents: `SELECT ` + columns + ` FROM events WHERE ` + bySession + ` ORDER BY seq`,
		sessions: `SELECT s.session_id, s.created_at, h.updated_at, h.last_seq, h.head_hash FROM sessions s JOIN heads h USING (sid)
			ORDER BY h.updated_at DESC, s.session_id`,
		orphans: `SELECT DISTINCT sid FROM events WHERE sid NOT IN (SELECT sid FROM sessions)`,
	}
	if schema >= blobSchema {
		q.blob = `SELECT data FROM blobs WHERE sum = ?`
	}
	if schema >= inboxSchema {
		q.answer = `SELECT option, confirm, ui, at, request_seq FROM answers WHERE session_id = ? AND tool_call_id = ? AND request_seq = ?`
	}
	return q
}

// Blob implements eventlog.BlobAppender: the bytes of a blob a commit
// carried, checked against the digest (a row edited in the file is not
// returned). A log of a schema without blobs (opened read-only before a
// newer build migrated it) holds none.
func (s *Store) Blob(ctx context.Context, sum [32]byte) ([]byte, bool, error) {
	if s.q.blob == "" {
		return nil, false, nil
	}
	var data []byte
	switch err := s.r.QueryRowContext(ctx, s.q.blob, sum[:]).Scan(&data); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, explain(s.path, "reading a tool output from the event log", err)
	}
	if sha256.Sum256(data) != sum {
		return nil, false, fmt.Errorf("event log %s: the tool output stored under sha256:%x was modified: its bytes no longer hash to it", s.path, sum)
	}
	return data, true, nil
}

func (s *Store) checkReadable(ctx context.Context) error {
	var appID, version int
	row := s.r.QueryRowContext(ctx, "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version)")
	if err := row.Scan(&appID, &version); err != nil {
		return explain(s.path, "opening event log", err)
	}
	if appID != applicationID {
		return fmt.Errorf("%s: %w (application id %#x)", s.path, ErrForeign, appID)
	}
	if version > len(migrations) {
		return fmt.Errorf("%s: %w (schema version %d, this build knows %d); upgrade custom-agent", s.path, ErrTooNew, version, len(migrations))
	}
	if version < oldestReadable {
		return fmt.Errorf("event log %s has schema version %d; open it once read-write to migrate it to %d", s.path, version, len(migrations))
	}
	s.q = queriesFor(version)
	return nil
}

// Append implements eventlog.Store.
func (s *Store) Append(ctx context.Context, d event.Draft) (event.Event, error) {
	p, err := s.check(d)
	if err != nil {
		return event.Event{}, err
	}
	es, err := s.submit(ctx, &appendReq{ds: []event.Draft{d}, ps: []event.Prepared{p}, ts: []string{p.Draft().TS.Format(event.TimeFormat)}})
	if err != nil {
		return event.Event{}, err
	}
	return es[0], nil
}

var _ eventlog.BatchAppender = (*Store)(nil)

// AppendBatch implements eventlog.BatchAppender: the drafts share the
// transaction of whatever else is being committed at the moment, and are
// written all or none.
func (s *Store) AppendBatch(ctx context.Context, drafts []event.Draft) ([]event.Event, error) {
	return s.AppendBatchBlobs(ctx, drafts, nil)
}

var _ eventlog.BlobAppender = (*Store)(nil)

// AppendBatchBlobs implements eventlog.BlobAppender: the blobs go into the
// blobs table in the transaction that writes the drafts. Each blob's
// digest is checked here, so the table never holds bytes that do not hash
// to their key.
func (s *Store) AppendBatchBlobs(ctx context.Context, drafts []event.Draft, blobs []eventlog.Blob) ([]event.Event, error) {
	if err := eventlog.CheckBatch(drafts, blobs); err != nil {
		return nil, err
	}
	if len(drafts) == 0 {
		return nil, nil
	}
	req := &appendReq{ds: drafts, ps: make([]event.Prepared, len(drafts)), ts: make([]string, len(drafts)), blobs: blobs}
	for i, d := range drafts {
		p, err := s.check(d)
		if err != nil {
			return nil, fmt.Errorf("draft %d of the batch: %w", i+1, err)
		}
		req.ps[i] = p
		req.ts[i] = p.Draft().TS.Format(event.TimeFormat)
	}
	return s.submit(ctx, req)
}

// check refuses a draft on a read-only store, then as every store does
// (eventlog.CheckDraft).
func (s *Store) check(d event.Draft) (event.Prepared, error) {
	if s.opts.ReadOnly {
		return event.Prepared{}, fmt.Errorf("append to %s: %w (opened read-only)", s.path, ErrReadOnly)
	}
	return eventlog.CheckDraft(d)
}

// submit queues req and waits for its outcome, committing the queue itself
// when no other appender is.
func (s *Store) submit(ctx context.Context, req *appendReq) ([]event.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req.done = make(chan appendRes, 1)
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, eventlog.ErrClosed
	}
	s.inflight.Add(1)
	s.mu.RUnlock()
	defer s.inflight.Done()
	t := s.tailOf(req.ds[0].SessionID)
	req.tail = t
	t.mu.Lock()
	req.speculate(t)
	t.pending++
	s.qmu.Lock()
	s.queue = append(s.queue, req)
	lead := !s.leading
	s.leading = true
	s.qmu.Unlock()
	t.mu.Unlock()
	// Queued: wait for the outcome whatever ctx does, so that the caller
	// always knows whether its events were written.
	for {
		if lead {
			s.lead()
		}
		res := <-req.done
		if !res.lead {
			return res.es, res.err
		}
		lead = true
	}
}

func (s *Store) tailOf(session string) *tail {
	if t, ok := s.tails.Load(session); ok {
		return t.(*tail)
	}
	t, loaded := s.tails.LoadOrStore(session, &tail{})
	if !loaded && s.ntails.Add(1) > maxTails {
		// A long-lived process appends to ever more sessions: forget
		// them all. A forgotten tail costs only its session's next
		// append a seal by the leader (the guess is never trusted),
		// and requests still queued keep the tail they hold.
		s.tails.Clear()
		s.ntails.Store(0)
	}
	return t.(*tail)
}

// maxTails bounds how many sessions' tails a store keeps.
const maxTails = 4096

// speculate seals the request's drafts after the session's tail, when it
// is known, and moves the tail past them. A draft naming its seq (a retry
// that may be answered from what is stored) is left to the leader and
// makes the tail unknown until the session's queue is empty again.
// Called with t.mu held.
func (r *appendReq) speculate(t *tail) {
	if len(r.ds) == 1 && r.ds[0].Seq != 0 {
		t.known = false
		return
	}
	if !t.known {
		return
	}
	r.sealed = make([]event.Event, len(r.ps))
	seq, hash := t.seq, t.hash
	for i, p := range r.ps {
		r.sealed[i] = p.Seal(seq+1, hash)
		seq, hash = r.sealed[i].Seq, r.sealed[i].Hash
	}
	t.seq, t.hash = seq, hash
}

// settle tells the tails of the batch's sessions that their requests are
// answered; a session with none left queued gets the head the commit
// wrote as its tail (heads is nil after a failed commit: unknown).
func settle(batch []*appendReq, heads map[string]*head) {
	for _, r := range batch {
		t := r.tail
		t.mu.Lock()
		t.pending--
		if t.pending == 0 {
			h, ok := heads[r.ds[0].SessionID]
			t.known = ok
			if ok {
				t.seq, t.hash = h.seq, h.hash
			}
		}
		t.mu.Unlock()
	}
}

// lead commits what is queued, up to MaxBatch requests, in one transaction,
// then passes the lead to the first request still queued, if any. While
// one commit is being synced, the next batch gathers in the queue.
//
// When the last commit answered several appends, the new leader first
// yields the processor: those appenders were just woken and are encoding
// their next event, and without the yield the first of them back commits
// alone while the others queue behind it (commits alternated between one
// event and all the others, each paying a whole sync). A lone appender
// does not yield.
func (s *Store) lead() {
	if s.shared {
		runtime.Gosched()
	}
	s.qmu.Lock()
	n := min(len(s.queue), s.opts.MaxBatch)
	batch := make([]*appendReq, n)
	copy(batch, s.queue)
	s.queue = append(s.queue[:0], s.queue[n:]...)
	s.qmu.Unlock()

	results, committed, heads := s.commit(batch)
	s.shared = len(batch) > 1
	settle(batch, heads)
	// Publish before acknowledging, so that once Append returns its
	// event has been offered to every subscriber (Publish never blocks).
	if len(committed) > 0 {
		s.commits.Add(1)
		s.committedEvents.Add(uint64(len(committed)))
		s.hub.Publish(committed...)
	}
	s.qmu.Lock()
	if len(s.queue) > 0 {
		s.queue[0].done <- appendRes{lead: true}
	} else {
		s.leading = false
	}
	s.qmu.Unlock()
	for i, r := range batch {
		r.done <- results[i]
	}
}

type head struct {
	sid   int64 // the session's key; 0 until it has one
	seq   uint64
	hash  string
	dirty bool
}

// commit writes the batch in one transaction. On a database error nothing of
// the batch is written and every request gets the error; a request refused
// on its own (seq conflict) does not affect the others.
//
// It returns the heads it wrote, by session (nil when nothing was written).
func (s *Store) commit(batch []*appendReq) ([]appendRes, []event.Event, map[string]*head) {
	results := make([]appendRes, len(batch))
	fail := func(err error) ([]appendRes, []event.Event, map[string]*head) {
		err = explain(s.path, "appending to event log", err)
		for i := range results {
			if results[i].err == nil {
				results[i] = appendRes{err: err}
			}
		}
		return results, nil, nil
	}
	var committed []event.Event
	var heads map[string]*head
	err := s.wr.run(context.Background(), s.w, func(w *writer) error {
		var err error
		committed, heads, err = s.commitOn(w, batch, results)
		return err
	})
	if err != nil {
		return fail(err)
	}
	return results, committed, heads
}

// commitOn is commit on the writer's driver connection. A request refused
// on its own gets its error in results; any other error is returned, and
// then nothing of the batch is written.
func (s *Store) commitOn(w *writer, batch []*appendReq, results []appendRes) ([]event.Event, map[string]*head, error) {
	ctx := context.Background()
	tx, err := w.begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	done := false
	defer func() {
		if !done {
			tx.Rollback()
		}
	}()
	// Under the write lock: if another connection (another process) has
	// committed since our last commit, our cached heads may be stale.
	dv, err := w.dataVersion(ctx)
	if err != nil {
		return nil, nil, err
	}
	if dv != s.dataVersion || s.heads == nil {
		s.heads = map[string]head{}
		s.dataVersion = dv
	}
	heads := make(map[string]*head, len(batch))
	clear(w.rows) // a failed commit may have left some
	w.rows = w.rows[:0]
	n := 0
	for _, r := range batch {
		n += len(r.ps)
	}
	committed := make([]event.Event, 0, n)
	var fresh []int // indexes of results that are new events
	for i, r := range batch {
		if len(r.ds) == 1 && r.ds[0].Seq != 0 {
			d := r.ds[0]
			h, err := s.head(ctx, w, heads, d.SessionID)
			if err != nil {
				return nil, nil, err
			}
			if d.Seq <= h.seq {
				// The stored event may be one of this commit's.
				if err := w.flush(ctx); err != nil {
					return nil, nil, err
				}
				results[i] = idempotent(ctx, w, h.sid, r.ps[0])
				continue
			}
			if d.Seq > h.seq+1 {
				results[i] = appendRes{err: fmt.Errorf("append seq %d to session %s (next is %d): %w", d.Seq, d.SessionID, h.seq+1, eventlog.ErrSeqGap)}
				continue
			}
		}
		// The appender's guesses, each kept only where it follows the
		// head (a zero event, no guess, never does: seqs start at 1).
		es := r.sealed
		if es == nil {
			es = make([]event.Event, len(r.ps))
		}
		for j, p := range r.ps {
			h, err := s.head(ctx, w, heads, r.ds[j].SessionID)
			if err != nil {
				return nil, nil, err
			}
			e := &es[j]
			if e.Seq != h.seq+1 || e.PrevHash != h.hash {
				*e = p.Seal(h.seq+1, h.hash)
			}
			if h.sid == 0 {
				// A new session: its key, created at its first event.
				if h.sid, err = w.newSession(ctx, r.ds[j].SessionID, r.ts[j]); err != nil {
					return nil, nil, err
				}
			}
			w.queue(e, h.sid, r.ts[j])
			h.seq, h.hash, h.dirty = e.Seq, e.Hash, true
		}
		for _, b := range r.blobs {
			if err := w.putBlob(ctx, b); err != nil {
				return nil, nil, err
			}
		}
		results[i] = appendRes{es: es}
		committed = append(committed, es...)
		fresh = append(fresh, i)
	}
	if err := w.flush(ctx); err != nil {
		return nil, nil, err
	}
	if err := writeHeads(ctx, w, heads); err != nil {
		return nil, nil, err
	}
	done = true
	if err := tx.Commit(); err != nil {
		for _, i := range fresh {
			results[i] = appendRes{}
		}
		s.heads = nil // unknown state: re-read heads next time
		return nil, nil, err
	}
	for id, h := range heads {
		h.dirty = false
		s.heads[id] = *h
	}
	return committed, heads, nil
}

// writeHeads records the new head of every session the commit appended
// to, in one statement for up to maxRows sessions (writer.writeHeads).
func writeHeads(ctx context.Context, w *writer, heads map[string]*head) error {
	dirty := make([]*head, 0, len(heads))
	for _, h := range heads {
		if h.dirty {
			dirty = append(dirty, h)
		}
	}
	if len(dirty) == 0 {
		return nil
	}
	return w.writeHeads(ctx, dirty, event.NormalizeTime(time.Now()).Format(event.TimeFormat))
}

// head returns the session's current head: from the cache when no other
// connection has committed since, else read under the write lock, so that
// appends from other processes are chained correctly.
func (s *Store) head(ctx context.Context, w *writer, heads map[string]*head, id string) (*head, error) {
	if h, ok := heads[id]; ok {
		return h, nil
	}
	if h, ok := s.heads[id]; ok {
		heads[id] = &h
		return &h, nil
	}
	h, err := w.readHead(ctx, id)
	if err != nil {
		return nil, err
	}
	heads[id] = h
	return h, nil
}

// idempotent answers a retried append whose seq is already stored.
func idempotent(ctx context.Context, w *writer, sid int64, p event.Prepared) appendRes {
	d := p.Draft()
	stored, err := w.stored(ctx, d.SessionID, sid, d.Seq)
	if err != nil {
		return appendRes{err: fmt.Errorf("append retry of seq %d: %w", d.Seq, err)}
	}
	if want := p.Seal(stored.Seq, stored.PrevHash); want.Hash != stored.Hash {
		return appendRes{err: fmt.Errorf("append seq %d to session %s: %w", d.Seq, d.SessionID, eventlog.ErrSeqConflict)}
	}
	return appendRes{es: []event.Event{stored}}
}

const columns = `seq, v, turn_id, type, ts, payload, prev_hash, hash`

type scanner interface{ Scan(dest ...any) error }

func scanEvent(row scanner, session string) (event.Event, error) {
	var (
		e       event.Event
		typ, ts string
		payload []byte
	)
	if err := row.Scan(&e.Seq, &e.V, &e.TurnID, &typ, &ts, &payload, &e.PrevHash, &e.Hash); err != nil {
		return event.Event{}, err
	}
	t, err := parseTS(ts)
	if err != nil {
		// Keep the seq so Verify can name the row.
		return event.Event{Seq: e.Seq}, fmt.Errorf("seq %d: bad timestamp %q: %w", e.Seq, ts, err)
	}
	e.SessionID, e.Type, e.TS, e.Payload = session, event.Type(typ), t, payload
	return e, nil
}

// Read implements eventlog.Store.
//
// Replay is the store's hottest read, so its rows are taken from the driver
// directly (database/sql's per-column conversion by reflection was a tenth
// of a replay's CPU). Verify keeps the general path through scanEvent.
func (s *Store) Read(ctx context.Context, sessionID string, fromSeq uint64) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		if fromSeq > math.MaxInt64 {
			return // no seq is that large
		}
		conn, err := s.r.Conn(ctx)
		if err != nil {
			yield(event.Event{}, explain(s.path, "reading event log", err))
			return
		}
		defer conn.Close()
		stopped := false
		err = conn.Raw(func(dc any) error {
			q, ok := dc.(driver.QueryerContext)
			if !ok {
				return fmt.Errorf("sqlite driver connection %T cannot query", dc)
			}
			query, session := s.q.read, driver.Value(sessionID)
			if s.q.key != "" {
				sid, found, err := s.keyOf(ctx, q, sessionID)
				if err != nil || !found {
					return err // not found: no events (yet)
				}
				query, session = s.q.readByKey, sid
			}
			rows, err := q.QueryContext(ctx, query,
				[]driver.NamedValue{{Ordinal: 1, Value: session}, {Ordinal: 2, Value: int64(fromSeq)}})
			if err != nil {
				return err
			}
			defer rows.Close()
			dest := make([]driver.Value, 8)
			for {
				if err := rows.Next(dest); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
				e, err := eventFromValues(dest, sessionID)
				if err != nil {
					return err
				}
				if !yield(e, nil) {
					stopped = true
					return nil
				}
			}
		})
		if err != nil && !stopped {
			yield(event.Event{}, explain(s.path, "reading event log", err))
		}
	}
}

// keyOf is the session's key, from the store's cache or else read and
// cached; found is false for a session without one.
//
// Read looks the key up apart from the events, and keeps it, because each
// Read prepares its query anew (a follower reads after every append), and
// the query finding the key in the same statement took a follower about
// 6 µs longer (p50) than schema 2's. The store never changes a session's
// key once given, so a key cached here stays right in every process that
// shares the file. Only an edit behind the store's back changes one: if a
// session's sessions row is deleted and the session appended to again, it
// gets a new key, and a reader that kept the old one goes on reading the
// old events (Verify, which does not use the cache, reads the new ones).
func (s *Store) keyOf(ctx context.Context, q driver.QueryerContext, id string) (sid int64, found bool, err error) {
	if v, ok := s.keys.Load(id); ok {
		return v.(int64), true, nil
	}
	rows, err := q.QueryContext(ctx, s.q.key, []driver.NamedValue{{Ordinal: 1, Value: id}})
	if err != nil {
		return 0, false, err
	}
	defer func() {
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
	}()
	dest := make([]driver.Value, 1)
	switch err := rows.Next(dest); {
	case errors.Is(err, io.EOF):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	}
	sid, ok := dest[0].(int64)
	if !ok || sid <= 0 {
		return 0, false, fmt.Errorf("session %s: key %v is not a positive integer", id, dest[0])
	}
	if s.nkeys.Add(1) > maxTails {
		s.keys.Clear() // bounded as the tails are; a forgotten key is read again
		s.nkeys.Store(0)
	}
	s.keys.Store(id, sid)
	return sid, true, nil
}

// eventFromValues builds an event from the driver's values of columns, as
// scanEvent does from a database/sql row.
func eventFromValues(v []driver.Value, session string) (event.Event, error) {
	seq, ok := v[0].(int64)
	if !ok || seq <= 0 {
		return event.Event{}, fmt.Errorf("row with seq %v: not a positive integer", v[0])
	}
	e := event.Event{Seq: uint64(seq), SessionID: session}
	ver, ok := v[1].(int64)
	if !ok {
		return event.Event{Seq: e.Seq}, fmt.Errorf("seq %d: version %v is not an integer", seq, v[1])
	}
	e.V = int(ver)
	var typ, ts string
	for i, dst := range []*string{&e.TurnID, &typ, &ts} {
		if *dst, ok = textValue(v[2+i]); !ok {
			return event.Event{Seq: e.Seq}, fmt.Errorf("seq %d: column %d holds %T, not text", seq, 3+i, v[2+i])
		}
	}
	switch p := v[5].(type) {
	case []byte:
		e.Payload = p // the driver's own copy, not reused by the next row
	case string:
		e.Payload = []byte(p)
	default:
		return event.Event{Seq: e.Seq}, fmt.Errorf("seq %d: payload holds %T", seq, v[5])
	}
	if e.PrevHash, ok = textValue(v[6]); !ok {
		return event.Event{Seq: e.Seq}, fmt.Errorf("seq %d: prev_hash holds %T, not text", seq, v[6])
	}
	if e.Hash, ok = textValue(v[7]); !ok {
		return event.Event{Seq: e.Seq}, fmt.Errorf("seq %d: hash holds %T, not text", seq, v[7])
	}
	t, err := parseTS(ts)
	if err != nil {
		return event.Event{Seq: e.Seq}, fmt.Errorf("seq %d: bad timestamp %q: %w", seq, ts, err)
	}
	e.Type, e.TS = event.Type(typ), t
	return e, nil
}

func textValue(v driver.Value) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case []byte:
		return string(t), true
	}
	return "", false
}

// Sessions implements eventlog.Store.
func (s *Store) Sessions(ctx context.Context) ([]eventlog.SessionInfo, error) {
	rows, err := s.r.QueryContext(ctx, s.q.sessions)
	if err != nil {
		return nil, explain(s.path, "listing sessions", err)
	}
	defer rows.Close()
	var out []eventlog.SessionInfo
	for rows.Next() {
		var si eventlog.SessionInfo
		var created, updated string
		if err := rows.Scan(&si.ID, &created, &updated, &si.Events, &si.HeadHash); err != nil {
			return nil, explain(s.path, "listing sessions", err)
		}
		si.CreatedAt, _ = parseTS(created)
		si.UpdatedAt, _ = parseTS(updated)
		out = append(out, si)
	}
	return out, explain(s.path, "listing sessions", rows.Err())
}

// Subscribe implements eventlog.Store.
func (s *Store) Subscribe(sessionID string) *eventlog.Subscription {
	return s.hub.Subscribe(sessionID)
}

// Verify implements eventlog.Store. It reads raw rows, so that a row too
// damaged to decode is reported at its seq rather than as a read error.
func (s *Store) Verify(ctx context.Context, sessionID string) error {
	var headSeq uint64
	var headHash string
	err := s.r.QueryRowContext(ctx, s.q.verifyHead, sessionID).Scan(&headSeq, &headHash)
	noHead := errors.Is(err, sql.ErrNoRows)
	if err != nil && !noHead {
		return explain(s.path, "verifying event log", err)
	}
	rows, err := s.r.QueryContext(ctx, s.q.verifyEvents, sessionID)
	if err != nil {
		return explain(s.path, "verifying event log", err)
	}
	defer rows.Close()
	c := eventlog.NewChainChecker(sessionID)
	n := 0
	for rows.Next() {
		n++
		e, err := scanEvent(rows, sessionID)
		if err != nil {
			if ce := c.BadRow(e.Seq, err); ce != nil {
				return ce
			}
			continue
		}
		if ce := c.Next(e); ce != nil {
			return ce
		}
	}
	if err := rows.Err(); err != nil {
		return explain(s.path, "verifying event log", err)
	}
	if noHead {
		if n == 0 {
			orphaned, err := s.orphaned(ctx, sessionID)
			if err != nil {
				return explain(s.path, "verifying event log", err)
			}
			if orphaned {
				return &eventlog.ChainError{SessionID: sessionID, Seq: 1, Problem: "session has events but no recorded key (sessions row deleted)"}
			}
			return fmt.Errorf("session %s: %w", sessionID, eventlog.ErrNoSession)
		}
		return &eventlog.ChainError{SessionID: sessionID, Seq: 1, Problem: "session has events but no recorded head (head row deleted)"}
	}
	if ce := c.End(headSeq, headHash); ce != nil {
		return ce
	}
	return nil
}

// orphaned reports whether the log holds events of the session under a key
// that sessions no longer has (its row deleted), so that Verify tells that
// from a session never recorded. Events name their session by its key
// only, so each orphaned key's first event is tried: its hash covers the
// session id. This reads the whole index of events, but only when Verify
// is asked for a session it does not find.
func (s *Store) orphaned(ctx context.Context, sessionID string) (bool, error) {
	if s.q.orphans == "" {
		return false, nil
	}
	rows, err := s.r.QueryContext(ctx, s.q.orphans)
	if err != nil {
		return false, err
	}
	var sids []int64
	for rows.Next() {
		var sid int64
		if err := rows.Scan(&sid); err != nil {
			rows.Close()
			return false, err
		}
		sids = append(sids, sid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	for _, sid := range sids {
		row := s.r.QueryRowContext(ctx, `SELECT `+columns+` FROM events WHERE sid = ? ORDER BY seq LIMIT 1`, sid)
		e, err := scanEvent(row, sessionID)
		if err == nil && e.ComputeHash() == e.Hash {
			return true, nil
		}
	}
	return false, nil
}

// Close implements eventlog.Store.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.inflight.Wait()
	s.hub.CloseAll()
	var errs []error
	if s.w != nil {
		errs = append(errs, s.wr.close(s.w), s.w.Close())
	}
	errs = append(errs, s.r.Close())
	return errors.Join(errs...)
}
