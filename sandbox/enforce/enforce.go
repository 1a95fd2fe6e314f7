package enforce

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ErrProtectedCreated is returned by Confined.Done when the process created
// a protected path that did not exist when it started (Profile.Absent):
// the path has been removed.
var ErrProtectedCreated = errors.New("the command created protected paths, which were removed")

// ErrProtectedKept is returned by Confined.Done (a *KeptError) when the
// process created a protected path, or changed git's refs, in a way the
// checks after the call could not undo or could not check: the call
// failed, and what it made may still be there.
var ErrProtectedKept = errors.New("the command created protected paths that could NOT all be removed or put back")

// ErrSetup wraps a failure of the sandbox itself to set up (not of the
// command it was to run).
var ErrSetup = errors.New("the sandbox could not be set up")

// Support is what this machine can enforce.
type Support struct {
	// LandlockABI is the kernel's Landlock ABI version, 0 for none.
	LandlockABI int `json:"landlockAbi"`
	// UserNamespaces is set when an unprivileged process can make user,
	// mount, PID and network namespaces (tried, not guessed).
	UserNamespaces bool `json:"userNamespaces"`
	// Seccomp is set when a seccomp filter could be loaded.
	Seccomp bool `json:"seccomp"`
	// Unavailable says, for a person, why profiles cannot be enforced
	// here; "" when they can.
	Unavailable string `json:"unavailable,omitempty"`
}

// Available reports whether every profile can be enforced.
func (s Support) Available() bool { return s.Unavailable == "" }

// Confined is a command prepared to run in the sandbox. Call Done once it
// has been waited for, or failed to start.
type Confined struct {
	done    func() error
	started bool
	// reported is closed once the helper reported the command's status
	// (code); it is never closed when no report comes.
	reported chan struct{}
	code     int
	status   uint32 // the wait status, as the kernel encodes it
}

// Reported returns a channel closed once the helper reported the
// command's status (ExitCode): every process of the command is gone by
// then, and the helper has closed its stdio, so the command's output ends
// once the caller's own copies are closed (or, for pipe ends a process left
// in flight in a unix socket, once the kernel's socket collector frees
// them, which it does on its own time). The helper itself may not have
// exited yet (its namespaces are torn down at its exit): the caller must
// still wait for it, but need not before using the status. When the helper
// exits without a report (it could not make sure no process was left, or
// it was killed), the channel is never closed, and its wait status is the
// command's, as without the report.
func (c *Confined) Reported() <-chan struct{} {
	if c == nil {
		return nil
	}
	return c.reported
}

// ExitCode returns the reported status as bash reports it: the exit code,
// or 128+N for a command killed by signal N. Only once Reported is closed.
func (c *Confined) ExitCode() int { return c.code }

// Started reports whether the command was started already, by a helper
// started ahead (Pool): cmd.Process is set, and the caller must not Start
// cmd, only Wait for it.
func (c *Confined) Started() bool { return c != nil && c.started }

// Done releases what the sandbox held for the command and returns the
// sandbox's own failure to set up, if it had one (wrapping ErrSetup).
func (c *Confined) Done() error {
	if c == nil || c.done == nil {
		return nil
	}
	d := c.done
	c.done = nil
	return d()
}

// Confine prepares cmd, not yet started, to run under p: its Path must be
// absolute, and its Env, Dir and SysProcAttr are kept (Setpgid included).
// cmd then starts the helper, which sets the sandbox up and starts the
// program. guarded judges the names made in p.GuardDirs during the call
// (removed when it reports true); it may be nil only when there are none.
func Confine(p Profile, cmd *exec.Cmd, guarded func(name string) bool) (*Confined, error) {
	return ConfineThen(p, cmd, guarded, nil)
}

// ConfineThen is Confine with a check of the caller's run after the
// command ended and after the profile's own: the notes it returns join
// the CreatedError Done returns, and its errors are named in it as not
// fixed.
func ConfineThen(p Profile, cmd *exec.Cmd, guarded func(name string) bool, after func() (notes, errs []string)) (*Confined, error) {
	return (*Pool)(nil).ConfineThen(p, cmd, guarded, after)
}

// ConfineThen is the package's ConfineThen with the helpers of pl: when
// one of the profile's kind waits and cmd's start can be handed to it
// (stdio files or nil, no other descriptor, SysProcAttr exactly
// {Setpgid: true}, no Cancel), it starts cmd: Confined.Started then
// reports so, and the caller waits for cmd without starting it. Otherwise
// cmd is prepared as Confine does, for the caller to start. A nil pl
// starts every helper for its call.
func (pl *Pool) ConfineThen(p Profile, cmd *exec.Cmd, guarded func(name string) bool, after func() (notes, errs []string)) (*Confined, error) {
	if !p.Kind.Valid() {
		return nil, fmt.Errorf("%w: no profile", ErrSetup)
	}
	if guarded == nil && len(p.GuardDirs) > 0 {
		return nil, fmt.Errorf("%w: no judge of the names made in the guarded directories", ErrSetup)
	}
	p = p.Refreshed()
	p.started = time.Now()
	c, err := confine(pl, p, cmd, false)
	if err != nil {
		return nil, err
	}
	setup := c.done
	c.done = func() error {
		if err := setup(); err != nil {
			return err
		}
		return afterCall(&p, guarded, after)
	}
	return c, nil
}

// afterCall runs the checks after a call under p, the profile's own and
// then after's. What they undid is a note on the call (*CreatedError);
// what they could not undo or make sure of fails the call (*KeptError):
// it may still be there, and the next plan would take it as the
// project's own.
func afterCall(p *Profile, guarded func(string) bool, after func() (notes, errs []string)) error {
	var err error
	if readable(p.Cwd, p.started) {
		err = created([]string{"made the working directory readable again to check it"}, "", nil)
	}
	err = joinCreated(err, joinCreated(joinCreated(removeCreated(p.Cwd, p.Absent, p.AbsentKeep), removeGuarded(*p, guarded)), checkGit(p)))
	if after != nil {
		notes, errs := after()
		err = joinCreated(err, created(notes, "NOT fixed", errs))
	}
	c, ok := err.(*CreatedError)
	switch {
	case err == nil:
		return nil
	case ok && !c.kept:
		return err
	case ok:
		return &KeptError{msg: c.msg}
	}
	return &KeptError{msg: err.Error()} // not the checks' own note: not sure of anything
}

// removeCreated removes what the process made at the absent protected
// paths: every entry whose name matches in any letter case. It works
// beneath cwd only (os.Root) and never follows a symbolic link: a link the
// process made where a directory of the path should be is removed as a
// link, and what it points to is left alone. It tries every path, and
// names what it could not remove or check.
func removeCreated(cwd string, paths, keep []string) error {
	if len(paths) == 0 {
		return nil
	}
	root, err := os.OpenRoot(cwd)
	if err != nil {
		return created(nil, "NOT removed", []string{"the working directory cannot be checked: " + err.Error()})
	}
	defer root.Close()
	r := remover{root: root, listed: map[string][]os.DirEntry{}, keep: map[string]bool{}}
	for _, k := range keep {
		if rel, err := filepath.Rel(cwd, k); err == nil {
			r.keep[rel] = true
		}
	}
	for _, p := range paths {
		rel, err := filepath.Rel(cwd, p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		r.remove(".", strings.Split(rel, string(filepath.Separator)))
	}
	return r.note()
}

// created makes the CreatedError of notes and of what could not be done
// (errs, after the word failed), nil when there is neither. Every check
// after the call reports through it.
func created(notes []string, failed string, errs []string) error {
	if len(notes) == 0 && len(errs) == 0 {
		return nil
	}
	msg := strings.Join(notes, "; ")
	if len(errs) > 0 {
		if msg != "" {
			msg += "; "
		}
		msg += failed + ": " + strings.Join(errs, "; ")
	}
	return &CreatedError{msg: msg, kept: len(errs) > 0}
}

// CreatedError says what the process made at protected paths and what
// became of it. It is a note on a call that ran, not a failure to run it.
// (Confined.Done returns a *KeptError instead when something could not be
// undone.)
type CreatedError struct {
	msg  string
	kept bool // something was not undone, or not checked
}

func (e *CreatedError) Error() string {
	return ErrProtectedCreated.Error() + ": " + e.msg + " (code that runs later, or the agent's own rules, cannot be planted by a command; write such a file with write_file, which is asked)"
}

// Note is the text for the call's output.
func (e *CreatedError) Note() string { return e.Error() }

func (e *CreatedError) Unwrap() error { return ErrProtectedCreated }

// KeptError says what the process made at protected paths that the checks
// after the call could not remove or put back, or could not check, and
// what they did undo. It fails the call: it has no Note, so that a caller
// which passes notes on with the command's output reports it as the
// call's error, for the model and the person to see.
type KeptError struct{ msg string }

func (e *KeptError) Error() string {
	return ErrProtectedKept.Error() + ": " + e.msg + " (what is left stays in the project, and the next call takes it as the project's own: a person must look before anything there is run or checked out)"
}

func (e *KeptError) Unwrap() error { return ErrProtectedKept }

// remover removes entries beneath a root, reading each directory once.
type remover struct {
	root    *os.Root
	keep    map[string]bool // entries that existed, in another case
	listed  map[string][]os.DirEntry
	removed []string
	errs    []error
}

// remove looks for comps beneath dir (relative to the root).
func (r *remover) remove(dir string, comps []string) {
	ents, ok := r.listed[dir]
	if !ok {
		var err error
		ents, err = r.list(dir)
		if errors.Is(err, fs.ErrPermission) && dir != "." {
			// Made unreadable by the process: made readable again.
			_ = r.root.Chmod(dir, 0o700)
			ents, err = r.list(dir)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.errs = append(r.errs, fmt.Errorf("%q cannot be read: %w", dir, err))
		}
		r.listed[dir] = ents
	}
	for _, e := range ents {
		if !strings.EqualFold(e.Name(), comps[0]) {
			continue
		}
		rel := filepath.Join(dir, e.Name())
		switch {
		case r.keep[rel]:
			// There when the call started (another letter case).
		case len(comps) == 1:
			r.removeAll(rel)
		case e.Type()&fs.ModeSymlink != 0:
			// A link where a directory of the path was: made during
			// the call (the plan skips paths that had one). Only the
			// link goes.
			r.removeAll(rel)
		case e.IsDir():
			r.remove(rel, comps[1:])
		}
	}
}

// list reads the directory rel.
func (r *remover) list(rel string) ([]os.DirEntry, error) {
	f, err := r.root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// removeAll removes rel (a link as a link), making directories writable
// on the way down if it must, and rel's own directory for the time of the
// removal (the process may have made it, or the working directory itself,
// read-only: WithWritableParent).
func (r *remover) removeAll(rel string) {
	err := r.root.RemoveAll(rel)
	if err != nil {
		_ = fs.WalkDir(r.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = r.root.Chmod(p, 0o700)
			}
			return nil
		})
		err = WithWritableParent(r.root, rel, func() error { return r.root.RemoveAll(rel) })
	}
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%q: %w", rel, err))
		return
	}
	r.removed = append(r.removed, rel)
}

// WithWritableParent runs op, which removes or makes the entry rel beneath
// root. When op fails for want of permission (a process may have made
// rel's directory read-only, as a non-root user can: chmod 0555 .), that
// directory is made writable and searchable for its owner, op is run
// again, and the directory gets its mode back. The directory is changed
// only when root reaches it through directories, no link: else, or when
// it cannot be changed (another user's), op's error stands, the chmod's
// joined to it.
func WithWritableParent(root *os.Root, rel string, op func() error) error {
	err := op()
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	parent := filepath.Dir(rel)
	fi, derr := dirIn(root, parent)
	if derr != nil {
		return fmt.Errorf("%w (and its directory: %w)", err, derr)
	}
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if mode&0o300 == 0o300 {
		return err // writable already: the failure is another
	}
	if cerr := root.Chmod(parent, mode|0o300); cerr != nil {
		return fmt.Errorf("%w (and its directory could not be made writable: %w)", err, cerr)
	}
	err = op()
	// Put back as the process left it. Should this fail, the directory
	// stays writable by its owner only, which undoes nothing: not an
	// error of the removal.
	_ = root.Chmod(parent, mode)
	return err
}

// readable makes the directory dir readable and searchable for its owner
// when it is not and its mode changed since started (a process may have
// run chmod 0311 on the working directory, which os.OpenRoot then cannot
// open), and reports whether it did. It stays so, as the remover leaves
// a directory it had to make readable: the next plan must be able to read
// what is there. dir is the host's own path, not the process's; a link
// there is left alone.
func readable(dir string, started time.Time) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if mode&0o500 == 0o500 {
		return false
	}
	if !ChangedSince(fi, started.Add(-time.Second)) {
		return false // as it was before the call: not the process's doing
	}
	return os.Chmod(dir, mode|0o500) == nil
}

// dirIn returns the directory rel beneath root (its own FileInfo, "."
// root itself) when every component of it is a directory: no link is
// followed on the way.
func dirIn(root *os.Root, rel string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	at := ""
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, c)
		var err error
		if fi, err = root.Lstat(at); err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s is not a directory (%v)", at, fi.Mode().Type())
		}
	}
	return fi, nil
}

// Refreshed returns p with the absent paths that exist by now (the agent
// itself wrote .custom-agent/policy.json for an "always allow in this
// project" answer, after the plan) moved to the protected ones, their
// parents pinned: they are guarded by a mount, not removed afterwards.
func (p Profile) Refreshed() Profile {
	var absent, made []string
	// Most absent paths are beneath the working directory itself: each
	// directory is read once, not once per path.
	listed := map[string][]os.DirEntry{}
	for _, a := range p.Absent {
		if real, ok := findFold(p.Cwd, a, listed); ok && !slices.Contains(p.AbsentKeep, real) {
			made = append(made, real)
		} else {
			absent = append(absent, a)
		}
	}
	if len(made) == 0 {
		return p
	}
	p.Absent = absent
	p.Protected = append(slices.Clone(p.Protected), made...)
	p.Pinned = append(slices.Clone(p.Pinned), Pins(p.Cwd, made)...)
	slices.Sort(p.Pinned)
	p.Pinned = slices.Compact(p.Pinned)
	return p
}

// Covered are the directories the sandbox replaces with empty ones: their
// content is private to the host (sockets, other processes' files).
var Covered = []string{"/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm"}

// Pins returns the directories between cwd and each protected path: each
// becomes a mount point of its own, which cannot be renamed or removed, so
// that a process cannot move a protected path's parent aside and make a
// new, unprotected one in its place.
func Pins(cwd string, protected []string) []string {
	var out []string
	for _, q := range protected {
		for d := filepath.Dir(q); d != cwd && within(d, cwd); d = filepath.Dir(d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// within reports whether p is dir or lies beneath it (both clean). It is
// pathrisk.Within, not imported: enforce links no package of ours, so that
// the helper starts before the rest of the binary's packages initialise.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// findFold returns the path beneath cwd whose components match want's in
// any letter case, when no component of it is a symbolic link (a linked
// path is not taken for the protected one: it is removed as a link after
// the call instead). listed keeps each directory's entries as read, nil
// for one that could not be; it may be shared by the calls of one check.
func findFold(cwd, want string, listed map[string][]os.DirEntry) (string, bool) {
	rel, err := filepath.Rel(cwd, want)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", false
	}
	dir := cwd
	for _, comp := range strings.Split(rel, string(filepath.Separator)) {
		ents, seen := listed[dir]
		if !seen {
			ents, err = os.ReadDir(dir)
			if err != nil {
				ents = nil
			}
			listed[dir] = ents
		}
		if ents == nil {
			return "", false
		}
		found := ""
		for _, e := range ents {
			if strings.EqualFold(e.Name(), comp) && e.Type()&fs.ModeSymlink == 0 {
				found = e.Name()
				break
			}
		}
		if found == "" {
			return "", false
		}
		dir = filepath.Join(dir, found)
	}
	return dir, true
}

// joinCreated joins two results of the checks after a call into one note.
func joinCreated(a, b error) error {
	var ca, cb *CreatedError
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case errors.As(a, &ca) && errors.As(b, &cb):
		return &CreatedError{msg: ca.msg + "; " + cb.msg, kept: ca.kept || cb.kept}
	}
	return errors.Join(a, b)
}
