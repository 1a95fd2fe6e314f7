package sqlitestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/custom-agent/custom-agent/eventlog"
)

var _ eventlog.Leases = (*Store)(nil)

// Lease implements eventlog.Leases with an exclusive flock(2) on a file
// per session beside the log (LOG-leases/), which the kernel releases when
// the process ends however it ends. The file names the session by a digest
// (a hook session's id comes from another agent) and holds the pid of its
// last holder, for the message a busy session gets. The files are never
// removed: removing a lock file while another process waits on it would
// let two processes hold "the" lock at once.
func (s *Store) Lease(ctx context.Context, sessionID string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := s.path + "-leases"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("leasing session %s: %w", sessionID, err)
	}
	if err := privateDir(dir); err != nil {
		return nil, fmt.Errorf("leasing session %s: %w", sessionID, err)
	}
	sum := sha256.Sum256([]byte(sessionID))
	name := filepath.Join(dir, hex.EncodeToString(sum[:16]))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscallNoFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("leasing session %s: %w", sessionID, err)
	}
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("leasing session %s: making %s private: %w", sessionID, name, err)
		}
	}
	busy, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("leasing session %s: %w", sessionID, err)
	}
	if busy {
		holder := ""
		if b, err := os.ReadFile(name); err == nil && len(b) > 0 && len(b) < 32 {
			holder = " (pid " + string(b) + ")"
		}
		f.Close()
		return nil, fmt.Errorf("session %s%s: %w", sessionID, holder, eventlog.ErrSessionBusy)
	}
	// The pid is only for messages: a write that fails changes nothing.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
	}
	return func() { f.Close() }, nil
}

// privateDir checks that the leases directory is a directory of ours, not a
// link, and makes it 0700: whoever can change it can take a session's
// lease file from under a process.
func privateDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory (a symbolic link?)", dir)
	}
	if !ownedByUs(st) {
		return fmt.Errorf("%s belongs to another user", dir)
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("making %s private (mode 0700): %w", dir, err)
		}
	}
	return nil
}
