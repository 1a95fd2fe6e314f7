//go:build unix

package sqlitestore

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
)

// The third review's finding 3 (left over): a data directory made by hand
// at 0755 got events.db, -wal and -shm at the umask's 0644, readable by
// every user, and the leases directory was used whatever its mode. They
// are 0600 (0700 for the directory) now, and a log found at 0644 is made
// private when opened for writing.
func TestFilesArePrivateInAnOpenDataDir(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, pre := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "events.db")
		if pre {
			// A log made before, at 0644, with a leases dir at 0755 and
			// a lease file at 0644.
			s, err := Open(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				_ = os.Chmod(p, 0o644)
			}
			if err := os.MkdirAll(path+"-leases", 0o755); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(path+"-leases", 0o755)
		}
		s, err := Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := event.NewDraft("s1", "", time.Now(), event.SessionStartedPayload{Cwd: "/w", Mode: "default", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		release, err := s.Lease(context.Background(), "s1")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]os.FileMode{path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600, path + "-leases": 0o700}
		leases, _ := os.ReadDir(path + "-leases")
		for _, e := range leases {
			want[filepath.Join(path+"-leases", e.Name())] = 0o600
		}
		if len(leases) == 0 {
			t.Fatal("no lease file")
		}
		for p, m := range want {
			st, err := os.Stat(p)
			if err != nil {
				t.Errorf("pre-existing %v: %v", pre, err)
				continue
			}
			if st.Mode().Perm() != m {
				t.Errorf("pre-existing %v: %s is %04o, want %04o", pre, filepath.Base(p), st.Mode().Perm(), m)
			}
		}
		release()
		s.Close()
	}
}

// A leases directory that is a link to elsewhere is refused.
func TestLeasesDirMayNotBeALink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.db")
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.Symlink(t.TempDir(), path+"-leases"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lease(context.Background(), "s1"); err == nil {
		t.Fatal("a leases directory that is a symbolic link was used")
	}
}
