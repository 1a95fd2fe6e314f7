package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countSyncs counts the fsyncs of paths under dir until the test ends. The
// tests using it are not parallel, so nothing else swaps fsync meanwhile.
func countSyncs(t *testing.T, dir string) func() []string {
	t.Helper()
	var mu sync.Mutex
	var synced []string
	old := fsync
	fsync = func(f *os.File) error {
		if strings.HasPrefix(f.Name(), dir) {
			mu.Lock()
			synced = append(synced, strings.TrimPrefix(f.Name(), dir))
			mu.Unlock()
		}
		return old(f)
	}
	t.Cleanup(func() { fsync = old })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := synced
		synced = nil
		return out
	}
}

func TestDirectCommitSyncsBlobAndDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	s, _ := Open(dir)
	if _, err := s.Create(); err != nil { // makes sha256/
		t.Fatal(err)
	}
	synced := countSyncs(t, dir)
	if _, err := s.Put([]byte("direct\n")); err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) != 2 {
		t.Fatalf("a direct Commit synced %v, want the temp file and the shard directory", got)
	}
}

func TestDeferredCommitSyncsOnlyAtSync(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	base, _ := Open(dir)
	s := base.Deferred()
	synced := countSyncs(t, dir)
	large := bytes.Repeat([]byte("large\n"), PackMax/6+1) // over PackMax: a file of its own
	var digests []string
	for _, b := range [][]byte{[]byte("one\n"), []byte("two\n"), large} {
		d, err := s.Put(b)
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	if got := synced(); len(got) != 0 {
		t.Fatalf("deferred Commits synced %v before Sync", got)
	}
	// Readable before Sync, by the store and by its views.
	for _, d := range digests {
		if err := base.Verify(d); err != nil {
			t.Fatalf("a deferred blob is not readable before Sync: %v", err)
		}
	}
	if err := base.Sync(); err != nil { // any view's Sync syncs all
		t.Fatal(err)
	}
	h := strings.TrimPrefix(digests[2], DigestPrefix)
	want := map[string]bool{
		"/sha256/small.pack":             true,                           // both small blobs, one fsync
		"/sha256":                        true,                           // which names the new pack and the new shard
		"/sha256/" + h[:2] + "/" + h[2:]: true, "/sha256/" + h[:2]: true, // the large blob and its shard
	}
	got := synced()
	if len(got) != len(want) {
		t.Fatalf("Sync synced %v, want %d paths: %v", got, len(want), want)
	}
	for _, p := range got {
		if !want[p] {
			t.Fatalf("Sync synced %s, not one of %v", p, want)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) != 0 {
		t.Fatalf("a second Sync with nothing pending synced %v", got)
	}
	// The same bytes again: already durable, nothing to sync.
	for _, b := range [][]byte{[]byte("one\n"), large} {
		if _, err := s.Put(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) != 0 {
		t.Fatalf("blobs committed again synced %v", got)
	}
	// Another process reads them all.
	other, _ := Open(dir)
	for _, d := range digests {
		if err := other.Verify(d); err != nil {
			t.Fatalf("another store: %v", err)
		}
	}
}

// TestDeferredReplacesWhatACrashLeft: a large blob left on disk by a
// deferred Commit that was never synced may be torn; a deferred view of a
// new process does not trust it and puts its own bytes in place.
func TestDeferredReplacesWhatACrashLeft(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	large := bytes.Repeat([]byte("whole output\n"), PackMax/13+1)
	first, _ := Open(dir)
	d, err := first.Deferred().Put(large)
	if err != nil {
		t.Fatal(err)
	}
	h := strings.TrimPrefix(d, DigestPrefix)
	torn := filepath.Join(dir, "sha256", h[:2], h[2:])
	if err := os.WriteFile(torn, nil, 0o600); err != nil { // what a power loss may leave
		t.Fatal(err)
	}
	second, _ := Open(dir) // a new process knows nothing of the first's blobs
	if _, err := second.Deferred().Put(large); err != nil {
		t.Fatal(err)
	}
	if err := second.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := second.Verify(d); err != nil {
		t.Fatalf("the torn blob was kept: %v", err)
	}
}

// TestPackCutsATornTail: a record a crash left half-written at the end of
// the pack is cut off by the next append, records before it stay readable,
// and the new one is found.
func TestPackCutsATornTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	first, _ := Open(dir)
	before, err := first.Deferred().Put([]byte("before the crash\n"))
	if err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(dir, "sha256", "small.pack")
	f, err := os.OpenFile(pack, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte(packMagic + "half a header")) // torn
	f.Close()
	second, _ := Open(dir)
	after, err := second.Deferred().Put([]byte("after the crash\n"))
	if err != nil {
		t.Fatal(err)
	}
	third, _ := Open(dir)
	for _, d := range []string{before, after} {
		b, err := third.Open(d)
		if err != nil {
			t.Fatalf("%s after a torn tail: %v", d, err)
		}
		got, _ := io.ReadAll(b)
		b.Close()
		if err := third.Verify(d); err != nil {
			t.Fatalf("%s: %v (%q)", d, err, got)
		}
	}
	st, _ := os.Stat(pack)
	if want := int64(2*recHeader + len("before the crash\n") + len("after the crash\n")); st.Size() != want {
		t.Fatalf("pack is %d bytes, want %d: the torn tail was kept", st.Size(), want)
	}
	if _, err := third.Open(DigestPrefix + strings.Repeat("0", 64)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a digest in neither the files nor the pack: %v", err)
	}
}

// TestConcurrentPackAppenders: stores of several "processes" append to one
// pack at once under its lock; every blob is readable by a fresh store.
func TestConcurrentPackAppenders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	var wg sync.WaitGroup
	digests := make([][]string, 4)
	for p := range digests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _ := Open(dir)
			d := s.Deferred()
			for i := range 50 {
				dg, err := d.Put(fmt.Appendf(nil, "process %d blob %d\n", p, i))
				if err != nil {
					t.Error(err)
					return
				}
				digests[p] = append(digests[p], dg)
			}
			if err := d.Sync(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	fresh, _ := Open(dir)
	for _, ds := range digests {
		for _, d := range ds {
			if err := fresh.Verify(d); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSyncWaitsForASyncInProgress: a Sync that finds nothing pending
// because another Sync took it returns only once those blobs are durable.
func TestSyncWaitsForASyncInProgress(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	base, _ := Open(dir)
	s := base.Deferred()
	if _, err := s.Put([]byte("slow\n")); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	old := fsync
	fsync = func(f *os.File) error {
		once.Do(func() { close(entered); <-release })
		return old(f)
	}
	t.Cleanup(func() { fsync = old })
	first := make(chan error, 1)
	go func() { first <- s.Sync() }()
	<-entered
	second := make(chan error, 1)
	go func() { second <- s.Sync() }()
	time.Sleep(20 * time.Millisecond) // room for a wrong Sync to return early (a right one never does)
	select {
	case err := <-second:
		t.Fatalf("the second Sync returned (%v) while the first was still syncing the blob", err)
	default:
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}

// TestSyncAheadDoesTheSyncOnce: a SyncAhead started after a deferred Commit
// and the Sync that follows make the blob durable with one fsync of the
// pack between them, whichever of the two does it; when the fsync fails
// under SyncAhead, the blob stays pending and Sync tries again and reports.
func TestSyncAheadDoesTheSyncOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	base, _ := Open(dir)
	s := base.Deferred()
	if _, err := s.Put([]byte("first\n")); err != nil { // creates the pack
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	synced := countSyncs(t, dir)
	if _, err := s.Put([]byte("ahead\n")); err != nil {
		t.Fatal(err)
	}
	s.SyncAhead()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) != 1 || got[0] != "/sha256/small.pack" {
		t.Fatalf("SyncAhead and Sync synced %v, want the pack once", got)
	}
	s.SyncAhead() // nothing pending: no fsync, no goroutine left running
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) != 0 {
		t.Fatalf("with nothing pending, synced %v", got)
	}

	for s.pending.ahead.Load() { // before fsync is swapped under it
		time.Sleep(time.Millisecond)
	}
	fail := errors.New("disk gone")
	old := fsync
	var calls atomic.Int32
	fsync = func(f *os.File) error {
		if calls.Add(1) == 1 {
			return fail
		}
		return old(f)
	}
	t.Cleanup(func() { fsync = old })
	if _, err := s.Put([]byte("fails first\n")); err != nil {
		t.Fatal(err)
	}
	s.SyncAhead()
	// Whether the failing fsync was SyncAhead's or this Sync's, the blob
	// is durable only after a second one, and an error was not lost:
	// either Sync reports it or it retried after SyncAhead's.
	err := s.Sync()
	for errors.Is(err, fail) {
		err = s.Sync()
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d fsyncs, want the failed one and its retry", n)
	}
}
