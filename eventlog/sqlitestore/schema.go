package sqlitestore

// applicationID marks a SQLite file as a custom-agent event log ("CAG1"), so
// that a foreign database is refused instead of being migrated.
const applicationID = 0x43414731

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
}
