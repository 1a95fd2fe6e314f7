// Package journal is where a hook process leaves the record of its
// decision before it answers. Each record is one line appended to the
// day's file (day-YYYY-MM-DD.jsonl) with O_APPEND, then the file's data is
// synced (fdatasync): one sync per hook call, and a record is durable once
// Write returns. Concurrent hook processes append whole lines, each with
// one write; a line is preceded by a newline of its own, so that a line
// torn by a crash never runs into the next record.
//
// custom-agent folds the journal into the event log's hash chain (package
// hook/ingest): Take renames the day files aside (taken-…), waits for
// the hook processes still appending to them (they hold a shared lock on
// the file while they write; Take's reader an exclusive one), and a hook
// that finds its file taken appends to a new one. A line that does not end
// in a newline was torn: its hook never answered (it answers after the
// sync); ReadFile reports it, it is never folded.
//
// A journal file is only ever opened itself (O_NOFOLLOW): a symlink, a
// FIFO, a hard link or a file of another user planted under a journal
// name is never written through nor read (ErrNotRegular); List still
// lists it, so that ingest reports it and sets it aside, and Write refuses
// to record (the hook then blocks the call). A journal directory that is a
// symlink is refused the same way.
//
// Files of one record each (<ns>-<pid>-<random>.json), which earlier
// versions wrote, are still read and folded first.
//
// The hook binary links no event store (it must start in a few
// milliseconds); custom-agent folds the journal before it reads the log,
// so sessions, log and audit verify show every recorded hook decision.
package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Dir is the journal's directory name inside the data directory.
const Dir = "hook-journal"

// Version is written in every record; Read refuses others.
const Version = 1

// Record is one hook call's events, in the order they are to be appended
// to the session SessionID.
type Record struct {
	V int `json:"v"`
	// Source is the agent: claude-code or gemini-cli.
	Source string `json:"source"`
	// SessionID is the event log session (see SessionID);
	// AgentSessionID is the agent's session_id as it was sent.
	SessionID      string `json:"sessionId"`
	AgentSessionID string `json:"agentSessionId"`
	// TS is when the hook was called; every event of the record gets it.
	TS time.Time `json:"ts"`
	// Cwd and Mode open the session when it is new.
	Cwd  string `json:"cwd"`
	Mode string `json:"mode"`
	// Events are the events' types and payloads (as in
	// docs/reference/event-schema.md).
	Events []Entry `json:"events"`
}

// Entry is one event of a record.
type Entry struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// Write appends r to the day's file in dir (created 0700 when missing),
// durable when Write returns: the line is written with one write and the
// file's data synced. The day file is created (and the directory synced)
// once, before any record is written to it, so that a record in it never
// depends on a directory entry not yet durable.
func Write(dir string, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the hook record: %w", err)
	}
	line := make([]byte, 0, len(b)+2)
	line = append(append(append(line, '\n'), b...), '\n')
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hook journal: %w", err)
	}
	if err := checkDir(dir); err != nil {
		return err
	}
	path := filepath.Join(dir, dayName(r.TS))
	for range tries {
		f, err := openDay(dir, path)
		if err != nil {
			return fmt.Errorf("hook journal: %w", err)
		}
		ok, err := holdForAppend(f, path)
		if err == nil && ok {
			_, err = f.Write(line)
			if err == nil {
				err = datasync(f)
			}
		}
		if cerr := f.Close(); err == nil { // closing releases the lock
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("hook journal: writing the record: %w", err)
		}
		if ok {
			return nil
		}
		// Taken by a fold between the open and the lock: the next file.
	}
	return fmt.Errorf("hook journal: the day file was taken %d times in a row while this hook wrote", tries)
}

// tries bounds the attempts to append to a day file that folds keep
// taking away (each fold takes it once).
const tries = 100

// dayName is the name of the file of the records of ts's day (UTC).
func dayName(ts time.Time) string {
	return dayPrefix + ts.UTC().Format(time.DateOnly) + dayExt
}

const (
	dayPrefix    = "day-"
	dayExt       = ".jsonl"
	takenPrefix  = "taken-"
	legacyExt    = ".json"
	brokenSuffix = ".broken"
)

// ErrNotRegular is a journal file, or the journal directory, that is not
// one this user's hooks made: a symlink, a FIFO or other special file, a
// hard link, a file of another user. It is never written through nor
// read.
var ErrNotRegular = errors.New("not a journal file this user's hooks made (a symlink, special file, hard link or another user's file); it is neither written through nor read")

// checkDir refuses a journal directory that is a symlink (or no
// directory): the hook would record where the link points.
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("hook journal: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("hook journal: the directory %s is %s: %w", dir, fi.Mode().Type(), ErrNotRegular)
	}
	return nil
}

// openFile opens the journal file path itself (never through a symlink)
// and checks that it is a regular file of this user's with one name; a
// file with another name is reported as linked (a day file has two
// names for a moment while createDay links it).
func openFile(path string, flag int) (f *os.File, linked bool, err error) {
	f, err = os.OpenFile(path, flag|noFollow, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, false, fmt.Errorf("%s is %s: %w", path, fi.Mode().Type(), ErrNotRegular)
		}
		return nil, false, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, err
	}
	if why, linked := owned(fi); why != "" {
		f.Close()
		return nil, linked, fmt.Errorf("%s: %s: %w", path, why, ErrNotRegular)
	}
	return f, false, nil
}

// openDay opens the day file path to append to it, creating it when
// missing: a file created under a temporary name, synced, linked to
// path (unless another hook did first) and the directory synced, so that
// the name is durable before any record goes in.
func openDay(dir, path string) (*os.File, error) {
	for range tries {
		f, linked, err := openFile(path, os.O_WRONLY|os.O_APPEND)
		if linked {
			// Another hook is creating it (its temporary name goes at
			// once), or a hard link was planted: then refused below.
			time.Sleep(time.Millisecond)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
		if err := createDay(dir, path); err != nil {
			return nil, err
		}
		// A fold may take it before it is opened: then again.
	}
	f, _, err := openFile(path, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return nil, err // still a hard link, or what else is wrong with it
	}
	f.Close()
	return nil, fmt.Errorf("the day file was taken %d times in a row before this hook opened it", tries)
}

// createDay creates the day file path, durable (file and directory
// synced) before it has its name; when another hook created it first,
// that one is kept.
func createDay(dir, path string) error {
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	err = tmp.Sync()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	placed := false
	if err == nil {
		placed, err = placeNew(tmp.Name(), path)
	}
	if !placed {
		os.Remove(tmp.Name())
	}
	if err != nil {
		return err
	}
	return syncDir(dir)
}

// linkNew names the file at tmp path too, unless path exists, and removes
// the name tmp; it reports whether path is now that file.
func linkNew(tmp, path string) (bool, error) {
	err := os.Link(tmp, path)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, os.Remove(tmp)
}

// holdForAppend takes f's shared lock and reports whether f is still the
// file at path (not taken by a fold meanwhile).
func holdForAppend(f *os.File, path string) (bool, error) {
	if err := lockFile(f, false); err != nil {
		return false, err
	}
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	pi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("hook journal: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("hook journal: syncing %s: %w", dir, err)
	}
	return nil
}

// List returns the paths of the journal's files in dir in the order their
// records were written: one-record files (earlier versions'), then taken
// files, then day files; a missing directory has none. Files being
// created and files set aside as broken are left out. An entry with a
// journal file's name that is not a regular file (a symlink, a FIFO, a
// directory) is listed too, never skipped: ReadFile refuses it
// (ErrNotRegular), and ingest reports it and sets it aside. A journal
// directory that is a symlink is an error.
func List(dir string) ([]string, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	var legacy, taken, days []string
	for _, e := range es {
		n := e.Name()
		if strings.HasPrefix(n, ".") {
			continue
		}
		switch p := filepath.Join(dir, n); {
		case strings.HasPrefix(n, takenPrefix) && strings.HasSuffix(n, dayExt):
			taken = append(taken, p)
		case strings.HasPrefix(n, dayPrefix) && strings.HasSuffix(n, dayExt):
			days = append(days, p)
		case strings.HasSuffix(n, legacyExt):
			legacy = append(legacy, p)
		}
	}
	slices.Sort(legacy)
	slices.Sort(taken)
	slices.Sort(days)
	return slices.Concat(legacy, taken, days), nil
}

// Take renames the day files in dir aside, so that hooks append to new
// ones, and returns the files to fold, in order: one-record files, then
// taken files (those of an earlier fold that did not finish first). Only
// one process may fold at a time (hook/ingest holds a lock).
func Take(dir string) ([]string, error) {
	paths, err := List(dir)
	if err != nil {
		return nil, err
	}
	out := paths[:0:0]
	for _, p := range paths {
		n := filepath.Base(p)
		if !strings.HasPrefix(n, dayPrefix) {
			out = append(out, p)
			continue
		}
		to := filepath.Join(dir, fmt.Sprintf("%s%020d-%s", takenPrefix, time.Now().UnixNano(), n))
		if err := os.Rename(p, to); err != nil {
			return nil, fmt.Errorf("hook journal: taking %s: %w", n, err)
		}
		out = append(out, to)
	}
	return out, nil
}

// Line is one record of a journal file, or why it is not one.
type Line struct {
	Record *Record
	// Err is why the line is not a record: it does not decode, is of
	// another version, or was torn (ErrTorn).
	Err error
	// Raw is the line as read (without its newline).
	Raw []byte
}

// ErrTorn is a last line without its newline: its write never finished,
// so its hook never answered.
var ErrTorn = errors.New("a torn last line (its write never finished, so its hook never answered)")

// ReadFile reads the records of a file List or Take returned. A taken
// file is read once the hooks still appending to it are done (it is
// locked exclusively while read); a day file is read as it is. A file
// that is not a regular file of this user's with one name is not read:
// the error wraps ErrNotRegular.
func ReadFile(path string) ([]Line, error) {
	n := filepath.Base(path)
	if !strings.HasSuffix(n, dayExt) {
		r, err := Read(path)
		if errors.Is(err, ErrNotRegular) {
			return nil, err
		}
		return []Line{{Record: r, Err: err}}, nil
	}
	f, _, err := openFile(path, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	defer f.Close()
	if strings.HasPrefix(n, takenPrefix) {
		if err := lockFile(f, true); err != nil {
			return nil, fmt.Errorf("hook journal: %w", err)
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	var out []Line
	for len(b) > 0 {
		raw, rest, complete := bytes.Cut(b, []byte{'\n'})
		b = rest
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		l := Line{Raw: raw}
		if !complete {
			l.Err = fmt.Errorf("hook journal: %s: %w", n, ErrTorn)
		} else {
			l.Record, l.Err = decode(raw, n)
		}
		out = append(out, l)
	}
	return out, nil
}

// Read reads a file of one record (an earlier version's).
func Read(path string) (*Record, error) {
	f, _, err := openFile(path, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	return decode(b, filepath.Base(path))
}

func decode(b []byte, name string) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("hook journal: %s: %w", name, err)
	}
	if r.V != Version {
		return nil, fmt.Errorf("hook journal: %s: version %d, want %d", name, r.V, Version)
	}
	return &r, nil
}

// SetAside writes lines (not records) to path's broken file, which List
// leaves out, for a person to look at.
func SetAside(path string, lines [][]byte) error {
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	// A new file only: never one planted under that name (nor through a
	// symlink planted there).
	f, err := os.OpenFile(path+brokenSuffix, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("hook journal: setting aside broken lines: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("hook journal: setting aside broken lines: %w", err)
	}
	return nil
}
