package fs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// newFilePerm is the mode of a file the tools create.
const newFilePerm fs.FileMode = 0o644

// keptMode is the part of an existing file's mode a rewrite keeps.
const keptMode = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// staged is a file's new content in a synced temporary file beside it,
// waiting to be renamed over it. Until commit, the file itself is as it was.
type staged struct{ tmp, dst string }

// stage writes data with mode perm to a temporary file in dst's directory
// and syncs it, so that a crash after commit leaves either the old or the
// new content, never a mix.
func stage(dst string, data []byte, perm fs.FileMode) (*staged, error) {
	f, err := os.CreateTemp(filepath.Dir(dst), ".custom-agent-*.tmp")
	if err != nil {
		return nil, err
	}
	s := &staged{tmp: f.Name(), dst: dst}
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
	if err != nil {
		s.discard()
		return nil, err
	}
	return s, nil
}

// commit renames the temporary file over the destination and syncs the
// directory, so that the rename itself survives a crash.
func (s *staged) commit() error {
	if err := os.Rename(s.tmp, s.dst); err != nil {
		return err
	}
	syncDir(filepath.Dir(s.dst))
	return nil
}

// discard removes the temporary file.
func (s *staged) discard() { _ = os.Remove(s.tmp) }

// syncDir flushes a directory's entries. Some file systems cannot; the
// rename has happened either way, so a failure is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// writeTarget returns the file that writing to p (raw as the model wrote it,
// for messages) changes: p itself, or the file a symbolic link at p leads
// to, which is the path the engine judged. info is the existing file's, or
// nil when there is none yet.
func writeTarget(raw, p string) (dst string, info fs.FileInfo, err error) {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, nil, nil
	case errors.Is(err, syscall.ENOTDIR):
		return "", nil, fmt.Errorf("cannot write %s: a directory in its path is a file", raw)
	case err != nil:
		return "", nil, pathError(raw, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", nil, fmt.Errorf("%s is a symbolic link that leads nowhere (%v); write to the file by its real name", raw, unwrapPath(err))
		}
		if fi, err = os.Stat(real); err != nil {
			return "", nil, pathError(raw, err)
		}
		p = real
	}
	if fi.IsDir() {
		return "", nil, fmt.Errorf("%s is a directory; give the path of a file", raw)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%s is not a regular file (%s); only regular files can be written", raw, fi.Mode().Type())
	}
	return p, fi, nil
}

// makeParents creates the missing directories above the file dst, mode
// 0755, and returns those it created, deepest last.
func makeParents(raw, dst string) ([]string, error) {
	var missing []string
	for dir := filepath.Dir(dst); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("cannot write %s: %s is a file, not a directory", raw, dir)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return nil, fmt.Errorf("cannot write %s: %v", raw, err)
		}
		missing = append(missing, dir)
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			removeDirs(made)
			return nil, fmt.Errorf("cannot create the directory %s for %s: %v", missing[i], raw, unwrapPath(err))
		}
		made = append(made, missing[i])
	}
	return made, nil
}

// removeDirs removes directories made by makeParents, deepest first, if
// they are still empty.
func removeDirs(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		_ = os.Remove(made[i])
	}
}
