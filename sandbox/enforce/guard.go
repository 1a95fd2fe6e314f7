package enforce

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// removeGuarded removes, in each directory of p.GuardDirs, the entries
// whose name guarded reports protected and that were not there when the
// call started (p.GuardKeep; the protected and hidden paths, whose mounts
// kept them; AbsentKeep). Each directory is read once, beneath the
// working directory only (os.Root), and one the process replaced by a
// link is not followed: a guarded directory is reached through plain
// directories or not at all (one it moved away or removed has nothing of
// the host's in it to guard).
func removeGuarded(p Profile, guarded func(string) bool) error {
	if len(p.GuardDirs) == 0 || guarded == nil {
		return nil
	}
	root, err := os.OpenRoot(p.Cwd)
	if err != nil {
		return fmt.Errorf("%w: the working directory cannot be checked: %w", ErrProtectedCreated, err)
	}
	defer root.Close()
	r := remover{root: root, listed: map[string][]os.DirEntry{}, keep: map[string]bool{}}
	for _, k := range [][]string{p.GuardKeep, p.Protected, p.Hidden, p.AbsentKeep} {
		for _, q := range k {
			if rel, err := filepath.Rel(p.Cwd, q); err == nil {
				r.keep[rel] = true
			}
		}
	}
	plain := map[string]bool{".": true}
	var isPlain func(rel string) bool
	isPlain = func(rel string) bool {
		if ok, seen := plain[rel]; seen {
			return ok
		}
		ok := false
		if parent := filepath.Dir(rel); isPlain(parent) {
			base := filepath.Base(rel)
			for _, e := range r.entries(parent) {
				if e.Name() == base {
					ok = e.IsDir() // a link is not
					break
				}
			}
		}
		plain[rel] = ok
		return ok
	}
	for _, d := range p.GuardDirs {
		rel, err := filepath.Rel(p.Cwd, d)
		if err != nil || strings.HasPrefix(rel, "..") || !isPlain(rel) {
			continue
		}
		for _, e := range r.entries(rel) {
			q := filepath.Join(rel, e.Name())
			if guarded(e.Name()) && !r.keep[q] {
				r.removeAll(q)
			}
		}
	}
	return r.note()
}

// entries returns the directory rel's entries, read once; one the process
// made unreadable is made readable again.
func (r *remover) entries(rel string) []os.DirEntry {
	if ents, ok := r.listed[rel]; ok {
		return ents
	}
	ents, err := r.list(rel)
	if errors.Is(err, fs.ErrPermission) && rel != "." {
		_ = r.root.Chmod(rel, 0o700)
		ents, err = r.list(rel)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.errs = append(r.errs, fmt.Errorf("%s cannot be read: %w", rel, err))
	}
	r.listed[rel] = ents
	return ents
}

// note is what the remover did, as Done reports it: nil when nothing.
func (r *remover) note() error {
	if len(r.removed) == 0 && len(r.errs) == 0 {
		return nil
	}
	msg := ""
	if len(r.removed) > 0 {
		msg = "removed " + strings.Join(r.removed, ", ")
	}
	if len(r.errs) > 0 {
		if msg != "" {
			msg += "; "
		}
		var es []string
		for _, e := range r.errs {
			es = append(es, e.Error())
		}
		msg += "NOT removed: " + strings.Join(es, "; ")
	}
	return &CreatedError{msg: msg}
}
