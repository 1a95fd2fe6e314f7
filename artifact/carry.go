package artifact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"sync"
)

// Source is where a store finds the small blobs that Carrying views handed
// to their event log: a log that writes a blob in the same commit as the
// event naming it (eventlog.BlobAppender) keeps it there.
type Source interface {
	// Blob returns the bytes of the blob with that SHA-256; found is
	// false when the source holds none.
	Blob(ctx context.Context, sum [sha256.Size]byte) (data []byte, found bool, err error)
}

// WithSource returns a view of the store that, after its own files and its
// pack, looks blobs up in src. The view shares the store's directory and
// pending blobs.
func (s *Store) WithSource(src Source) *Store {
	v := *s
	v.src = src
	return &v
}

// Carried is a small blob a Carrying view holds in memory until the commit
// of the event log that first names it.
type Carried struct {
	Sum  [sha256.Size]byte
	Data []byte
}

// carrier is a Carrying view's queue of the blobs committed to it and not
// yet taken.
type carrier struct {
	mu    sync.Mutex
	queue []Carried
}

// Carrying returns a Deferred view whose small blobs (at most PackMax
// bytes) go neither to a file nor to the pack: they stay in memory until
// the view's user takes them (Take) and writes them in the same commit as
// the event that names them (eventlog.BlobAppender), which then makes
// them durable with no fsync of their own. Larger blobs are kept as a
// Deferred view keeps them, and Sync makes them durable.
//
// Until Settle says the commit is durable, the store and all its views
// read a carried blob from memory; after, only a view with a Source that
// holds it finds it. Each Carrying view has its own queue: a turn takes
// only the blobs its own executors wrote.
func (s *Store) Carrying() *Store {
	v := *s.Deferred()
	v.src = s.src
	v.carry = &carrier{}
	return &v
}

// Take returns the blobs committed to this Carrying view since the last
// Take, in the order they were committed, for the caller's next commit;
// the caller reports its outcome with Settle. Nil for other views.
func (s *Store) Take() []Carried {
	if s.carry == nil {
		return nil
	}
	s.carry.mu.Lock()
	defer s.carry.mu.Unlock()
	q := s.carry.queue
	s.carry.queue = nil
	return q
}

// Settle reports the outcome of the commit that carried cs (what Take
// returned): once it is durable, the blobs are read from the source, and
// memory lets them go; when it failed, they go back to the front of the
// queue, for the next commit.
func (s *Store) Settle(cs []Carried, durable bool) {
	if s == nil || len(cs) == 0 || s.carry == nil {
		return
	}
	if !durable {
		s.carry.mu.Lock()
		s.carry.queue = append(cs[:len(cs):len(cs)], s.carry.queue...)
		s.carry.mu.Unlock()
		return
	}
	p := s.pending
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		if h := p.held[c.Sum]; h != nil {
			if h.n--; h.n <= 0 {
				delete(p.held, c.Sum)
			}
		}
	}
}

// held is a carried blob in memory and how many carried copies of it are
// not yet settled durable.
type held struct {
	data []byte
	n    int
}

// Held returns the blob's bytes while the Writer holds them in memory
// (at most PackMax bytes, not yet committed), for the caller to decide
// whether they may go into the event log (Carry). The caller must not
// change them.
func (w *Writer) Held() ([]byte, bool) {
	if w.f != nil || w.done || w.err != nil {
		return nil, false
	}
	return w.buf, true
}

// Carry marks the blob as one that may be kept in the event log: on a
// Carrying view, Commit then hands it to the commit of the event naming
// it instead of the pack. Only what the log may hold may be carried (a
// tool's output that held no secret): the log is the audit trail, copied
// and shown, while the artifact store keeps outputs as they were. Without
// Carry, or on another view, Commit keeps the blob as it would anyway.
func (w *Writer) Carry() { w.carry = true }

// commitCarried queues a small blob of a Carrying view, readable from
// memory at once.
func (w *Writer) commitCarried(sum [sha256.Size]byte, hexDigest string) (string, error) {
	data := w.buf
	w.buf = nil
	p := w.s.pending
	p.mu.Lock()
	if p.held == nil {
		p.held = map[[sha256.Size]byte]*held{}
	}
	h := p.held[sum]
	if h == nil {
		h = &held{data: data}
		p.held[sum] = h
	}
	h.n++
	p.mu.Unlock()
	c := w.s.carry
	c.mu.Lock()
	c.queue = append(c.queue, Carried{Sum: sum, Data: h.data})
	c.mu.Unlock()
	return DigestPrefix + hexDigest, nil
}

// heldOpen returns a carried blob still in memory.
func (s *Store) heldOpen(sum [sha256.Size]byte) (*Blob, bool) {
	p := s.pending
	p.mu.Lock()
	h := p.held[sum]
	p.mu.Unlock()
	if h == nil {
		return nil, false
	}
	return memBlob(h.data, "memory (not yet committed to the event log)"), true
}

// sourceOpen returns a blob from the source, checked against its digest.
func (s *Store) sourceOpen(sum [sha256.Size]byte) (*Blob, bool, error) {
	if s.src == nil {
		return nil, false, nil
	}
	data, found, err := s.src.Blob(context.Background(), sum)
	if err != nil || !found {
		return nil, false, err
	}
	if sha256.Sum256(data) != sum {
		return nil, false, fmt.Errorf("artifact %s%x: the bytes the event log holds for it hash to something else", DigestPrefix, sum)
	}
	return memBlob(data, "the event log"), true, nil
}

func memBlob(data []byte, name string) *Blob {
	return &Blob{SectionReader: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))), c: io.NopCloser(nil), name: name}
}
