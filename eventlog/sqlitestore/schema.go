package sqlitestore

// applicationID marks a SQLite file as a custom-agent event log ("CAG1"), so
// that a foreign database is refused instead of being migrated.
const applicationID = 0x43414731

// oldestReadable is the oldest schema a read-only store reads as it is,
// without migrating (looking never changes the file): schemas 1 and 2 differ
// in how events are laid out, not in the tables and columns queries name, so
// `custom-agent log` and `sessions` work on a log that no newer build has
// yet opened for writing.
const oldestReadable = 1

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
}
