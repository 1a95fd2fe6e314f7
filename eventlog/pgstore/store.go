// Package pgstore is the event log on PostgreSQL, for a team whose agents
// run on several hosts and must share one log: the Store port with the
// guarantees of the embedded SQLite store (package sqlitestore).
//
//   - Gap-free seq per session and the hash chain, sealed exactly as
//     sqlitestore seals (event.Prepared.Seal) and checked by the same
//     eventlog.ChainChecker.
//   - Durable before Append returns: the commit is acknowledged by a server
//     whose synchronous_commit is not off and whose fsync is on, checked on
//     every connection that writes; a server that is not durable is
//     refused (ErrNotDurable).
//   - Several processes, on several hosts, may append to one session: a
//     commit locks the rows of its sessions (in session id order, so that
//     two commits never wait on each other in a circle) before it reads
//     their heads, and the primary key (sid, seq) refuses a second event at
//     a seq even if that lock were somehow bypassed.
//   - Group commit: as in sqlitestore, the appender that finds no commit
//     under way commits, on the store's one writer connection, everything
//     queued meanwhile (up to MaxBatch requests) in one transaction.
//   - An idempotent retry on (session, seq): a draft naming its seq is
//     answered with the stored event when that seq holds the same content.
//   - Versioned migrations (schema.go), refused when the database's schema
//     is newer than this binary (ErrTooNew).
//   - Faults explained (errors.go): server unreachable, authentication,
//     missing database, permissions, newer schema, the connection lost
//     mid-append. A connection lost while a commit was being acknowledged
//     is resolved, not guessed: the store reconnects, waits for the old
//     transaction's locks, and looks whether its events are stored.
//   - Live followers across hosts (listen.go): each commit sends at most one
//     NOTIFY carrying only (session, last seq); followers wake up and read
//     from the table.
//
// Artifacts (the artifact store's files) stay on the host that made them;
// small tool outputs go into the blobs table, in the transaction of the
// event that names them, as in SQLite.
package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"net"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

// Options tune a Store. The zero value is the default.
type Options struct {
	// ReadOnly opens an existing log for reading only: nothing is created
	// or migrated, and a database without a log is ErrNoLog.
	ReadOnly bool
	// MaxBatch caps how many appends share one transaction. Default 256.
	MaxBatch int
	// Readers is the size of the connection pool for reads. Default 4.
	Readers int
	// ConnectTimeout bounds each connection attempt, unless the URL sets
	// connect_timeout. Default 10 s.
	ConnectTimeout time.Duration
	// ReconnectTimeout is how long a commit whose connection was lost
	// keeps trying to reach the server again before it fails. Default
	// 30 s.
	ReconnectTimeout time.Duration
	// CommitTimeout bounds one attempt at a commit (waiting for other
	// processes' locks included). Default 30 s.
	CommitTimeout time.Duration
}

// Store is the PostgreSQL event log. Its methods may be called
// concurrently.
type Store struct {
	cfg         *pgx.ConnConfig
	where, host string // the server and database, for messages (no password)
	opts        Options
	pool        *pgxpool.Pool
	hub         eventlog.Hub
	schema      int // the database's schema version

	mu       sync.RWMutex // guards closed against new appends
	closed   bool
	inflight sync.WaitGroup

	qmu     sync.Mutex
	queue   []*appendReq
	leading bool

	// Owned by the leading appender.
	wconn  *pgx.Conn
	shared bool // the last commit answered more than one append

	sids sync.Map // session id -> sid (int64), never changed once given
	nsid atomic.Int64

	ownPIDs sync.Map // backend pids of our writer connections (uint32)

	listenOnce       sync.Once
	listenStop       context.CancelFunc
	listenDone       chan struct{}
	listening        atomic.Bool
	listenReconnects atomic.Uint64

	commits, committedEvents, retries, reconnects, notifies atomic.Uint64

	// testLoseConn, when set by a test, is asked before (false) and after
	// (true) each COMMIT whether to cut the writer's connection there.
	testLoseConn func(afterCommit bool) bool
}

var (
	_ eventlog.Store        = (*Store)(nil)
	_ eventlog.BlobAppender = (*Store)(nil)
)

type appendReq struct {
	ds    []event.Draft
	ps    []event.Prepared
	ts    []string
	blobs []eventlog.Blob
	done  chan appendRes
}

type appendRes struct {
	es   []event.Event
	err  error
	lead bool // not an outcome: the request is still queued and its appender now commits
}

// Open connects to the PostgreSQL database named by url (postgres://user@
// host:port/db?…, or any form pgx takes; the password may also come from
// PGPASSWORD or ~/.pgpass) and, unless read-only, creates or migrates the
// log's schema in it.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.ReconnectTimeout <= 0 {
		o.ReconnectTimeout = 30 * time.Second
	}
	if o.CommitTimeout <= 0 {
		o.CommitTimeout = 30 * time.Second
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message hides the password.
		return nil, fmt.Errorf("event log store URL: %w (want postgres://USER@HOST:PORT/DATABASE)", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = o.ConnectTimeout
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "custom-agent"
	}
	host := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	s := &Store{
		cfg: cfg, opts: o, host: host,
		where: fmt.Sprintf("postgres://%s@%s/%s", cfg.User, host, cfg.Database),
	}
	if !o.ReadOnly {
		if err := s.connectWriter(ctx); err != nil {
			return nil, err
		}
		if err := s.migrate(ctx); err != nil {
			s.wconn.Close(context.Background())
			return nil, err
		}
		s.schema = len(migrations)
	}
	pc, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, err
	}
	pc.ConnConfig = cfg.Copy()
	pc.MaxConns = int32(o.Readers)
	if !o.ReadOnly {
		// Inbox offers are written through the pool: they must be durable
		// too.
		pc.AfterConnect = s.checkDurable
	}
	if s.pool, err = pgxpool.NewWithConfig(ctx, pc); err != nil {
		if s.wconn != nil {
			s.wconn.Close(context.Background())
		}
		return nil, s.explain("opening event log", err)
	}
	if o.ReadOnly {
		if err := s.checkReadable(ctx); err != nil {
			s.pool.Close()
			return nil, err
		}
	}
	return s, nil
}

// Where names the server and database (without the password).
func (s *Store) Where() string { return s.where }

// Stats counts what the store has done since Open.
type Stats struct {
	Commits    uint64 // transactions that wrote at least one event
	Events     uint64 // events written
	Retries    uint64 // commits retried after a deadlock with another process
	Reconnects uint64 // writer connections made again after one was lost
	Notifies   uint64 // NOTIFYs sent (at most one per commit)
}

// Stats reports the writer's counters.
func (s *Store) Stats() Stats {
	return Stats{Commits: s.commits.Load(), Events: s.committedEvents.Load(), Retries: s.retries.Load(),
		Reconnects: s.reconnects.Load(), Notifies: s.notifies.Load()}
}

func (s *Store) connectWriter(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return s.explain("connecting to the event log", err)
	}
	if err := s.checkDurable(ctx, conn); err != nil {
		conn.Close(context.Background())
		return err
	}
	s.ownPIDs.Store(conn.PgConn().PID(), struct{}{})
	s.wconn = conn
	return nil
}

// checkDurable refuses a connection on which a commit could be
// acknowledged before it is on disk.
func (s *Store) checkDurable(ctx context.Context, conn *pgx.Conn) error {
	var syncCommit, fsync string
	err := conn.QueryRow(ctx, `SELECT current_setting('synchronous_commit'), current_setting('fsync')`).Scan(&syncCommit, &fsync)
	if err != nil {
		return s.explain("checking the server's durability settings", err)
	}
	if syncCommit == "off" {
		return &Error{Where: s.where, Doing: "opening event log", sentinel: ErrNotDurable,
			cause: errors.New("synchronous_commit is off: a commit is acknowledged before it is on disk, and a crash of the server would lose acknowledged events"),
			Hint:  fmt.Sprintf("turn it on for the log's database (ALTER DATABASE %s SET synchronous_commit = on) or role, or add options=-c%%20synchronous_commit%%3Don to the store URL", pgx.Identifier{s.cfg.Database}.Sanitize())}
	}
	if fsync != "on" {
		return &Error{Where: s.where, Doing: "opening event log", sentinel: ErrNotDurable,
			cause: errors.New("the server runs with fsync = off: a crash of its machine may lose acknowledged events"),
			Hint:  "set fsync = on in the server's postgresql.conf and reload it"}
	}
	return nil
}

// migrate creates the log's schema or brings it up to this binary's
// version, refusing a schema that is not ours or is newer.
func (s *Store) migrate(ctx context.Context) error {
	version, err := s.readVersion(ctx, s.wconn)
	if err != nil {
		return err
	}
	if version == len(migrations) {
		return nil
	}
	tx, err := s.wconn.Begin(ctx)
	if err != nil {
		return s.explain("migrating event log", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
		return s.explain("migrating event log", err)
	}
	// Again under the lock: another process may have migrated meanwhile.
	if version, err = s.readVersion(ctx, tx); err != nil {
		return err
	}
	if version < 0 {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+schemaName); err != nil {
			return s.explain("creating the event log's schema", err)
		}
		version = 0
	}
	for i := version; i < len(migrations); i++ {
		if _, err := tx.Exec(ctx, migrations[i]); err != nil {
			return s.explain(fmt.Sprintf("migrating event log to schema %d", i+1), err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE custom_agent.meta SET version = $1 WHERE id = 1`, len(migrations)); err != nil {
		return s.explain("migrating event log", err)
	}
	return s.explain("migrating event log", tx.Commit(ctx))
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readVersion is the log's schema version: -1 when the database holds no
// log (and no custom_agent schema with tables in it); ErrForeign or
// ErrTooNew when it holds one this binary must not write.
func (s *Store) readVersion(ctx context.Context, q querier) (int, error) {
	var hasMeta bool
	var tables int
	err := q.QueryRow(ctx, `SELECT to_regclass('custom_agent.meta') IS NOT NULL,
		(SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'custom_agent')`).Scan(&hasMeta, &tables)
	if err != nil {
		return 0, s.explain("reading the event log's schema version", err)
	}
	if !hasMeta {
		if tables > 0 {
			return 0, &Error{Where: s.where, Doing: "opening event log", sentinel: ErrForeign,
				cause: fmt.Errorf("schema %s holds %d tables and no meta table", schemaName, tables),
				Hint:  "point the store URL at another database, or rename that schema"}
		}
		return -1, nil
	}
	var app string
	var version int
	if err := q.QueryRow(ctx, `SELECT application, version FROM custom_agent.meta WHERE id = 1`).Scan(&app, &version); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, &Error{Where: s.where, Doing: "opening event log", sentinel: ErrForeign, cause: errors.New("custom_agent.meta has no row"),
				Hint: "point the store URL at another database, or rename that schema"}
		}
		return 0, s.explain("reading the event log's schema version", err)
	}
	if app != application {
		return 0, &Error{Where: s.where, Doing: "opening event log", sentinel: ErrForeign, cause: fmt.Errorf("custom_agent.meta names %q", app),
			Hint: "point the store URL at another database, or rename that schema"}
	}
	if version > len(migrations) {
		return 0, &Error{Where: s.where, Doing: "opening event log", sentinel: ErrTooNew,
			cause: fmt.Errorf("schema version %d, this build knows %d", version, len(migrations)),
			Hint:  "upgrade custom-agent on this host to the version the other hosts run"}
	}
	return version, nil
}

func (s *Store) checkReadable(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.explain("opening event log", err)
	}
	defer conn.Release()
	v, err := s.readVersion(ctx, conn)
	if err != nil {
		return err
	}
	if v < 1 {
		return &Error{Where: s.where, Doing: "opening event log", sentinel: ErrNoLog,
			cause: errors.New("the database holds no custom_agent schema"),
			Hint:  "nothing has been recorded with this store yet"}
	}
	s.schema = v
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

// AppendBatch implements eventlog.BatchAppender.
func (s *Store) AppendBatch(ctx context.Context, drafts []event.Draft) ([]event.Event, error) {
	return s.AppendBatchBlobs(ctx, drafts, nil)
}

// AppendBatchBlobs implements eventlog.BlobAppender: the blobs go into the
// blobs table in the transaction that writes the drafts.
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
		return event.Prepared{}, fmt.Errorf("append to %s: %w (opened read-only)", s.where, ErrReadOnly)
	}
	return eventlog.CheckDraft(d)
}

// submit queues req and waits for its outcome, committing the queue itself
// when no other appender is (the leader/queue scheme of sqlitestore).
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
	s.qmu.Lock()
	s.queue = append(s.queue, req)
	lead := !s.leading
	s.leading = true
	s.qmu.Unlock()
	// Queued: wait for the outcome whatever ctx does.
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

// lead commits what is queued, then passes the lead on (see sqlitestore's
// lead for why it yields after a shared commit).
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

	results, committed := s.commit(batch)
	s.shared = len(batch) > 1
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

// head is a session's key and its last seq and hash, as read under the
// session's row lock.
type head struct {
	sid   int64
	seq   uint64
	hash  string
	dirty bool
}

// outcome is one attempt's result.
type outcome struct {
	results   []appendRes
	committed []event.Event
	// landed names the last event of the attempt's commit, by which a
	// later attempt tells whether a commit whose acknowledgement was lost
	// was written.
	landedSID int64
	landed    event.Event
}

// commit writes the batch in one transaction and answers each request.
// Another process's deadlock is retried; a lost connection is reconnected
// and, when the lost attempt had sent its COMMIT, resolved by looking for
// its events. A request refused on its own (seq conflict, gap) does not
// affect the others.
func (s *Store) commit(batch []*appendReq) ([]appendRes, []event.Event) {
	deadline := time.Now().Add(s.opts.ReconnectTimeout)
	var lost *outcome // an attempt whose COMMIT was sent when the connection was lost
	var lastErr error
	for tries := 0; ; tries++ {
		if s.wconn == nil || s.wconn.IsClosed() {
			if err := s.reconnect(deadline); err != nil {
				if lost != nil {
					return failAll(batch, &Error{Where: s.where, Doing: "appending to event log", sentinel: ErrOutcomeUnknown,
						cause: fmt.Errorf("the connection was lost while the commit was acknowledged (%v), and the server could not be reached again within %v: %w", lastErr, s.opts.ReconnectTimeout, err),
						Hint:  "when the server is back, read the session (custom-agent log) to see whether they are there; retrying an append with its seq set is safe"}), nil
				}
				return failAll(batch, fmt.Errorf("appending to event log %s: %w: nothing was written (%v, then %w)", s.where, ErrConnLost, lastErr, err)), nil
			}
		}
		out, commitSent, err := s.attempt(batch, lost)
		if err == nil {
			return out.results, out.committed
		}
		lastErr = err
		switch {
		case (retryable(err) || errors.Is(err, errRetry)) && tries < 10:
			s.retries.Add(1)
			continue
		case s.wconn.IsClosed() || connLost(err):
			if s.wconn != nil {
				s.wconn.Close(context.Background())
			}
			if commitSent {
				// The attempt before it, if any, was found not
				// written before this one was made.
				lost = out
			}
			if time.Now().Before(deadline) {
				continue
			}
			if lost != nil {
				return failAll(batch, &Error{Where: s.where, Doing: "appending to event log", sentinel: ErrOutcomeUnknown,
					cause: fmt.Errorf("the connection was lost while the commit was acknowledged: %w", err),
					Hint:  "when the server is back, read the session to see whether they are there; retrying an append with its seq set is safe"}), nil
			}
		}
		return failAll(batch, s.explain("appending to event log", err)), nil
	}
}

func failAll(batch []*appendReq, err error) []appendRes {
	results := make([]appendRes, len(batch))
	for i := range results {
		results[i] = appendRes{err: err}
	}
	return results
}

// reconnect makes a new writer connection, trying until deadline.
func (s *Store) reconnect(deadline time.Time) error {
	wait := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := s.connectWriter(ctx)
		cancel()
		if err == nil {
			s.reconnects.Add(1)
			return nil
		}
		if errors.Is(err, ErrNotDurable) || time.Now().Add(wait).After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

const eventColumns = `seq, v, turn_id, type, ts, payload, prev_hash, hash`

// errRetry: the attempt found the log changed under it in a way a fresh
// attempt handles (a session row this process knew was deleted).
var errRetry = errors.New("pgstore: retry the commit")

// attempt is one try at committing the batch, in two round trips to the
// server: BEGIN, the creation of new sessions, the lock of the batch's
// sessions and the read of their heads go in one pipeline; the events,
// blobs, heads, the NOTIFY and COMMIT in another. (Retries answered from
// the store and a lost commit's check add one each.) commitSent reports
// whether COMMIT was sent, after which a lost connection leaves the
// outcome to be found out.
func (s *Store) attempt(batch []*appendReq, lost *outcome) (out *outcome, commitSent bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CommitTimeout)
	defer cancel()
	conn := s.wconn
	defer func() {
		// An error leaves the transaction open (aborted, or not
		// committed): end it, if the connection is still there.
		if err != nil && !conn.IsClosed() {
			rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
			conn.Exec(rctx, "ROLLBACK")
			rcancel()
		}
	}()

	// The batch's sessions, in id order: created when new, then locked.
	var ids []string
	created := map[string]string{}
	for _, r := range batch {
		for j, d := range r.ds {
			if _, ok := created[d.SessionID]; !ok {
				created[d.SessionID] = r.ts[j]
				ids = append(ids, d.SessionID)
			}
		}
	}
	slices.Sort(ids)
	heads, err := s.lockHeads(ctx, conn, ids, created)
	if err != nil {
		return nil, false, err
	}

	if lost != nil && lost.landed.Seq != 0 {
		// Did the commit whose acknowledgement was lost land? Its
		// transaction has ended: we hold the locks it held.
		var hash string
		err := conn.QueryRow(ctx, `SELECT hash FROM custom_agent.events WHERE sid = $1 AND seq = $2`, lost.landedSID, int64(lost.landed.Seq)).Scan(&hash)
		switch {
		case err == nil && hash == lost.landed.Hash:
			if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
				return nil, false, err
			}
			return lost, false, nil
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			return nil, false, err
		}
	}

	out = &outcome{results: make([]appendRes, len(batch))}
	var rows []row
	for i, r := range batch {
		if len(r.ds) == 1 && r.ds[0].Seq != 0 {
			d := r.ds[0]
			h := heads[d.SessionID]
			if d.Seq <= h.seq {
				out.results[i] = s.idempotent(ctx, conn, rows, h.sid, r.ps[0])
				continue
			}
			if d.Seq > h.seq+1 {
				out.results[i] = appendRes{err: fmt.Errorf("append seq %d to session %s (next is %d): %w", d.Seq, d.SessionID, h.seq+1, eventlog.ErrSeqGap)}
				continue
			}
		}
		es := make([]event.Event, len(r.ps))
		for j, p := range r.ps {
			h := heads[r.ds[j].SessionID]
			es[j] = p.Seal(h.seq+1, h.hash)
			rows = append(rows, row{e: es[j], sid: h.sid, ts: r.ts[j]})
			h.seq, h.hash, h.dirty = es[j].Seq, es[j].Hash, true
		}
		out.results[i] = appendRes{es: es}
		out.committed = append(out.committed, es...)
	}
	if len(rows) == 0 {
		// Nothing new (retries answered from the store, refusals).
		_, err := conn.Exec(ctx, "COMMIT")
		return out, false, err
	}
	last := rows[len(rows)-1]
	out.landed, out.landedSID = last.e, last.sid

	b := &pgx.Batch{}
	queueEvents(b, rows)
	queueBlobs(b, batch)
	notice := queueHeads(b, ids, heads)
	b.Queue(`SELECT pg_notify($1, $2)`, notifyChannel, notice)
	if s.testLoseConn != nil && s.testLoseConn(false) {
		conn.PgConn().Close(context.Background()) // the COMMIT below is never received
	}
	b.Queue("COMMIT")
	commitSent = true
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return out, true, explainInsert(err)
	}
	if s.testLoseConn != nil && s.testLoseConn(true) {
		// Committed, but the acknowledgement is lost.
		conn.PgConn().Close(context.Background())
		return out, true, errors.New("test: connection lost after COMMIT")
	}
	s.notifies.Add(1)
	return out, true, nil
}

// explainInsert names what a unique violation on events means: the
// session's head does not match its events, which only an edit behind the
// store's back does (every commit writes both under the session's lock).
func explainInsert(err error) error {
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) && pe.SQLState() == "23505" {
		return fmt.Errorf("%w (a seq the session's head says is free is already stored: the log was edited behind custom-agent's back; run custom-agent audit verify on the session)", err)
	}
	return err
}

// lockHeads begins the commit's transaction, creates the sessions that
// have no key yet, locks every session's row (in id order) and then reads
// their heads, in one pipeline. The heads are read by a statement after the
// lock, so that, under READ COMMITTED, they include whatever the
// transaction that held the lock before committed.
func (s *Store) lockHeads(ctx context.Context, conn *pgx.Conn, ids []string, created map[string]string) (map[string]*head, error) {
	var fresh, cs []string
	for _, id := range ids {
		if _, ok := s.sids.Load(id); !ok {
			fresh = append(fresh, id)
			cs = append(cs, created[id])
		}
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	if len(fresh) > 0 {
		b.Queue(`INSERT INTO custom_agent.sessions (session_id, created_at)
			SELECT id, c FROM unnest($1::text[], $2::text[]) AS t(id, c) ORDER BY id
			ON CONFLICT (session_id) DO NOTHING`, fresh, cs)
	}
	b.Queue(`SELECT sid FROM custom_agent.sessions WHERE session_id = ANY($1) ORDER BY session_id FOR NO KEY UPDATE`, ids)
	b.Queue(`SELECT s.session_id, s.sid, h.last_seq, h.head_hash FROM custom_agent.sessions s
		LEFT JOIN custom_agent.heads h USING (sid) WHERE s.session_id = ANY($1)`, ids)
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	for range b.Len() - 2 { // BEGIN, the insert
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	if _, err := br.Exec(); err != nil { // the lock
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	heads := make(map[string]*head, len(ids))
	for rows.Next() {
		var id string
		var sid int64
		var seq *int64
		var hash *string
		if err := rows.Scan(&id, &sid, &seq, &hash); err != nil {
			rows.Close()
			return nil, err
		}
		h := &head{sid: sid, hash: event.GenesisHash}
		if seq != nil && hash != nil {
			if *seq < 0 {
				rows.Close()
				return nil, fmt.Errorf("session %s: head seq %d is negative (edited?)", id, *seq)
			}
			h.seq, h.hash = uint64(*seq), *hash
		}
		heads[id] = h
		s.rememberSID(id, sid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := br.Close(); err != nil {
		return nil, err
	}
	if len(heads) != len(ids) {
		// Known to this process but gone from the table (a row deleted
		// behind the store's back): made again by the next attempt.
		for _, id := range ids {
			if _, ok := heads[id]; !ok {
				s.sids.Delete(id)
			}
		}
		return nil, errRetry
	}
	return heads, nil
}

func (s *Store) rememberSID(id string, sid int64) {
	if s.nsid.Add(1) > maxSIDs {
		s.sids.Clear()
		s.nsid.Store(0)
	}
	s.sids.Store(id, sid)
}

// maxSIDs bounds the session keys a store remembers.
const maxSIDs = 4096

// row is an event of the commit under way.
type row struct {
	e   event.Event
	sid int64
	ts  string
}

func queueEvents(b *pgx.Batch, rows []row) {
	n := len(rows)
	sid, seq := make([]int64, n), make([]int64, n)
	v := make([]int32, n)
	turn, typ, ts, prev, hash := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	payload := make([][]byte, n)
	for i, r := range rows {
		sid[i], seq[i], v[i] = r.sid, int64(r.e.Seq), int32(r.e.V)
		turn[i], typ[i], ts[i], prev[i], hash[i] = r.e.TurnID, string(r.e.Type), r.ts, r.e.PrevHash, r.e.Hash
		payload[i] = r.e.Payload
	}
	b.Queue(`INSERT INTO custom_agent.events (sid, seq, v, turn_id, type, ts, payload, prev_hash, hash)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::text[])`,
		sid, seq, v, turn, typ, ts, payload, prev, hash)
}

func queueBlobs(b *pgx.Batch, batch []*appendReq) {
	seen := map[[32]byte]bool{}
	var sums, datas [][]byte
	for _, r := range batch {
		for _, bl := range r.blobs {
			if seen[bl.Sum] {
				continue
			}
			seen[bl.Sum] = true
			sums = append(sums, bl.Sum[:])
			datas = append(datas, bl.Data)
		}
	}
	if len(sums) == 0 {
		return
	}
	// A blob already held is the same bytes (same SHA-256): kept.
	b.Queue(`INSERT INTO custom_agent.blobs (sum, data) SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT (sum) DO NOTHING`, sums, datas)
}

// maxNotice is the longest NOTIFY payload sent (the server's limit is
// 8000 bytes); a commit of more sessions than fit announces "*": every
// follower re-reads.
const maxNotice = 7900

// queueHeads writes the new head of every session the commit appended to,
// and returns the commit's notice: the (session, last seq) of each, as a
// JSON array of pairs.
func queueHeads(b *pgx.Batch, ids []string, heads map[string]*head) string {
	var sids, seqs []int64
	var hashes []string
	var notice [][2]any
	for _, id := range ids { // in id order: the notice is deterministic
		h := heads[id]
		if !h.dirty {
			continue
		}
		sids, seqs, hashes = append(sids, h.sid), append(seqs, int64(h.seq)), append(hashes, h.hash)
		notice = append(notice, [2]any{id, h.seq})
	}
	now := event.NormalizeTime(time.Now()).Format(event.TimeFormat)
	b.Queue(`INSERT INTO custom_agent.heads (sid, updated_at, last_seq, head_hash)
		SELECT sid, $1, seq, hash FROM unnest($2::bigint[], $3::bigint[], $4::text[]) AS t(sid, seq, hash)
		ON CONFLICT (sid) DO UPDATE SET updated_at = excluded.updated_at, last_seq = excluded.last_seq, head_hash = excluded.head_hash`,
		now, sids, seqs, hashes)
	msg, _ := json.Marshal(notice)
	if len(msg) > maxNotice {
		return "*"
	}
	return string(msg)
}

// idempotent answers a retried append whose seq is already stored (by an
// earlier commit, or earlier in this one).
func (s *Store) idempotent(ctx context.Context, conn *pgx.Conn, pending []row, sid int64, p event.Prepared) appendRes {
	d := p.Draft()
	var stored event.Event
	found := false
	for _, r := range pending {
		if r.sid == sid && r.e.Seq == d.Seq {
			stored, found = r.e, true
		}
	}
	if !found {
		e, err := scanEvent(conn.QueryRow(ctx, `SELECT `+eventColumns+` FROM custom_agent.events WHERE sid = $1 AND seq = $2`, sid, int64(d.Seq)), d.SessionID)
		if err != nil {
			return appendRes{err: fmt.Errorf("append retry of seq %d to session %s: %w", d.Seq, d.SessionID, err)}
		}
		stored = e
	}
	if want := p.Seal(stored.Seq, stored.PrevHash); want.Hash != stored.Hash {
		return appendRes{err: fmt.Errorf("append seq %d to session %s: %w", d.Seq, d.SessionID, eventlog.ErrSeqConflict)}
	}
	return appendRes{es: []event.Event{stored}}
}

func scanEvent(r pgx.Row, session string) (event.Event, error) {
	var (
		e            event.Event
		seq          int64
		v            int32
		typ, ts      string
		payload      []byte
		prev, digest string
	)
	if err := r.Scan(&seq, &v, &e.TurnID, &typ, &ts, &payload, &prev, &digest); err != nil {
		return event.Event{}, err
	}
	if seq <= 0 {
		return event.Event{}, fmt.Errorf("row with seq %d: not a positive integer", seq)
	}
	e.Seq, e.V = uint64(seq), int(v)
	t, err := time.Parse(event.TimeFormat, ts)
	if err != nil {
		// Keep the seq so Verify can name the row.
		return event.Event{Seq: e.Seq}, fmt.Errorf("seq %d: bad timestamp %q: %w", seq, ts, err)
	}
	e.SessionID, e.Type, e.TS, e.Payload, e.PrevHash, e.Hash = session, event.Type(typ), t, payload, prev, digest
	return e, nil
}

// Read implements eventlog.Store.
func (s *Store) Read(ctx context.Context, sessionID string, fromSeq uint64) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		if fromSeq > math.MaxInt64 {
			return
		}
		rows, err := s.pool.Query(ctx, `SELECT `+eventColumns+` FROM custom_agent.events
			WHERE sid = (SELECT sid FROM custom_agent.sessions WHERE session_id = $1) AND seq >= $2 ORDER BY seq`,
			sessionID, int64(fromSeq))
		if err != nil {
			yield(event.Event{}, s.explain("reading event log", err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanEvent(rows, sessionID)
			if err != nil {
				yield(event.Event{}, s.explain("reading event log", err))
				return
			}
			if !yield(e, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(event.Event{}, s.explain("reading event log", err))
		}
	}
}

// Sessions implements eventlog.Store.
func (s *Store) Sessions(ctx context.Context) ([]eventlog.SessionInfo, error) {
	rows, err := s.pool.Query(ctx, `SELECT s.session_id, s.created_at, h.updated_at, h.last_seq, h.head_hash
		FROM custom_agent.sessions s JOIN custom_agent.heads h USING (sid) ORDER BY h.updated_at DESC, s.session_id`)
	if err != nil {
		return nil, s.explain("listing sessions", err)
	}
	defer rows.Close()
	var out []eventlog.SessionInfo
	for rows.Next() {
		var si eventlog.SessionInfo
		var created, updated string
		var seq int64
		if err := rows.Scan(&si.ID, &created, &updated, &seq, &si.HeadHash); err != nil {
			return nil, s.explain("listing sessions", err)
		}
		si.Events = uint64(max(seq, 0))
		si.CreatedAt, _ = time.Parse(event.TimeFormat, created)
		si.UpdatedAt, _ = time.Parse(event.TimeFormat, updated)
		out = append(out, si)
	}
	return out, s.explain("listing sessions", rows.Err())
}

// Subscribe implements eventlog.Store. Events this process appends are
// delivered; appends by other processes and hosts (announced by NOTIFY)
// make the subscription report eventlog.ErrMissed, upon which a follower
// reads them from the store (eventlog.Follow does).
func (s *Store) Subscribe(sessionID string) *eventlog.Subscription {
	s.startListener()
	return s.hub.Subscribe(sessionID)
}

// Verify implements eventlog.Store. It reads the head and the events in one
// snapshot, so that a concurrent append is not taken for an insertion.
func (s *Store) Verify(ctx context.Context, sessionID string) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.explain("verifying event log", err)
	}
	defer tx.Rollback(context.Background())
	var headSeq int64
	var headHash string
	err = tx.QueryRow(ctx, `SELECT h.last_seq, h.head_hash FROM custom_agent.sessions s JOIN custom_agent.heads h USING (sid) WHERE s.session_id = $1`, sessionID).Scan(&headSeq, &headHash)
	noHead := errors.Is(err, pgx.ErrNoRows)
	if err != nil && !noHead {
		return s.explain("verifying event log", err)
	}
	rows, err := tx.Query(ctx, `SELECT `+eventColumns+` FROM custom_agent.events
		WHERE sid = (SELECT sid FROM custom_agent.sessions WHERE session_id = $1) ORDER BY seq`, sessionID)
	if err != nil {
		return s.explain("verifying event log", err)
	}
	c := eventlog.NewChainChecker(sessionID)
	n := 0
	var broken *eventlog.ChainError
	for rows.Next() {
		n++
		e, err := scanEvent(rows, sessionID)
		if err != nil {
			if broken = c.BadRow(e.Seq, err); broken != nil {
				break
			}
			continue
		}
		if broken = c.Next(e); broken != nil {
			break
		}
	}
	rows.Close()
	if broken != nil {
		return broken
	}
	if err := rows.Err(); err != nil {
		return s.explain("verifying event log", err)
	}
	if noHead {
		if n == 0 {
			orphaned, err := s.orphaned(ctx, tx, sessionID)
			if err != nil {
				return s.explain("verifying event log", err)
			}
			if orphaned {
				return &eventlog.ChainError{SessionID: sessionID, Seq: 1, Problem: "session has events but no recorded key (sessions row deleted)"}
			}
			return fmt.Errorf("session %s: %w", sessionID, eventlog.ErrNoSession)
		}
		return &eventlog.ChainError{SessionID: sessionID, Seq: 1, Problem: "session has events but no recorded head (head row deleted)"}
	}
	if headSeq < 0 {
		return &eventlog.ChainError{SessionID: sessionID, Seq: 1, Problem: fmt.Sprintf("recorded head seq %d is negative", headSeq)}
	}
	if ce := c.End(uint64(headSeq), headHash); ce != nil {
		return ce
	}
	return nil
}

// orphaned reports whether the log holds events of the session under a key
// that sessions no longer has (its row deleted): each orphaned key's first
// event is tried, since its hash covers the session id.
func (s *Store) orphaned(ctx context.Context, tx pgx.Tx, sessionID string) (bool, error) {
	rows, err := tx.Query(ctx, `SELECT DISTINCT ON (sid) `+eventColumns+` FROM custom_agent.events
		WHERE sid NOT IN (SELECT sid FROM custom_agent.sessions) ORDER BY sid, seq`)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEvent(rows, sessionID)
		if err == nil && e.ComputeHash() == e.Hash {
			return true, nil
		}
	}
	return false, rows.Err()
}

// Blob implements eventlog.BlobAppender: the bytes are checked against the
// digest, so a row edited in the database is not returned.
func (s *Store) Blob(ctx context.Context, sum [32]byte) ([]byte, bool, error) {
	var data []byte
	switch err := s.pool.QueryRow(ctx, `SELECT data FROM custom_agent.blobs WHERE sum = $1`, sum[:]).Scan(&data); {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, s.explain("reading a tool output from the event log", err)
	}
	if sha256.Sum256(data) != sum {
		return nil, false, fmt.Errorf("event log %s: the tool output stored under sha256:%x was modified: its bytes no longer hash to it", s.where, sum)
	}
	return data, true, nil
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
	s.stopListener()
	s.hub.CloseAll()
	var err error
	if s.wconn != nil {
		err = s.wconn.Close(context.Background())
	}
	s.pool.Close()
	return err
}
