// Package artifact is a content-addressed blob store for the whole output of
// tool calls (spec §5: the event log keeps a preview, the store keeps all).
// Blobs are named by their SHA-256, written atomically (temp file,
// fdatasync, rename, fsync of the directory) with mode 0600, and never
// modified.
//
// A Deferred view of a store leaves the two fsyncs out of each Commit and
// does them for every blob committed since in one Sync, which its user
// calls just before the durable commit of the event log that first names
// those blobs: a blob is durable before any durable event names it, at the
// cost of one fsync per blob and one per shard directory for a whole batch.
//
// A Carrying view (carry.go) goes further for small blobs its user marks
// as ones the event log may hold: they stay in memory until the log's
// commit of the event naming them writes them too, so they cost no fsync
// at all, and a view WithSource finds them in the log afterwards.
package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// DigestPrefix starts every digest: "sha256:" and 64 lower-case hex digits.
const DigestPrefix = "sha256:"

// ErrNotFound: no blob has that digest.
var ErrNotFound = errors.New("no artifact with that digest")

// Store keeps blobs under Dir/sha256/ab/cdef…. Its methods may be called
// concurrently.
type Store struct {
	dir      string
	deferred bool
	pending  *pending   // shared by a store and its Deferred views
	packs    *packIndex // likewise (pack.go)
	src      Source     // where carried blobs are found once committed; may be nil (carry.go)
	carry    *carrier   // a Carrying view's own queue; nil for other views
}

// pending is what deferred Commits have renamed into place but not synced.
type pending struct {
	syncing sync.Mutex // held for a whole Sync, so a Sync returns only once all before it are durable
	mu      sync.Mutex
	files   map[string]bool // to fsync
	dirs    map[string]bool // to fsync, after the files
	keys    map[string]bool // the blobs that are durable once those are (a loose blob's path, "pack:"+hex)
	synced  map[string]bool // blobs a deferred view committed and Sync made durable (bounded)
	ahead   atomic.Bool     // a SyncAhead is running
	// held are the blobs Carrying views committed and whose commit to
	// the event log is not yet durable, readable from memory.
	held map[[sha256.Size]byte]*held
}

// maxSynced bounds pending.synced; past it the set starts again, which
// costs only a rename and sync of a blob committed again.
const maxSynced = 4096

// known reports whether a deferred view of this process committed the blob
// named by key (its path, or "pack:"+hex), pending or synced.
func (p *pending) known(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys[key] || p.synced[key]
}

// fsync makes a file's data or a directory's entries durable (syncData;
// a variable so tests can count).
var fsync = syncData

// Open returns the store in dir. Nothing is created until the first blob is
// written, so reading never changes the disk.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", dir, err)
	}
	return &Store{dir: abs, pending: &pending{}, packs: &packIndex{}}, nil
}

// Deferred returns a view of the store whose Commits are not durable until
// Sync: the blob is in place and readable, but a crash before Sync may lose
// it. Its user must call Sync before it makes durable anything that names
// a blob it committed (the session does, before each durable commit of the
// event log). The view shares the store's directory and pending blobs.
func (s *Store) Deferred() *Store {
	return &Store{dir: s.dir, deferred: true, pending: s.pending, packs: s.packs, src: s.src}
}

// Sync makes every blob committed by a Deferred view of this store durable:
// one fsync per blob and one per directory it was renamed into. It returns
// only once the blobs committed before it was called are durable, also
// when another Sync is doing the work. After an error the blobs stay
// pending and the next Sync tries again.
func (s *Store) Sync() error {
	p := s.pending
	p.syncing.Lock()
	defer p.syncing.Unlock()
	p.mu.Lock()
	files, dirs, keys := p.files, p.dirs, p.keys
	p.files, p.dirs, p.keys = nil, nil, nil
	p.mu.Unlock()
	if len(files) == 0 && len(dirs) == 0 {
		return nil
	}
	var err error
	for _, set := range []map[string]bool{files, dirs} { // blobs before the directories naming them
		for path := range set {
			if err = syncPath(path); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if err != nil {
		p.mu.Lock()
		p.add(files, dirs, keys)
		p.mu.Unlock()
		return fmt.Errorf("artifact store: syncing blobs: %w", err)
	}
	p.mu.Lock()
	if p.synced == nil || len(p.synced)+len(keys) > maxSynced {
		p.synced = map[string]bool{}
	}
	for k := range keys {
		p.synced[k] = true
	}
	p.mu.Unlock()
	return nil
}

// SyncAhead starts a Sync in the background, unless one is running or
// nothing is pending, and returns at once: the blobs committed so far
// become durable while the caller goes on (a turn calls it when it defers
// the event naming a tool's output, so the fsync overlaps the model's next
// answer), and the Sync that must come before the durable commit naming
// them finds them done, or waits for the one under way. Its error is left
// to that Sync: the blobs stay pending and it tries again.
func (s *Store) SyncAhead() {
	p := s.pending
	p.mu.Lock()
	idle := len(p.files) == 0 && len(p.dirs) == 0
	p.mu.Unlock()
	if idle || !p.ahead.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer p.ahead.Store(false)
		_ = s.Sync()
	}()
}

// add puts paths back (or in) the pending sets; p.mu is held.
func (p *pending) add(files, dirs, keys map[string]bool) {
	if p.files == nil {
		p.files, p.dirs, p.keys = map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	for f := range files {
		p.files[f] = true
	}
	for d := range dirs {
		p.dirs[d] = true
	}
	for k := range keys {
		p.keys[k] = true
	}
}

func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return fsync(f)
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// ParseDigest checks a digest and returns its hex part.
func ParseDigest(d string) (string, error) {
	h, ok := strings.CutPrefix(d, DigestPrefix)
	if !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%q is not an artifact digest (want %s followed by 64 hex digits)", d, DigestPrefix)
	}
	return h, nil
}

// NormalizeDigest reads a digest as a person may type it: "sha256:" and 64
// hex digits, or the 64 hex digits alone, in either case. It returns the
// canonical form (DigestPrefix and lower-case hex), or an error that says
// what is wrong.
func NormalizeDigest(d string) (string, error) {
	s := strings.TrimSpace(d)
	h := s
	if algo, rest, ok := strings.Cut(s, ":"); ok {
		if !strings.EqualFold(algo, strings.TrimSuffix(DigestPrefix, ":")) {
			return "", fmt.Errorf("%q is not an artifact digest: artifacts are named by SHA-256 (%s followed by 64 hex digits), not %q", d, DigestPrefix, algo)
		}
		h = rest
	}
	h = strings.ToLower(h)
	if i := strings.IndexFunc(h, func(r rune) bool { return !strings.ContainsRune("0123456789abcdef", r) }); i >= 0 {
		return "", fmt.Errorf("%q is not an artifact digest: %q is not a hex digit (want 64 hex digits, optionally after %s)", d, h[i:i+1], DigestPrefix)
	}
	if len(h) != 64 {
		return "", fmt.Errorf("%q is not an artifact digest: %d hex digits, want 64 (optionally after %s)", d, len(h), DigestPrefix)
	}
	return DigestPrefix + h, nil
}

// MinPrefix is the fewest hex digits a digest prefix may have.
const MinPrefix = 4

// NormalizePrefix reads d as NormalizeDigest does, but takes a prefix of
// MinPrefix to 64 hex digits too: it returns "sha256:" and the digits in
// lower case, and whether they are the whole digest.
func NormalizePrefix(d string) (string, bool, error) {
	full, err := NormalizeDigest(d)
	if err == nil {
		return full, true, nil
	}
	s := strings.TrimSpace(d)
	if algo, rest, ok := strings.Cut(s, ":"); ok {
		if !strings.EqualFold(algo, strings.TrimSuffix(DigestPrefix, ":")) {
			return "", false, err
		}
		s = rest
	}
	h := strings.ToLower(s)
	if len(h) > 64 || strings.IndexFunc(h, func(r rune) bool { return !strings.ContainsRune("0123456789abcdef", r) }) >= 0 {
		return "", false, err
	}
	if len(h) < MinPrefix {
		return "", false, fmt.Errorf("%q is too short a prefix of an artifact digest: give at least %d of its 64 hex digits", d, MinPrefix)
	}
	return DigestPrefix + h, false, nil
}

func (s *Store) path(hexDigest string) string {
	return filepath.Join(s.dir, "sha256", hexDigest[:2], hexDigest[2:])
}

// Writer streams one blob into the store. Write as much as you like, then
// Commit (or Abort). Memory use is constant whatever the size: the first
// PackMax bytes are kept in memory, and a blob that grows past them goes to
// a temporary file. A Writer is used by one goroutine.
type Writer struct {
	s    *Store
	buf  []byte   // the blob while it is at most PackMax bytes and f is nil
	f    *os.File // the blob once it is larger
	h    hash.Hash
	n    int64
	err  error
	done bool
	// carry: the blob may ride in the event log's commit (Carry).
	carry bool
}

// Create starts a new blob.
func (s *Store) Create() (*Writer, error) {
	if err := os.MkdirAll(filepath.Join(s.dir, "sha256"), 0o700); err != nil {
		return nil, fmt.Errorf("artifact store %s: %w (set --data-dir or CUSTOM_AGENT_DATA_DIR to a writable directory)", s.dir, err)
	}
	return &Writer{s: s, h: sha256.New()}, nil
}

// spill moves the blob from memory to a temporary file.
func (w *Writer) spill() error {
	f, err := os.CreateTemp(filepath.Join(w.s.dir, "sha256"), ".tmp-*")
	if err != nil {
		return fmt.Errorf("artifact store %s: %w", w.s.dir, err)
	}
	w.f = f
	_, err = f.Write(w.buf)
	w.buf = nil
	if err != nil {
		return fmt.Errorf("writing artifact: %w", err)
	}
	return nil
}

// Write implements io.Writer. After an error every later Write fails too.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.f == nil && len(w.buf)+len(p) <= PackMax {
		w.buf = append(w.buf, p...)
		w.h.Write(p)
		w.n += int64(len(p))
		return len(p), nil
	}
	if w.f == nil {
		if w.err = w.spill(); w.err != nil {
			return 0, w.err
		}
	}
	n, err := w.f.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	if err != nil {
		w.err = fmt.Errorf("writing artifact: %w", err)
	}
	return n, w.err
}

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 { return w.n }

// Commit makes the blob durable under its digest and returns the digest. A
// blob that already exists is kept as it is (same digest, same bytes).
func (w *Writer) Commit() (string, error) {
	if w.done {
		return "", errors.New("artifact: Commit after Commit or Abort")
	}
	w.done = true
	if w.err != nil {
		w.abort()
		return "", w.err
	}
	var sum [sha256.Size]byte
	w.h.Sum(sum[:0])
	hexDigest := hex.EncodeToString(sum[:])
	if w.f == nil && w.s.carry != nil && w.carry {
		return w.commitCarried(sum, hexDigest)
	}
	if w.f == nil && w.s.deferred {
		return w.commitSmall(sum, hexDigest)
	}
	if w.f == nil {
		if err := w.spill(); err != nil {
			w.abort()
			return "", err
		}
	}
	if !w.s.deferred {
		if err := fsync(w.f); err != nil {
			w.abort()
			return "", fmt.Errorf("syncing artifact: %w", err)
		}
	}
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return "", fmt.Errorf("closing artifact: %w", err)
	}
	final := w.s.path(hexDigest)
	if w.s.deferred {
		// A blob this process committed is pending or synced: the same
		// bytes, nothing to do. One found on disk may be what a crash
		// left of another process's deferred Commit that was never
		// synced, so it is replaced by these bytes (rename is atomic).
		if w.s.pending.known(final) {
			os.Remove(w.f.Name())
			return DigestPrefix + hexDigest, nil
		}
	} else if _, err := os.Stat(final); err == nil {
		// Every non-deferred Commit synced its blob before the rename.
		os.Remove(w.f.Name())
		return DigestPrefix + hexDigest, nil
	}
	dir := filepath.Dir(final)
	newDir := false
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		newDir = true
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		os.Remove(w.f.Name())
		return "", fmt.Errorf("artifact store: %w", err)
	}
	if err := os.Rename(w.f.Name(), final); err != nil {
		os.Remove(w.f.Name())
		return "", fmt.Errorf("artifact store: %w", err)
	}
	if w.s.deferred {
		dirs := map[string]bool{dir: true}
		if newDir {
			dirs[filepath.Dir(dir)] = true // the new shard's own entry
		}
		p := w.s.pending
		p.mu.Lock()
		p.add(map[string]bool{final: true}, dirs, map[string]bool{final: true})
		p.mu.Unlock()
		return DigestPrefix + hexDigest, nil
	}
	if err := syncDir(dir); err != nil {
		return "", fmt.Errorf("artifact store: %w", err)
	}
	return DigestPrefix + hexDigest, nil
}

// commitSmall puts a small blob of a Deferred view in the pack, unless
// this process already has it there or it has a file of its own.
func (w *Writer) commitSmall(sum [sha256.Size]byte, hexDigest string) (string, error) {
	key := "pack:" + hexDigest
	if w.s.pending.known(key) {
		return DigestPrefix + hexDigest, nil
	}
	if w.s.inPack(sum) {
		// Indexed by this process but written by another, which may
		// not have synced it yet: sync the pack once more rather than
		// add a second copy.
		w.s.pending.mu.Lock()
		w.s.pending.add(map[string]bool{w.s.packPath(): true}, nil, map[string]bool{key: true})
		w.s.pending.mu.Unlock()
		return DigestPrefix + hexDigest, nil
	}
	if err := w.s.packAppend(sum, key, w.buf); err != nil {
		return "", fmt.Errorf("artifact store: %w", err)
	}
	w.buf = nil
	return DigestPrefix + hexDigest, nil
}

// Abort discards the blob.
func (w *Writer) Abort() {
	if !w.done {
		w.done = true
		w.abort()
	}
}

func (w *Writer) abort() {
	w.buf = nil
	if w.f != nil {
		w.f.Close()
		os.Remove(w.f.Name())
	}
}

func syncDir(dir string) error { return syncPath(dir) }

// Put stores b and returns its digest.
func (s *Store) Put(b []byte) (string, error) {
	w, err := s.Create()
	if err != nil {
		return "", err
	}
	if _, err := w.Write(b); err != nil {
		w.Abort()
		return "", err
	}
	return w.Commit()
}

// Open returns the blob with the given digest: one a Carrying view holds
// in memory, its own file, its record in the pack, or the source's copy
// (the last two checked against the digest). The caller closes it.
func (s *Store) Open(digest string) (*Blob, error) {
	h, err := ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	var sum [sha256.Size]byte
	if _, err := hex.Decode(sum[:], []byte(h)); err != nil {
		return nil, err
	}
	if b, ok := s.heldOpen(sum); ok {
		return b, nil
	}
	f, err := os.Open(s.path(h))
	if err == nil {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		return &Blob{SectionReader: io.NewSectionReader(f, 0, st.Size()), c: f, name: f.Name()}, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	b, err := s.packOpen(sum)
	if !errors.Is(err, os.ErrNotExist) {
		return b, err
	}
	b, found, err := s.sourceOpen(sum)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, digest)
	}
	return b, nil
}

// Verify re-hashes the blob and reports whether it still has its digest.
func (s *Store) Verify(digest string) error {
	f, err := s.Open(digest)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := DigestPrefix + hex.EncodeToString(h.Sum(nil)); got != digest {
		return fmt.Errorf("artifact %s was modified: its content now hashes to %s", digest, got)
	}
	return nil
}
