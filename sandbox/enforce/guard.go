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
// whose name guarded reports protected, and the paths of p.GuardPaths
// below it, that were not there when the call started (p.GuardKeep; the protected and hidden paths, whose mounts
// kept them; AbsentKeep). Each directory is read once, beneath the
// working directory only (os.Root), and no link is followed: a guarded
// directory is reached through plain directories or not at all (one it
// moved away or removed has nothing of the host's in it to guard). A
// link the process put at a guarded directory's path, or in place of a
// kept entry (a .cargo that was a directory, or a link with another
// target: p.GuardLinks), is removed as a link, since a tool run there
// would read what it planted behind it.
func removeGuarded(p Profile, guarded func(string) bool) error {
	if len(p.GuardDirs) == 0 || guarded == nil {
		return nil
	}
	root, err := os.OpenRoot(p.Cwd)
	if err != nil {
		return created(nil, "NOT removed", []string{"the working directory cannot be checked: " + err.Error()})
	}
	defer root.Close()
	r := remover{root: root, listed: map[string][]os.DirEntry{}, keep: map[string]bool{}}
	// mounted are the read-only and masked paths: nothing is made in
	// them, so they are not read.
	mounted := map[string]bool{}
	for i, k := range [][]string{p.Protected, p.Hidden, p.GuardKeep, p.AbsentKeep} {
		for _, q := range k {
			if rel, err := filepath.Rel(p.Cwd, q); err == nil {
				r.keep[rel] = true
				mounted[rel] = mounted[rel] || i < 2
			}
		}
	}
	// The paths of several components, by their first.
	below := map[string][][]string{}
	for _, g := range p.GuardPaths {
		comps := strings.Split(g, "/")
		below[comps[0]] = append(below[comps[0]], comps[1:])
	}
	// drop removes the link at rel once (a kept entry can be a guarded
	// directory too).
	dropped := map[string]bool{}
	drop := func(rel string) {
		if !dropped[rel] {
			dropped[rel] = true
			r.removeAll(rel)
		}
	}
	// relinked reports whether the entry e at the kept path q is a link
	// that was not there, to the same target, when the call started.
	relinked := func(q string, e fs.DirEntry) bool {
		if e.Type()&fs.ModeSymlink == 0 || mounted[q] {
			return false
		}
		was, ok := p.GuardLinks[filepath.Join(p.Cwd, q)]
		now, err := r.root.Readlink(q)
		return !ok || err != nil || now != was
	}
	// descend removes what matches comps beneath the directory rel (one
	// the process made, or one that was there), following no link.
	var descend func(rel string, comps []string)
	// step handles the entry e at q, which matched the component before
	// rest (none: q is a protected path itself). It reports whether q
	// was removed.
	step := func(q string, e fs.DirEntry, rest []string) bool {
		switch {
		case r.keep[q] && relinked(q, e):
			drop(q) // a link put in its place
			return true
		case r.keep[q]:
			if len(rest) > 0 && e.IsDir() {
				descend(q, rest)
			}
		case len(rest) == 0 || e.Type()&fs.ModeSymlink != 0:
			drop(q) // made, or a link made where a directory of it goes
			return true
		case e.IsDir():
			descend(q, rest)
		}
		return false
	}
	descend = func(rel string, comps []string) {
		if mounted[rel] {
			return
		}
		for _, e := range r.entries(rel) {
			if strings.EqualFold(e.Name(), comps[0]) {
				step(filepath.Join(rel, e.Name()), e, comps[1:])
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
	// linkAt reports whether the entry at rel, in a plain directory, is a
	// link.
	linkAt := func(rel string) bool {
		parent := filepath.Dir(rel)
		if !isPlain(parent) {
			return false
		}
		for _, e := range r.entries(parent) {
			if e.Name() == filepath.Base(rel) {
				return e.Type()&fs.ModeSymlink != 0
			}
		}
		return false
	}
	for _, d := range p.GuardDirs {
		rel, err := filepath.Rel(p.Cwd, d)
		if err != nil || strings.HasPrefix(rel, "..") || mounted[rel] {
			continue
		}
		if rel != "." && linkAt(rel) {
			// A directory when the plan walked it (the walk follows
			// no link): this one the process put in its place.
			drop(rel)
			continue
		}
		if !isPlain(rel) {
			continue
		}
		for _, e := range r.entries(rel) {
			q := filepath.Join(rel, e.Name())
			if guarded(e.Name()) && !r.keep[q] {
				drop(q)
				continue
			}
			for _, rest := range below[strings.ToLower(e.Name())] {
				if step(q, e, rest) {
					break // a link, removed
				}
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
	var notes, errs []string
	if len(r.removed) > 0 {
		// Once each: a link where a directory goes is found again
		// for each absent path beneath it (.mvn/jvm.config …).
		var once []string
		seen := map[string]bool{}
		for _, q := range r.removed {
			if !seen[q] {
				seen[q] = true
				once = append(once, q)
			}
		}
		for i, q := range once {
			once[i] = quote(q) // a name can hold a newline or an escape
		}
		notes = []string{"removed " + strings.Join(once, ", ")}
	}
	for _, e := range r.errs {
		errs = append(errs, e.Error())
	}
	return created(notes, "NOT removed", errs)
}
