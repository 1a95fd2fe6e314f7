package lineedit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/secrets"
)

// DefaultHistoryMax is how many entries a history keeps by default.
const DefaultHistoryMax = 1000

// History is the prompts typed before, oldest first, kept in a file of
// JSON strings, one a line (so a prompt of several lines is one entry),
// readable and writable by its owner only (0600). A line the secrets
// detector flags (an API key, a token, a password) is never written: a
// prompt may hold a secret, and the file is plain text. The file holds at
// most Max entries (a little more between two trims); processes that share
// it append to it, so each sees the others' entries the next time it opens
// the file.
//
// Its methods may be called concurrently.
type History struct {
	path string
	max  int

	mu      sync.Mutex
	entries []string
	lines   int // lines in the file, to know when to trim it
}

// OpenHistory reads the history file at path (a missing file is an empty
// history; a line that is not a JSON string is skipped). max <= 0 means
// DefaultHistoryMax.
func OpenHistory(path string, max int) (*History, error) {
	if max <= 0 {
		max = DefaultHistoryMax
	}
	h := &History{path: path, max: max}
	entries, lines, err := readEntries(path)
	if err != nil {
		return nil, err
	}
	h.entries, h.lines = entries, lines
	if len(h.entries) > max {
		h.entries = h.entries[len(h.entries)-max:]
	}
	return h, nil
}

// readEntries reads a history file: its entries and how many lines it has.
func readEntries(path string) ([]string, int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading the prompt history: %w", err)
	}
	var entries []string
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		lines++
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			entries = append(entries, s)
		}
	}
	return entries, lines, nil
}

// Entries returns a copy of the entries, oldest first.
func (h *History) Entries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.entries...)
}

// MaxEntryBytes is the longest prompt a history keeps: a long paste is
// sent, not kept.
const MaxEntryBytes = 16 << 10

// Keepable reports whether a line may be kept in a history: it is not
// blank, not longer than MaxEntryBytes, and holds nothing the secrets
// detector flags.
func Keepable(line string) bool {
	return strings.TrimSpace(line) != "" && len(line) <= MaxEntryBytes && len(secrets.Find(line)) == 0
}

// Add appends line to the history and its file, unless it is not Keepable
// or repeats the newest entry; it reports whether it was added. A failing
// file leaves the entry in memory and returns the error.
func (h *History) Add(line string) (bool, error) {
	if !Keepable(line) {
		return false, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.entries); n > 0 && h.entries[n-1] == line {
		return false, nil
	}
	h.entries = append(h.entries, line)
	if len(h.entries) > h.max {
		h.entries = h.entries[len(h.entries)-h.max:]
	}
	if h.path == "" {
		return true, nil
	}
	if h.lines >= h.max+h.max/4 {
		return true, h.trimLocked(line)
	}
	b, _ := json.Marshal(line)
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return true, fmt.Errorf("writing the prompt history: %w", err)
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return true, fmt.Errorf("writing the prompt history: %w", err)
	}
	// A file made by hand, or by an older version, with wider rights is
	// narrowed: prompts are private.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return true, fmt.Errorf("writing the prompt history: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return true, fmt.Errorf("writing the prompt history: %w", err)
	}
	h.lines++
	return true, nil
}

// trimLocked writes the file again, atomically, with line appended and
// only the newest Max entries; entries other processes appended since this
// one opened it are kept.
func (h *History) trimLocked(line string) error {
	entries, _, err := readEntries(h.path)
	if err != nil {
		return err
	}
	entries = append(entries, line)
	if len(entries) > h.max {
		entries = entries[len(entries)-h.max:]
	}
	var buf bytes.Buffer
	for _, e := range entries {
		b, _ := json.Marshal(e)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("writing the prompt history: %w", err)
	}
	// CreateTemp makes the file 0600.
	tmp, err := os.CreateTemp(filepath.Dir(h.path), ".history-*")
	if err != nil {
		return fmt.Errorf("writing the prompt history: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the prompt history: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the prompt history: %w", err)
	}
	if err := os.Rename(tmp.Name(), h.path); err != nil {
		return fmt.Errorf("writing the prompt history: %w", err)
	}
	h.lines = len(entries)
	return nil
}
