package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// A Deferred view keeps a blob of at most PackMax bytes not in a file of
// its own but appended to one pack file, Dir/sha256/small.pack, so that a
// whole batch of small outputs costs one fsync (of the pack) instead of
// two per blob (the blob and its shard directory). A record is a 4-byte
// magic, the blob's 32-byte SHA-256, its length (8 bytes, big-endian) and
// its bytes. Appenders hold an exclusive flock while they append, and first
// cut off a torn record a crash left at the end; readers look a blob up by
// its digest and check its bytes hash to it.
const PackMax = 64 << 10

const (
	packName   = "small.pack"
	recHeader  = 4 + sha256.Size + 8
	packMagic  = "CAB1"
	maxRecords = 1 << 24 // a pack index larger than this is not kept in memory
)

// packIndex is what this process knows of the pack: where each digest's
// records start, up to end.
type packIndex struct {
	mu  sync.Mutex
	end int64
	at  map[[sha256.Size]byte][]int64
}

func (s *Store) packPath() string { return filepath.Join(s.dir, "sha256", packName) }

// scan indexes the records of f from p.end on. It returns the offset where
// the last whole record ends: beyond it the file holds a torn record, or
// nothing. p.mu is held.
func (p *packIndex) scan(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if p.at == nil || size < p.end { // new, or cut by another process: start again
		p.at, p.end = map[[sha256.Size]byte][]int64{}, 0
	}
	var h [recHeader]byte
	for p.end+recHeader <= size {
		if _, err := f.ReadAt(h[:], p.end); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint64(h[4+sha256.Size:])
		if string(h[:4]) != packMagic || n > PackMax || p.end+recHeader+int64(n) > size {
			break // torn
		}
		var sum [sha256.Size]byte
		copy(sum[:], h[4:])
		if len(p.at) < maxRecords {
			p.at[sum] = append(p.at[sum], p.end)
		}
		p.end += recHeader + int64(n)
	}
	return p.end, nil
}

// packAppend appends one record and marks the pack pending (and, when this
// call created it, the directory that names it).
func (s *Store) packAppend(sum [sha256.Size]byte, key string, data []byte) error {
	path := s.packPath()
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	p := s.packs
	p.mu.Lock()
	defer p.mu.Unlock()
	end, err := p.scan(f)
	if err != nil {
		return err
	}
	if st, err := f.Stat(); err != nil {
		return err
	} else if st.Size() > end {
		// What a crash left of an append: no durable event names it
		// (the pack is synced before any does), so it goes.
		if err := f.Truncate(end); err != nil {
			return err
		}
	}
	rec := make([]byte, recHeader, recHeader+len(data))
	copy(rec, packMagic)
	copy(rec[4:], sum[:])
	binary.BigEndian.PutUint64(rec[4+sha256.Size:], uint64(len(data)))
	rec = append(rec, data...)
	if _, err := f.Write(rec); err != nil {
		return err
	}
	p.at[sum] = append(p.at[sum], end)
	p.end = end + int64(len(rec))
	dirs := map[string]bool{}
	if errors.Is(statErr, os.ErrNotExist) {
		dirs[filepath.Dir(path)] = true
	}
	s.pending.mu.Lock()
	s.pending.add(map[string]bool{path: true}, dirs, map[string]bool{key: true})
	s.pending.mu.Unlock()
	return nil
}

// inPack reports whether the pack holds a record of sum, as far as this
// process has indexed it.
func (s *Store) inPack(sum [sha256.Size]byte) bool {
	p := s.packs
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.at[sum]) > 0
}

// packOpen returns the blob from the pack, checked against its digest.
func (s *Store) packOpen(sum [sha256.Size]byte) (*Blob, error) {
	f, err := os.Open(s.packPath())
	if err != nil {
		return nil, err
	}
	for attempt := 0; attempt < 2; attempt++ {
		p := s.packs
		p.mu.Lock()
		if attempt > 0 {
			p.at, p.end = nil, 0 // offsets went stale: index again
		}
		_, err := p.scan(f)
		offs := append([]int64(nil), p.at[sum]...)
		p.mu.Unlock()
		if err != nil {
			f.Close()
			return nil, err
		}
		for i := len(offs) - 1; i >= 0; i-- {
			var h [recHeader]byte
			if _, err := f.ReadAt(h[:], offs[i]); err != nil {
				continue
			}
			n := int64(binary.BigEndian.Uint64(h[4+sha256.Size:]))
			if string(h[:4]) != packMagic || !bytes.Equal(h[4:4+sha256.Size], sum[:]) || n > PackMax {
				continue
			}
			data := make([]byte, n)
			if _, err := f.ReadAt(data, offs[i]+recHeader); err != nil {
				continue
			}
			if sha256.Sum256(data) == sum {
				return &Blob{SectionReader: io.NewSectionReader(f, offs[i]+recHeader, n), c: f, name: f.Name()}, nil
			}
		}
	}
	f.Close()
	return nil, os.ErrNotExist
}

// Blob is an open blob: a file of its own or a record of the pack.
type Blob struct {
	*io.SectionReader
	c    io.Closer
	name string
}

// Close releases the blob.
func (b *Blob) Close() error { return b.c.Close() }

// Name is the file that holds the blob (for a small blob of a Deferred
// view, the pack).
func (b *Blob) Name() string { return b.name }
