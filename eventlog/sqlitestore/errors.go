package sqlitestore

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
)

// SQLite primary result codes the store explains to a person.
const (
	codeBusy     = 5
	codeLocked   = 6
	codeReadOnly = 8
	codeIOErr    = 10
	codeCorrupt  = 11
	codeFull     = 13
	codeCantOpen = 14
	codeNotADB   = 26
)

var (
	// ErrLocked: another process held the database past the busy timeout.
	ErrLocked = errors.New("event log is locked by another process")
	// ErrReadOnly: the database or its directory cannot be written.
	ErrReadOnly = errors.New("event log is read-only")
	// ErrDiskFull: the disk is full.
	ErrDiskFull = errors.New("disk full")
	// ErrCorrupt: the file is not a SQLite database, or is damaged.
	ErrCorrupt = errors.New("event log file is corrupt or not a database")
	// ErrForeign: the file is a SQLite database of another program.
	ErrForeign = errors.New("file is not a custom-agent event log")
	// ErrTooNew: the file was written by a newer custom-agent.
	ErrTooNew = errors.New("event log was written by a newer custom-agent")
	// ErrNoLog: opened read-only and there is no log file yet.
	ErrNoLog = errors.New("no event log yet")
	// ErrCannotOpen: the file cannot be opened or created.
	ErrCannotOpen = errors.New("cannot open event log")
)

// explain turns a driver error into one that names the file, says what to do
// and wraps a sentinel callers can test with errors.Is. It keeps the driver
// error in the chain.
func explain(path, doing string, err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("%s %s: %w", doing, path, err)
	}
	var sentinel error
	var hint string
	switch se.Code() & 0xff {
	case codeBusy, codeLocked:
		sentinel, hint = ErrLocked, "another custom-agent process is writing it; wait for it to finish, or stop it, and retry"
	case codeReadOnly:
		sentinel, hint = ErrReadOnly, "make the file and its directory writable, or point --data-dir / CUSTOM_AGENT_DATA_DIR at a writable directory"
	case codeFull:
		sentinel, hint = ErrDiskFull, "free disk space and retry; the event was not written"
	case codeCorrupt, codeNotADB:
		sentinel, hint = ErrCorrupt, "move the file aside (keep it for inspection) and run again to start a new log"
	case codeCantOpen:
		sentinel, hint = ErrCannotOpen, "check that the directory exists and is writable, or set --data-dir / CUSTOM_AGENT_DATA_DIR"
	case codeIOErr:
		sentinel, hint = ErrCannotOpen, "the disk reported an I/O error; check the disk and free space, then retry"
	default:
		return fmt.Errorf("%s %s: %w", doing, path, err)
	}
	return &Error{Path: path, Doing: doing, Hint: hint, sentinel: sentinel, cause: err}
}

// Error is a store failure explained for a person: what was being done, to
// which file, and what to do about it.
type Error struct {
	Path, Doing, Hint string
	sentinel, cause   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %v: %v (%s)", e.Doing, e.Path, e.sentinel, e.cause, e.Hint)
}

// Unwrap exposes both the sentinel and the driver error.
func (e *Error) Unwrap() []error { return []error{e.sentinel, e.cause} }
