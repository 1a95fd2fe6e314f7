package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/custom-agent/custom-agent/permission"
)

// lockDir takes an exclusive lock on the directory dir, creating it first,
// and returns the function that releases it. The lock is flock(2) on the
// directory itself, so no lock file is left in the repository; it is
// released when the process dies, so a crash never leaves it held.
func lockDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(d.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
		d.Close()
	}, nil
}

// readPolicy reads and parses path; a missing file is an empty policy. Its
// rules are checked as any file's (at LevelUser, the level only matters to
// built-in rules).
func readPolicy(path string) (*parsed, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &parsed{path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading policy: %w", err)
	}
	return parse(path, src, permission.LevelUser)
}

// updatePolicy changes the policy file at path under the directory lock:
// it reads the file as it is now (another process may have changed it),
// lets change edit its rules, and writes the result atomically. A file
// that does not parse is never overwritten. change returning errNoChange
// leaves the file as it is.
func updatePolicy(path string, change func(rules []Rule) ([]Rule, error)) error {
	unlock, err := lockDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer unlock()
	p, err := readPolicy(path)
	if err != nil {
		return err
	}
	var rules []Rule
	for i := range p.ents {
		rules = append(rules, p.ents[i].Rule)
	}
	rules, err = change(rules)
	if errors.Is(err, errNoChange) {
		return nil
	}
	if err != nil {
		return err
	}
	b, err := encode(&File{Version: Version, Rules: rules})
	if err != nil {
		return err
	}
	return writeAtomic(path, b)
}

var errNoChange = errors.New("no change")

// writeAtomic replaces path with data: a synced temporary file beside it is
// renamed over it and the directory synced, so that a crash leaves the old
// or the new file, never a mix. An existing file keeps its permissions.
func writeAtomic(path string, data []byte) error {
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
