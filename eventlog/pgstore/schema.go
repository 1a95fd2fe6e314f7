package pgstore

// The log lives in a schema of its own, custom_agent, so that it can share
// a database with other programs' tables; meta records that the schema is
// a custom-agent log and how many migrations ran.
const schemaName = "custom_agent"

// application is what meta.application holds in a custom-agent log.
const application = "custom-agent event log"

// migrateLock is the advisory lock key held while migrating ("CAG1"), so
// that two processes opening a new database do not both create it.
const migrateLock = 0x43414731

// migrations are applied in order, in one transaction, under migrateLock;
// meta.version records how many ran. Never edit a released migration:
// append a new one.
//
// The layout is the SQLite store's (schema 4 and 5 there): sessions give
// each session an integer key (sid) and hold its id and creation time,
// written once; heads hold each session's last seq and hash, written in the
// transaction of its events, apart from sessions so that Verify sees a
// deleted head as well as a deleted last event; events are keyed by (sid,
// seq), and that primary key is the last guard against two appends taking
// one seq. Timestamps are kept as the text the hash covers and payloads as
// the exact bytes, so that a read is byte-identical to the acknowledged
// event. There are no foreign keys: the chain, not the database, is what
// says whether a row was tampered with, and Verify reads what is there.
var migrations = []string{
	// 1: events, sessions and heads, and blobs (small tool outputs, keyed
	// by SHA-256, written in the transaction of the event that first names
	// them: eventlog.BlobAppender).
	`CREATE TABLE custom_agent.meta (
		id          int     PRIMARY KEY CHECK (id = 1),
		application text    NOT NULL,
		version     int     NOT NULL
	);
	INSERT INTO custom_agent.meta (id, application, version) VALUES (1, '` + application + `', 0);
	CREATE TABLE custom_agent.sessions (
		sid        bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session_id text    NOT NULL UNIQUE,
		created_at text    NOT NULL
	);
	CREATE TABLE custom_agent.heads (
		sid        bigint  PRIMARY KEY,
		updated_at text    NOT NULL,
		last_seq   bigint  NOT NULL,
		head_hash  text    NOT NULL
	);
	CREATE TABLE custom_agent.events (
		sid        bigint  NOT NULL,
		seq        bigint  NOT NULL CHECK (seq > 0),
		v          int     NOT NULL,
		turn_id    text    NOT NULL,
		type       text    NOT NULL,
		ts         text    NOT NULL,
		payload    bytea   NOT NULL,
		prev_hash  text    NOT NULL,
		hash       text    NOT NULL,
		PRIMARY KEY (sid, seq)
	);
	CREATE TABLE custom_agent.blobs (
		sum  bytea PRIMARY KEY CHECK (length(sum) = 32),
		data bytea NOT NULL
	);`,

	// 2: answers, the inbox (eventlog.Inbox): an answer to an open
	// question, offered by a UI on any host, which the asking process
	// takes and records as permission.resolved in its chain. Not part of
	// any chain. The primary key makes the first offer win on every host.
	`CREATE TABLE custom_agent.answers (
		session_id   text   NOT NULL,
		tool_call_id text   NOT NULL,
		option       text   NOT NULL,
		confirm      text   NOT NULL,
		ui           text   NOT NULL,
		at           text   NOT NULL,
		request_seq  bigint NOT NULL CHECK (request_seq >= 0),
		PRIMARY KEY (session_id, tool_call_id)
	);`,

	// 3: answers keyed by question: (session, tool call id, request seq).
	// A model (or a client inventing call_0, call_1, ...) may reuse a tool
	// call id; keyed by the id alone, one answer made every later question
	// with that id unanswerable. Answers kept from schema 2 keep their
	// seq (0 when they named none; no new offer may).
	`ALTER TABLE custom_agent.answers DROP CONSTRAINT answers_pkey;
	ALTER TABLE custom_agent.answers ADD PRIMARY KEY (session_id, tool_call_id, request_seq);`,
}

// inboxSchema is the first schema with the answers table.
const inboxSchema = 2

// notifyChannel is the LISTEN/NOTIFY channel a commit announces itself on.
const notifyChannel = "custom_agent_events"
