package artifact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"testing"
)

// logSource stands in for an event log that keeps carried blobs.
type logSource struct {
	mu    sync.Mutex
	blobs map[[sha256.Size]byte][]byte
}

func (l *logSource) Blob(_ context.Context, sum [sha256.Size]byte) ([]byte, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.blobs[sum]
	return b, ok, nil
}

// commit is what an event log's commit of carried blobs does.
func (l *logSource) commit(cs []Carried) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.blobs == nil {
		l.blobs = map[[sha256.Size]byte][]byte{}
	}
	for _, c := range cs {
		l.blobs[c.Sum] = c.Data
	}
}

func putCarried(t *testing.T, s *Store, data []byte, carry bool) string {
	t.Helper()
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if b, ok := w.Held(); !ok || !bytes.Equal(b, data) {
		t.Fatalf("Held = %q, %v before Commit, want the bytes written", b, ok)
	}
	if carry {
		w.Carry()
	}
	d, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readAll(t *testing.T, s *Store, digest string) ([]byte, error) {
	t.Helper()
	f, err := s.Open(digest)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func TestCarriedBlobsCostNoFsyncAndAreReadFromMemoryThenTheSource(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	base, _ := Open(dir)
	src := &logSource{}
	reader := base.WithSource(src)
	v := reader.Carrying()
	synced := countSyncs(t, dir)

	clean := []byte("an output with nothing to mask\n")
	d := putCarried(t, v, clean, true)
	if got, err := readAll(t, base, d); err != nil || !bytes.Equal(got, clean) {
		t.Fatalf("before the commit, the store read %q, %v; want the carried bytes from memory", got, err)
	}
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) != 0 {
		t.Fatalf("a carried blob was synced: %v", got)
	}
	if base.inPack(sha256.Sum256(clean)) {
		t.Fatal("a carried blob went to the pack")
	}

	cs := v.Take()
	if len(cs) != 1 || cs[0].Sum != sha256.Sum256(clean) || !bytes.Equal(cs[0].Data, clean) {
		t.Fatalf("Take = %v, want the one carried blob", cs)
	}
	if again := v.Take(); len(again) != 0 {
		t.Fatalf("a second Take returned %d blobs, want none", len(again))
	}
	src.commit(cs)
	v.Settle(cs, true)
	if _, err := readAll(t, base, d); !errors.Is(err, ErrNotFound) {
		t.Fatalf("once durable in the log, a store without the source still read it (%v)", err)
	}
	if got, err := readAll(t, reader, d); err != nil || !bytes.Equal(got, clean) {
		t.Fatalf("with the source: %q, %v", got, err)
	}
	if err := reader.Verify(d); err != nil {
		t.Fatal(err)
	}
}

func TestABlobNotMarkedCarryGoesToThePack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	base, _ := Open(dir)
	v := base.WithSource(&logSource{}).Carrying()
	secret := []byte("password=hunter2hunter2\n")
	d := putCarried(t, v, secret, false)
	if cs := v.Take(); len(cs) != 0 {
		t.Fatalf("a blob not marked Carry was carried: %v", cs)
	}
	synced := countSyncs(t, dir)
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) == 0 {
		t.Fatal("the pack holding the blob was not synced before the commit")
	}
	if got, err := readAll(t, base, d); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("from the pack: %q, %v", got, err)
	}
}

func TestAFailedCommitPutsCarriedBlobsBackInOrder(t *testing.T) {
	base, _ := Open(filepath.Join(t.TempDir(), "artifacts"))
	v := base.Carrying()
	a := putCarried(t, v, []byte("first\n"), true)
	first := v.Take()
	b := putCarried(t, v, []byte("second\n"), true)
	v.Settle(first, false) // the commit failed: the next one carries both
	next := v.Take()
	if len(next) != 2 || DigestPrefix+hex.EncodeToString(next[0].Sum[:]) != a || DigestPrefix+hex.EncodeToString(next[1].Sum[:]) != b {
		t.Fatalf("after a failed commit Take = %d blobs, want first then second", len(next))
	}
	if _, err := readAll(t, base, a); err != nil {
		t.Fatalf("a blob whose commit failed is no longer readable: %v", err)
	}
	v.Settle(next, true)
	if _, err := readAll(t, base, a); !errors.Is(err, ErrNotFound) {
		t.Fatalf("settled durable, the blob is still in memory (%v)", err)
	}
}

func TestTheSameBlobCarriedTwiceStaysInMemoryUntilBothAreDurable(t *testing.T) {
	base, _ := Open(filepath.Join(t.TempDir(), "artifacts"))
	one, two := base.Carrying(), base.Carrying()
	data := []byte("the same output in two turns\n")
	d := putCarried(t, one, data, true)
	putCarried(t, two, data, true)
	if cs := two.Take(); len(cs) != 1 {
		t.Fatalf("a view took %d blobs of the other's, want its own one", len(cs))
	} else {
		two.Settle(cs, true)
	}
	if _, err := readAll(t, base, d); err != nil {
		t.Fatalf("the first view's copy is not durable yet, but it is gone from memory: %v", err)
	}
	one.Settle(one.Take(), true)
	if _, err := readAll(t, base, d); !errors.Is(err, ErrNotFound) {
		t.Fatalf("both durable, the blob is still in memory (%v)", err)
	}
}

func TestASourceWhoseBytesDoNotHashIsAnError(t *testing.T) {
	base, _ := Open(filepath.Join(t.TempDir(), "artifacts"))
	data := []byte("kept in the log\n")
	src := &logSource{}
	src.commit([]Carried{{Sum: sha256.Sum256(data), Data: []byte("edited in the file\n")}})
	d := DigestPrefix + hex.EncodeToString(func() []byte { s := sha256.Sum256(data); return s[:] }())
	if _, err := readAll(t, base.WithSource(src), d); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("edited bytes from the source: %v, want an error saying so", err)
	}
}

func TestLargeBlobsAreNotCarried(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	base, _ := Open(dir)
	v := base.Carrying()
	w, _ := v.Create()
	big := bytes.Repeat([]byte("x"), PackMax+1)
	w.Write(big)
	if _, ok := w.Held(); ok {
		t.Fatal("a blob over PackMax is still held in memory")
	}
	w.Carry()
	d, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if cs := v.Take(); len(cs) != 0 {
		t.Fatal("a blob over PackMax was carried")
	}
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, base, d); err != nil || len(got) != len(big) {
		t.Fatalf("large blob: %d bytes, %v", len(got), err)
	}
}
