package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

var (
	// ErrUnreachable: no connection to the server could be made.
	ErrUnreachable = errors.New("PostgreSQL server unreachable")
	// ErrAuth: the server refused the user or its password.
	ErrAuth = errors.New("PostgreSQL authentication failed")
	// ErrNoDatabase: the database the URL names does not exist.
	ErrNoDatabase = errors.New("PostgreSQL database does not exist")
	// ErrPermission: the user may not create or use the log's tables.
	ErrPermission = errors.New("PostgreSQL permission denied")
	// ErrReadOnly: the server is a read-only standby, or the store was
	// opened read-only.
	ErrReadOnly = errors.New("event log is read-only")
	// ErrDiskFull: the server's disk is full.
	ErrDiskFull = errors.New("PostgreSQL server's disk is full")
	// ErrNotDurable: the server would acknowledge a commit before it is
	// on disk (synchronous_commit or fsync off).
	ErrNotDurable = errors.New("PostgreSQL server does not make commits durable")
	// ErrConnLost: the connection to the server was lost while working.
	ErrConnLost = errors.New("connection to PostgreSQL lost")
	// ErrOutcomeUnknown: the connection was lost while a commit was being
	// acknowledged and the server did not come back in time to tell
	// whether it was written.
	ErrOutcomeUnknown = errors.New("whether the events were written is unknown")
	// ErrTooNew: the log's schema was written by a newer custom-agent.
	ErrTooNew = errors.New("event log was written by a newer custom-agent")
	// ErrForeign: the database holds a custom_agent schema that is not a
	// custom-agent event log.
	ErrForeign = errors.New("database schema custom_agent is not a custom-agent event log")
	// ErrNoLog: opened read-only and the database holds no log yet.
	ErrNoLog = errors.New("no event log yet")
)

// Error is a store failure explained for a person: what was being done,
// on which server and database (never the password), and what to do. It
// unwraps to a sentinel above and to the driver's error.
type Error struct {
	Where, Doing, Hint string
	sentinel, cause    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %v: %v (%s)", e.Doing, e.Where, e.sentinel, e.cause, e.Hint)
}

// Unwrap exposes both the sentinel and the driver error.
func (e *Error) Unwrap() []error { return []error{e.sentinel, e.cause} }

// explain turns a driver error into an *Error naming the server and what to
// do, when it is a fault a person can act on; other errors are wrapped with
// what was being done.
func (s *Store) explain(doing string, err error) error {
	if err == nil {
		return nil
	}
	var own *Error
	if errors.As(err, &own) {
		return err
	}
	hint, sentinel := classify(err, s.host)
	if sentinel == nil {
		return fmt.Errorf("%s %s: %w", doing, s.where, err)
	}
	return &Error{Where: s.where, Doing: doing, Hint: hint, sentinel: sentinel, cause: err}
}

// classify names the fault behind a driver error and what to do about it;
// nil when it is none of those.
func classify(err error, host string) (hint string, sentinel error) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return "check the user and password in the store URL, or in PGPASSWORD or ~/.pgpass, and the server's pg_hba.conf", ErrAuth
		case "3D000":
			return "create it (createdb NAME, or CREATE DATABASE) or fix the database name in the store URL", ErrNoDatabase
		case "42501":
			return "the user needs CREATE on the database (for the custom_agent schema) the first time, then USAGE on that schema and SELECT, INSERT and UPDATE on its tables", ErrPermission
		case "25006":
			return "the server is a read-only standby; point the store URL at the primary", ErrReadOnly
		case "53100":
			return "free disk space on the PostgreSQL server; the events were not written", ErrDiskFull
		case "53300":
			return "the server has no free connection slots (max_connections); retry later or raise the limit", ErrUnreachable
		case "57P01", "57P02", "57P03":
			return "the server is shutting down or starting up; retry when it is back", ErrConnLost
		case "3F000":
			return "the database holds no custom-agent log yet: nothing has been recorded with this store", ErrNoLog
		}
		return "", nil
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Sprintf("is PostgreSQL running at %s and accepting TCP connections from this host? check the store URL (--store or CUSTOM_AGENT_STORE)", host), ErrUnreachable
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return "the server went away or the network failed; retry when it is back", ErrConnLost
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the server did not answer in time; check that it is up and not overloaded", ErrConnLost
	}
	return "", nil
}

// connLost reports whether err means the connection is gone (as opposed to
// an error the server reported on a working connection).
func connLost(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// The server ending the session (shutdown, terminated) also
		// loses it.
		return pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	return true
}

// retryable reports whether a transaction failed only because of another
// transaction (a deadlock, a serialization failure): it is retried from the
// start. A unique violation is not: every commit writes a session's events
// under its row lock, so a seq already taken means the log was edited
// (explainInsert), and trying again would not change that.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Code == "40P01" || pe.Code == "40001"
}
