// Package artifact is a content-addressed blob store for the whole output of
// tool calls (spec §5: the event log keeps a preview, the store keeps all).
// Blobs are named by their SHA-256, written atomically (temp file, fsync,
// rename, fsync of the directory) with mode 0600, and never modified.
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
)

// DigestPrefix starts every digest: "sha256:" and 64 lower-case hex digits.
const DigestPrefix = "sha256:"

// ErrNotFound: no blob has that digest.
var ErrNotFound = errors.New("no artifact with that digest")

// Store keeps blobs under Dir/sha256/ab/cdef…. Its methods may be called
// concurrently.
type Store struct {
	dir string
}

// Open returns the store in dir. Nothing is created until the first blob is
// written, so reading never changes the disk.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", dir, err)
	}
	return &Store{dir: abs}, nil
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

func (s *Store) path(hexDigest string) string {
	return filepath.Join(s.dir, "sha256", hexDigest[:2], hexDigest[2:])
}

// Writer streams one blob into the store. Write as much as you like, then
// Commit (or Abort). Memory use is constant whatever the size. A Writer is
// used by one goroutine.
type Writer struct {
	s    *Store
	f    *os.File
	h    hash.Hash
	n    int64
	err  error
	done bool
}

// Create starts a new blob.
func (s *Store) Create() (*Writer, error) {
	if err := os.MkdirAll(filepath.Join(s.dir, "sha256"), 0o700); err != nil {
		return nil, fmt.Errorf("artifact store %s: %w (set --data-dir or CUSTOM_AGENT_DATA_DIR to a writable directory)", s.dir, err)
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, "sha256"), ".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", s.dir, err)
	}
	return &Writer{s: s, f: f, h: sha256.New()}, nil
}

// Write implements io.Writer. After an error every later Write fails too.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
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
	hexDigest := hex.EncodeToString(w.h.Sum(nil))
	if err := w.f.Sync(); err != nil {
		w.abort()
		return "", fmt.Errorf("syncing artifact: %w", err)
	}
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return "", fmt.Errorf("closing artifact: %w", err)
	}
	final := w.s.path(hexDigest)
	if _, err := os.Stat(final); err == nil {
		os.Remove(w.f.Name())
		return DigestPrefix + hexDigest, nil
	}
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		os.Remove(w.f.Name())
		return "", fmt.Errorf("artifact store: %w", err)
	}
	if err := os.Rename(w.f.Name(), final); err != nil {
		os.Remove(w.f.Name())
		return "", fmt.Errorf("artifact store: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return "", fmt.Errorf("artifact store: %w", err)
	}
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
	w.f.Close()
	os.Remove(w.f.Name())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

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

// Open returns the blob with the given digest. The caller closes it.
func (s *Store) Open(digest string) (*os.File, error) {
	h, err := ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(h))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, digest)
	}
	return f, err
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
