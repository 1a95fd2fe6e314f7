// Package journal is where a hook process leaves the record of its
// decision before it answers: one file per hook call in a directory of the
// data directory, written whole, synced and renamed into place, so that a
// record is durable once Write returns and a reader never sees half of
// one. Concurrent hook processes never share a file, so they need no lock.
//
// The hook binary links no event store (it must start in a few
// milliseconds); custom-agent folds the journal into the event log's hash
// chain (package hook/ingest) before it reads the log, so sessions, log and
// audit verify show every recorded hook decision.
package journal

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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

// Write stores r in dir (created 0700 when missing) as a new file, durable
// when Write returns: the file and the directory are synced. Names sort in
// the order the records were written, to the nanosecond of the clock.
func Write(dir string, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the hook record: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hook journal: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("hook journal: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, filepath.Join(dir, name(r.TS)))
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("hook journal: writing the record: %w", werr)
	}
	return syncDir(dir)
}

// name is a record's file name: the time (zero-padded nanoseconds, so
// names sort by it), the process and a random part (two records of one
// nanosecond never share a name).
func name(ts time.Time) string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:]) // never fails (crypto/rand)
	return fmt.Sprintf("%020d-%d-%s.json", ts.UnixNano(), os.Getpid(), hex.EncodeToString(rnd[:]))
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

// List returns the records' paths in dir in the order they were written;
// a missing directory has none. Files being written are left out.
func List(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	var out []string
	for _, e := range es {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Read reads one record.
func Read(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hook journal: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("hook journal: %s: %w", filepath.Base(path), err)
	}
	if r.V != Version {
		return nil, fmt.Errorf("hook journal: %s: version %d, want %d", filepath.Base(path), r.V, Version)
	}
	return &r, nil
}
