package sqlitestore

// applicationID marks a SQLite file as a custom-agent event log ("CAG1"), so
// that a foreign database is refused instead of being migrated.
const applicationID = 0x43414731

// oldestReadable is the oldest schema a read-only store reads as it is,
// without migrating (looking never changes the file), so that `custom-agent
// log` and `sessions` work on a log that no newer build has yet opened for
// writing. Schemas 1 and 2 differ in how events are laid out, not in the
// tables and columns queries name; schema 3 keys sessions by an integer
// (readQueries has both forms).
const oldestReadable = 1

// keyedSchema is the first schema whose events name their session by its
// integer key (sessions.sid) instead of its id.
const keyedSchema = 3

// migrations are applied in order; PRAGMA user_version records how many ran.
// Never edit a released migration: append a new one.
var migrations = []string{
	// 1: events and per-session heads.
	`CREATE TABLE events (
		session_id TEXT    NOT NULL,
		seq        INTEGER NOT NULL CHECK (seq > 0),
		v          INTEGER NOT NULL,
		turn_id    TEXT    NOT NULL,
		type       TEXT    NOT NULL,
		ts         TEXT    NOT NULL,
		payload    BLOB    NOT NULL,
		prev_hash  TEXT    NOT NULL,
		hash       TEXT    NOT NULL,
		PRIMARY KEY (session_id, seq)
	) WITHOUT ROWID;
	CREATE TABLE sessions (
		session_id TEXT    PRIMARY KEY,
		created_at TEXT    NOT NULL,
		updated_at TEXT    NOT NULL,
		last_seq   INTEGER NOT NULL,
		head_hash  TEXT    NOT NULL
	) WITHOUT ROWID;`,
	// No index on sessions.updated_at: listing sorts a small table, and
	// an index would add a page to every append's commit.

	// 2: events in a rowid table, in the order they were appended, with
	// an index on (session_id, seq). In the WITHOUT ROWID table of 1 each
	// session's rows filled a leaf of their own, so a commit of events of
	// many sessions rewrote (and split) one 1 KB-row leaf per session; now
	// the rows go to the end of one tree and each session's part of a
	// commit is a small index entry. The heads stay in sessions: Verify
	// needs them to see a deleted last event. Existing rows are copied
	// session by session, in seq order, so that within a session rowid
	// order is seq order (as it is for every later append) and an old
	// session reads back from adjacent pages.
	`CREATE TABLE events_v2 (
		session_id TEXT    NOT NULL,
		seq        INTEGER NOT NULL CHECK (seq > 0),
		v          INTEGER NOT NULL,
		turn_id    TEXT    NOT NULL,
		type       TEXT    NOT NULL,
		ts         TEXT    NOT NULL,
		payload    BLOB    NOT NULL,
		prev_hash  TEXT    NOT NULL,
		hash       TEXT    NOT NULL
	);
	INSERT INTO events_v2 (session_id, seq, v, turn_id, type, ts, payload, prev_hash, hash)
		SELECT session_id, seq, v, turn_id, type, ts, payload, prev_hash, hash FROM events ORDER BY session_id, seq;
	DROP TABLE events;
	ALTER TABLE events_v2 RENAME TO events;
	CREATE UNIQUE INDEX events_by_session ON events (session_id, seq);`,

	// 3: each session has an integer key, sid, and events and heads name
	// it by that key instead of its text id: a 64-session commit bound,
	// stored and compared the id in each of its rows and index entries,
	// and upserted each head into a WITHOUT ROWID table by the id. Now
	//   - sessions holds what is written once: sid, the id (unique) and
	//     created_at;
	//   - heads holds what each commit updates: last seq, head hash and
	//     updated_at, in a rowid table keyed by sid;
	//   - events holds sid instead of session_id, with the unique index on
	//     (sid, seq).
	// Heads are apart from sessions so that a deleted head is still seen
	// by Verify, as before: the session's key, which its events need to be
	// found, stays. A session with events and no head (its head deleted,
	// which Verify reports) keeps its events and gets a key, created at
	// its first event. Events are copied in the order they were stored.
	`CREATE TABLE sessions_v3 (
		sid        INTEGER PRIMARY KEY,
		session_id TEXT    NOT NULL UNIQUE,
		created_at TEXT    NOT NULL
	);
	INSERT INTO sessions_v3 (session_id, created_at)
		SELECT session_id, created_at FROM sessions
		UNION ALL
		SELECT session_id, ts FROM events WHERE seq = (SELECT min(seq) FROM events f WHERE f.session_id = events.session_id)
			AND session_id NOT IN (SELECT session_id FROM sessions)
		ORDER BY 2, 1;
	CREATE TABLE heads (
		sid        INTEGER PRIMARY KEY,
		updated_at TEXT    NOT NULL,
		last_seq   INTEGER NOT NULL,
		head_hash  TEXT    NOT NULL
	);
	INSERT INTO heads (sid, updated_at, last_seq, head_hash)
		SELECT k.sid, s.updated_at, s.last_seq, s.head_hash FROM sessions s JOIN sessions_v3 k USING (session_id) ORDER BY k.sid;
	CREATE TABLE events_v3 (
		sid        INTEGER NOT NULL,
		seq        INTEGER NOT NULL CHECK (seq > 0),
		v          INTEGER NOT NULL,
		turn_id    TEXT    NOT NULL,
		type       TEXT    NOT NULL,
		ts         TEXT    NOT NULL,
		payload    BLOB    NOT NULL,
		prev_hash  TEXT    NOT NULL,
		hash       TEXT    NOT NULL
	);
	INSERT INTO events_v3 (sid, seq, v, turn_id, type, ts, payload, prev_hash, hash)
		SELECT k.sid, e.seq, e.v, e.turn_id, e.type, e.ts, e.payload, e.prev_hash, e.hash
		FROM events e JOIN sessions_v3 k USING (session_id) ORDER BY e.rowid;
	DROP TABLE events;
	DROP TABLE sessions;
	ALTER TABLE events_v3 RENAME TO events;
	ALTER TABLE sessions_v3 RENAME TO sessions;
	CREATE UNIQUE INDEX events_by_session ON events (sid, seq);`,

	// 4: blobs, the tool outputs (at most artifact.PackMax bytes) that a
	// turn hands over with the commit of the event that first names them
	// (eventlog.BlobAppender), keyed by their SHA-256. Keeping them in
	// the same transaction as that event costs no second fsync, of the
	// artifact store's pack, before each commit. They are not part of
	// any session's chain: the event holds the digest, which a reader
	// checks the bytes against. One tree keyed by the digest (the bytes
	// beyond a page go to overflow pages), so a blob costs one index
	// entry, not a row and an index entry.
	`CREATE TABLE blobs (
		sum  BLOB PRIMARY KEY CHECK (length(sum) = 32),
		data BLOB NOT NULL
	) WITHOUT ROWID;`,

	// 5: answers, the inbox (eventlog.Inbox): an answer to an open
	// question given in a UI of another process, which the asking
	// process takes and records as permission.resolved in its chain.
	// Offers are not part of any chain. One answer per question (session,
	// tool call id): the primary key makes the first offer win in every
	// process sharing the file.
	`CREATE TABLE answers (
		session_id   TEXT    NOT NULL,
		tool_call_id TEXT    NOT NULL,
		option       TEXT    NOT NULL,
		confirm      TEXT    NOT NULL,
		ui           TEXT    NOT NULL,
		at           TEXT    NOT NULL,
		request_seq  INTEGER NOT NULL CHECK (request_seq >= 0),
		PRIMARY KEY (session_id, tool_call_id)
	) WITHOUT ROWID;`,

	// 6: answers keyed by question: (session, tool call id, request seq).
	// A model (or a client inventing call_0, call_1, ...) may reuse a tool
	// call id; keyed by the id alone, one answer made every later question
	// with that id unanswerable. Answers kept from schema 5 keep their
	// seq (0 when they named none; no new offer may).
	`CREATE TABLE answers_v6 (
		session_id   TEXT    NOT NULL,
		tool_call_id TEXT    NOT NULL,
		option       TEXT    NOT NULL,
		confirm      TEXT    NOT NULL,
		ui           TEXT    NOT NULL,
		at           TEXT    NOT NULL,
		request_seq  INTEGER NOT NULL CHECK (request_seq >= 0),
		PRIMARY KEY (session_id, tool_call_id, request_seq)
	) WITHOUT ROWID;
	INSERT INTO answers_v6 SELECT session_id, tool_call_id, option, confirm, ui, at, request_seq FROM answers;
	DROP TABLE answers;
	ALTER TABLE answers_v6 RENAME TO answers;`,
}

// blobSchema is the first schema with the blobs table.
const blobSchema = 4

// inboxSchema is the first schema with the answers table.
const inboxSchema = 5
