package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/sandbox/enforce"
)

// A workspace call may write git's objects, refs and index, so that git
// add and git commit work. But what a ref or the index points at is a
// checkout waiting to happen: a commit whose .githooks/post-checkout is
// new runs it on the host at the next git checkout, a staged .envrc lands
// at the next git checkout -- . (the sixth review). So the refs, the
// reflogs and the index of each known git directory are read before the
// call, and after it every pointer that changed is followed: a commit (or
// an index entry) that would write a protected path with content that is
// neither what HEAD had nor what is on disk puts the refs back as they
// were, and the index entry back as HEAD has it.

// Bounds on what a snapshot reads: a repository past them fails the call
// before it starts, as one that cannot be checked.
const (
	maxRefBytes = 64 << 20
	maxRefFiles = 200_000
	maxBlobRead = 16 << 20
)

// gitState is what a known git directory's pointers held when a call
// started, or after it ended.
type gitState struct {
	dir      string            // the git directory
	top      string            // the call's working directory: all the command could write
	worktree string            // its working tree; "" for a bare repository
	files    map[string][]byte // pointers: top-level files, refs/**, reftable/**, by path relative to dir
	logs     map[string]logState
	// odd are entries of those places that are not regular files (a
	// symbolic link, a device, a pipe …), with what they are; git may
	// read a ref through a link, so one is never let through unread.
	odd map[string]oddEntry
	// unread are regular files past the bounds, read neither before nor
	// after: any of them new or changed is undone.
	unread map[string]bool
	head   string // HEAD's commit, "" when unborn or unreadable
	index  string // enforce.IndexStamp
	// wtIndex are the index stamps of the linked worktrees (worktrees/X),
	// by name: git checkout -- . in one writes from its own index.
	wtIndex map[string]string
	taken   time.Time // when it was read
}

// logState is a reflog's length and the hash of its content: reflogs
// grow by appending, and only what was appended is followed.
type logState struct {
	size int64
	sum  [32]byte
}

// snapshotGit reads the pointers of the profile's known git directories.
func snapshotGit(p Profile) ([]*gitState, error) {
	var out []*gitState
	for _, g := range p.GitDirs {
		if fi, err := os.Lstat(g); err != nil || !fi.IsDir() {
			continue // a gitdir file: its git directory is followed where it is known
		}
		s, err := readGitState(g, p.Cwd)
		if err != nil {
			return nil, fmt.Errorf("%w: reading the refs of %s: %w", ErrSetup, g, err)
		}
		if len(s.unread) > 0 {
			return nil, fmt.Errorf("%w: the refs of %s are past what can be checked (%d files, %d MB of refs)", ErrSetup, g, maxRefFiles, maxRefBytes>>20)
		}
		out = append(out, s)
	}
	return out, nil
}

// notPointers are the top-level files of a git directory that name no
// commit to check out: the index (checked on its own), the configuration
// (read-only in the sandbox) and plain text git writes for a person. They
// are skipped only as regular files: one that is a link or a pipe is odd
// like any other entry (a link as COMMIT_EDITMSG makes the host's next
// git commit write the message wherever it points).
var notPointers = map[string]bool{"index": true, "config": true, "description": true, "COMMIT_EDITMSG": true, "gc.log": true}

// readGitState lists the pointers of the git directory dir and reads them
// within the bounds, never through a link: a link is described instead
// (describeOdd, through top, the call's working directory). It fails only
// when dir itself cannot be read.
func readGitState(dir, top string) (*gitState, error) {
	s := &gitState{dir: dir, top: top, files: map[string][]byte{}, logs: map[string]logState{}, odd: map[string]oddEntry{}, unread: map[string]bool{}, index: enforce.IndexStamp(dir), wtIndex: map[string]string{}, taken: time.Now()}
	if filepath.Base(dir) == ".git" {
		s.worktree = filepath.Dir(dir)
	}
	var topRoot *os.Root
	if top != "" {
		if r, err := os.OpenRoot(top); err == nil {
			topRoot = r
			defer r.Close()
		}
	}
	budget, count := int64(maxRefBytes), 0
	add := func(rel string, d fs.DirEntry, log bool) {
		count++
		path := filepath.Join(dir, rel)
		if !d.Type().IsRegular() {
			s.odd[rel] = describeOdd(topRoot, top, path, d)
			return
		}
		if count > maxRefFiles {
			s.unread[rel] = true
			return
		}
		if log {
			l, err := hashFile(path)
			if err != nil {
				s.unread[rel] = true
				return
			}
			s.logs[rel] = l
			return
		}
		b, err := readPlain(path, budget)
		if err != nil {
			s.unread[rel] = true
			return
		}
		budget -= int64(len(b))
		s.files[rel] = b
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !e.IsDir() && (!notPointers[e.Name()] || !e.Type().IsRegular()) {
			add(e.Name(), e, false)
		}
	}
	walkPointers(dir, "", add)
	// A link as worktrees is odd (added above, as every top-level entry
	// that is not a directory) and not listed: what it points at is not
	// this repository's.
	var wts []os.DirEntry
	if fi, err := os.Lstat(filepath.Join(dir, "worktrees")); err == nil && fi.IsDir() {
		wts, _ = os.ReadDir(filepath.Join(dir, "worktrees"))
	}
	for _, e := range wts {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join("worktrees", e.Name())
		s.wtIndex[e.Name()] = enforce.IndexStamp(filepath.Join(dir, sub))
		inner, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, f := range inner {
			plain := notPointers[f.Name()] || f.Name() == "gitdir" || f.Name() == "commondir"
			if !f.IsDir() && (!plain || !f.Type().IsRegular()) {
				add(filepath.Join(sub, f.Name()), f, false)
			}
		}
		walkPointers(dir, sub, add)
	}
	s.head = resolveHead(s.files, "HEAD")
	return s, nil
}

// walkPointers calls add for each entry under refs/, logs/ and reftable/
// of the git directory dir (or of one of its worktrees, sub), without
// following a link. Lock files are skipped; what cannot be listed is
// added as odd.
func walkPointers(dir, sub string, add func(rel string, d fs.DirEntry, log bool)) {
	for _, tree := range []string{"refs", "logs", "reftable"} {
		root := filepath.Join(dir, sub, tree)
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(dir, path)
			switch {
			case err != nil && errors.Is(err, fs.ErrNotExist) && path == root:
				return nil
			case err != nil:
				if d != nil {
					add(rel, d, false) // unlistable: odd
				}
				return nil
			case d.IsDir():
				if path != root && d.Type()&fs.ModeSymlink != 0 {
					add(rel, d, false)
				}
				return nil
			case strings.HasSuffix(d.Name(), ".lock"):
				return nil
			}
			add(rel, d, tree == "logs")
			return nil
		})
	}
}

// oddEntry is what a non-regular entry is (what, which a note shows) and,
// for a link, the digest of what it leads to (sum, compared only: a
// digest of a short secret the sandbox masks, a hard link to a key in the
// tree, would let the model test guesses of it).
type oddEntry struct{ what, sum string }

// describeOdd says what a non-regular entry is: its type, or a link's
// target and, when that leads to a regular file beneath top (the call's
// working directory, all the command could change), a digest of its first
// 4096 bytes: a ref git reads through a link moves when the file it points
// at changes. The file is opened through top only (os.Root: no link out
// of it is followed) and without waiting (a pipe or a device is not
// read); its content is never kept.
func describeOdd(top *os.Root, topDir, path string, d fs.DirEntry) oddEntry {
	if d.Type()&fs.ModeSymlink == 0 {
		return oddEntry{what: d.Type().String()}
	}
	t, err := os.Readlink(path)
	if err != nil {
		return oddEntry{what: "link"}
	}
	sum, _ := linkedDigest(top, topDir, path)
	return oddEntry{what: "link to " + quote(t), sum: sum}
}

// linkedDigest is the sha256 of the first 4096 bytes of the regular file
// the link at path leads to, when it is beneath top.
func linkedDigest(top *os.Root, topDir, path string) (string, bool) {
	if top == nil {
		return "", false
	}
	rel, err := filepath.Rel(topDir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	f, err := top.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, 4096)); err != nil {
		return "", false
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// maxLogBytes bounds one reflog: a larger one (a sparse file can claim
// terabytes) is not read, and counts as past what can be checked.
const maxLogBytes = 256 << 20

// hashFile reads a reflog's length and hash, when it is a regular file of
// at most maxLogBytes.
func hashFile(path string) (logState, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return logState{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return logState{}, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxLogBytes {
		return logState{}, fmt.Errorf("%s: not a regular file of at most %d MB", path, maxLogBytes>>20)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxLogBytes+1))
	if err != nil {
		return logState{}, err
	}
	if n > maxLogBytes {
		return logState{}, fmt.Errorf("%s: more than %d MB", path, maxLogBytes>>20)
	}
	var l logState
	l.size = n
	copy(l.sum[:], h.Sum(nil))
	return l, nil
}

// readPlain reads a regular file without following a link, up to limit
// bytes.
func readPlain(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than the refs' bound", path)
	}
	return b, nil
}

// oidPattern finds object ids as git reads them: 40 or 64 hex digits, in
// either case (git's parse_oid_hex takes upper case too).
var oidPattern = regexp.MustCompile(`(?i)\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b`)

// ids returns the object ids in b, lower case.
func ids(b []byte) []string {
	found := oidPattern.FindAllString(string(b), -1)
	out := found[:0]
	for _, id := range found {
		if strings.Trim(id, "0") != "" { // the null id: no object (a ref made or deleted)
			out = append(out, strings.ToLower(id))
		}
	}
	return out
}

// resolveHead follows a symbolic ref through the loose refs and
// packed-refs to a commit id, "" when it cannot.
func resolveHead(files map[string][]byte, name string) string {
	for range 5 {
		b, ok := files[name]
		if !ok {
			return packedRef(files["packed-refs"], name)
		}
		line := strings.TrimSpace(string(b))
		target, sym := strings.CutPrefix(line, "ref:")
		if !sym {
			if found := ids([]byte(line)); len(found) > 0 {
				return found[0]
			}
			return ""
		}
		name = filepath.FromSlash(strings.TrimSpace(target))
	}
	return ""
}

func packedRef(packed []byte, name string) string {
	for line := range strings.SplitSeq(string(packed), "\n") {
		id, ref, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && filepath.FromSlash(ref) == name {
			return strings.ToLower(id)
		}
	}
	return ""
}

// checkGitRefs follows what changed in each git directory since its
// snapshot, puts the refs back where a change would check a protected path
// out, and says what it did.
func checkGitRefs(states []*gitState, protected func(string) bool) (notes, errs []string) {
	for _, s := range states {
		n, e := s.check(protected)
		notes, errs = append(notes, n...), append(errs, e...)
	}
	return notes, errs
}

func (s *gitState) check(protected func(string) bool) (notes, errs []string) {
	notes, errs = s.checkObjects()
	n, e := s.checkPointers(protected)
	return append(notes, n...), append(errs, e...)
}

func (s *gitState) checkPointers(protected func(string) bool) (notes, errs []string) {
	now, err := readGitState(s.dir, s.top)
	if err != nil {
		return nil, []string{"the git directory " + quote(s.dir) + " could not be read after the call to check its refs: " + err.Error()}
	}
	for rel := range now.unread {
		return s.rollback(now, quote(filepath.ToSlash(rel))+" is past what can be checked")
	}
	for rel, d := range now.odd {
		if s.odd[rel] != d {
			return s.rollback(now, quote(filepath.ToSlash(rel))+" is not a plain file ("+d.what+"), which git may read a ref through")
		}
	}
	known := map[string]bool{}
	for _, b := range s.files {
		for _, id := range ids(b) {
			known[id] = true
		}
	}
	var fresh []string
	seen := map[string]bool{}
	collect := func(b []byte) {
		for _, id := range ids(b) {
			if !known[id] && !seen[id] {
				seen[id] = true
				fresh = append(fresh, id)
			}
		}
	}
	for rel, b := range now.files {
		if old, ok := s.files[rel]; ok && bytes.Equal(old, b) {
			continue
		}
		slash := filepath.ToSlash(rel)
		switch {
		case strings.HasPrefix(slash, "reftable/"):
			// Binary tables: what they point at cannot be followed
			// here yet, so a change to them is undone.
			return s.rollback(now, "git's reftable changed, which custom-agent cannot follow yet")
		case strings.HasPrefix(slash, "refs/replace/"):
			// git substitutes the object a replace ref names for
			// another, anywhere in a tree: not a commit to diff.
			return s.rollback(now, quote(slash)+" replaces an object, which git would substitute in every checkout")
		}
		collect(b)
	}
	for rel, l := range now.logs {
		if old, ok := s.logs[rel]; ok && old == l {
			continue
		}
		b, err := readPlain(filepath.Join(s.dir, rel), maxRefBytes)
		if err != nil {
			return s.rollback(now, "its reflog "+quote(filepath.ToSlash(rel))+" could not be read: "+err.Error())
		}
		if old, ok := s.logs[rel]; ok && int64(len(b)) >= old.size && sha256.Sum256(b[:old.size]) == old.sum {
			b = b[old.size:] // appended to: only the new entries
		}
		collect(b)
	}
	slices.Sort(fresh)
	if len(fresh) > 0 {
		if why := s.follow(fresh, protected); why != "" {
			return s.rollback(now, why)
		}
	}
	if now.index != s.index {
		n, e := s.checkIndex("index", protected)
		notes, errs = append(notes, n...), append(errs, e...)
	}
	for name, stamp := range now.wtIndex {
		if s.wtIndex[name] == stamp {
			continue
		}
		// A linked worktree: its own HEAD, and its own working tree,
		// which its gitdir file names.
		w := *s
		w.head = resolveHead(now.files, filepath.Join("worktrees", name, "HEAD"))
		if old := resolveHead(s.files, filepath.Join("worktrees", name, "HEAD")); old != "" {
			w.head = old
		}
		if b, err := readPlain(filepath.Join(s.dir, "worktrees", name, "gitdir"), 4096); err == nil {
			if g := strings.TrimSpace(string(b)); filepath.IsAbs(g) {
				w.worktree = filepath.Dir(g)
			}
		}
		n, e := w.checkIndex(filepath.Join("worktrees", name, "index"), protected)
		notes, errs = append(notes, n...), append(errs, e...)
	}
	return notes, errs
}

// follow reads each new commit a pointer names, and says why one would
// check a protected path out, or "" when none would.
func (s *gitState) follow(ids []string, protected func(string) bool) string {
	st := filesystem.NewStorage(osfs.New(s.dir), cache.NewObjectLRUDefault())
	base, err := s.tree(st, s.head)
	if err != nil {
		return "HEAD's commit could not be read to compare with: " + err.Error()
	}
	for _, id := range ids {
		t, err := s.tree(st, id)
		switch {
		case errors.Is(err, errBlob):
			continue // a file, not something to check out
		case errors.Is(err, plumbing.ErrObjectNotFound):
			// Made later, it would be checked out unchecked.
			return fmt.Sprintf("%s points at %s, which is not in the repository", s.namesOf(id), id[:12])
		case err != nil:
			return fmt.Sprintf("%s points at %s, which could not be read: %v", s.namesOf(id), id[:12], err)
		}
		changes, err := object.DiffTree(base, t)
		if err != nil {
			return fmt.Sprintf("the commit %s could not be compared with HEAD: %v", id, err)
		}
		for _, c := range changes {
			if c.To.Name == "" {
				continue // a deletion writes nothing
			}
			if s.planted(c.To.Name, c.To.TreeEntry.Mode, c.To.TreeEntry.Hash, protected) {
				return fmt.Sprintf("%s points at %s, whose %s differs from HEAD and from the file on disk; checking it out would write a protected path", s.namesOf(id), id[:12], quote(c.To.Name))
			}
		}
	}
	return ""
}

var errBlob = errors.New("a blob")

// tree returns the tree a commit, tag or tree id names; nil for "".
func (s *gitState) tree(st *filesystem.Storage, id string) (*object.Tree, error) {
	if id == "" {
		return nil, nil
	}
	h := plumbing.NewHash(id)
	for range 10 {
		o, err := st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, err
		}
		switch o.Type() {
		case plumbing.CommitObject:
			c, err := object.DecodeCommit(st, o)
			if err != nil {
				return nil, err
			}
			return c.Tree()
		case plumbing.TreeObject:
			return object.DecodeTree(st, o)
		case plumbing.TagObject:
			t, err := object.DecodeTag(st, o)
			if err != nil {
				return nil, err
			}
			h = t.Target
		case plumbing.BlobObject:
			return nil, errBlob
		default:
			return nil, fmt.Errorf("an object of type %s", o.Type())
		}
	}
	return nil, errors.New("a chain of more than 10 tags")
}

// namesOf names the pointers that hold id, for the note.
func (s *gitState) namesOf(id string) string {
	now, err := readGitState(s.dir, s.top)
	if err != nil {
		return "a ref"
	}
	var names []string
	for rel, b := range now.files {
		if bytes.Contains(b, []byte(id)) {
			names = append(names, filepath.ToSlash(rel))
		}
	}
	for rel := range now.logs {
		if b, err := readPlain(filepath.Join(s.dir, rel), maxRefBytes); err == nil && bytes.Contains(b, []byte(id)) {
			names = append(names, filepath.ToSlash(rel))
		}
	}
	if len(names) == 0 {
		return "a ref"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// planted reports whether an entry at a protected path would write
// something that is not on disk now: a checkout of it would plant it.
func (s *gitState) planted(name string, mode filemode.FileMode, h plumbing.Hash, protected func(string) bool) bool {
	if s.worktree == "" {
		return protected(filepath.Join(s.dir, filepath.FromSlash(name)))
	}
	path := filepath.Join(s.worktree, filepath.FromSlash(name))
	if !protected(path) {
		return false
	}
	return !onDisk(path, mode, h)
}

// onDisk reports whether path holds what a tree entry would write there.
func onDisk(path string, mode filemode.FileMode, h plumbing.Hash) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	var content []byte
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if mode != filemode.Symlink {
			return false
		}
		t, err := os.Readlink(path)
		if err != nil {
			return false
		}
		content = []byte(t)
	case fi.Mode().IsRegular():
		want := filemode.Regular
		if fi.Mode()&0o100 != 0 {
			want = filemode.Executable
		}
		if mode != want || fi.Size() > maxBlobRead {
			return false
		}
		if content, err = readPlain(path, maxBlobRead); err != nil {
			return false
		}
	default:
		return false
	}
	return plumbing.ComputeHash(plumbing.BlobObject, content) == h
}

// rollback puts the pointers back as the snapshot had them: the refs and
// HEADs written back, the new ones removed, the reflogs cut to their old
// length, now being what the call left. Every change is made beneath the
// git directory (os.Root) and without following a link: a link the
// command put where a directory of refs/ was is removed as a link, and
// what it points at is left alone. A directory (or file) the command
// made read-only is made writable for the change and gets its mode back
// (enforce.WithWritableParent).
func (s *gitState) rollback(now *gitState, why string) (notes, errs []string) {
	msg := fmt.Sprintf("put the refs of %s back as they were before the call: %s", quote(s.dir), why)
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, []string{msg + "; but " + err.Error()}
	}
	defer root.Close()
	var failed []string
	fail := func(err error) {
		if err != nil {
			failed = append(failed, err.Error())
		}
	}
	// What the call made: removed first, links and odd entries included.
	for rel := range now.odd {
		if s.odd[rel] != now.odd[rel] {
			fail(removeIn(root, rel))
		}
	}
	for rel := range now.unread {
		fail(removeIn(root, rel))
	}
	for rel := range now.files {
		if _, ok := s.files[rel]; !ok {
			fail(removeIn(root, rel))
		}
	}
	for rel, l := range now.logs {
		old, ok := s.logs[rel]
		switch {
		case ok && old == l:
		case ok && l.size >= old.size:
			fail(truncateIn(root, rel, old.size))
		default: // new, or rewritten: what it held cannot be told apart
			fail(removeIn(root, rel))
		}
	}
	// What the snapshot held, written back where it changed.
	for rel, b := range s.files {
		if cur, ok := now.files[rel]; ok && bytes.Equal(cur, b) {
			continue
		}
		fail(writeIn(root, rel, b))
	}
	if len(failed) > 0 {
		return nil, []string{msg + "; but " + strings.Join(failed, "; ")}
	}
	return []string{msg}, nil
}

// removeIn removes the entry rel beneath root, its directory made
// writable for the time if the command made it read-only.
func removeIn(root *os.Root, rel string) error {
	return enforce.WithWritableParent(root, rel, func() error { return root.Remove(rel) })
}

// writeIn writes a file beneath root, making each directory on the way a
// real one: a link or a file where a directory should be is removed
// first, and so is whatever stands at the file's own name. A directory
// the command made read-only is made writable for the time of the
// change, and a file it made read-only is replaced.
func writeIn(root *os.Root, rel string, b []byte) error {
	parts := strings.Split(rel, string(filepath.Separator))
	for i := 1; i < len(parts); i++ {
		dir := filepath.Join(parts[:i]...)
		fi, err := root.Lstat(dir)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			if err := removeIn(root, dir); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := enforce.WithWritableParent(root, dir, func() error { return root.Mkdir(dir, 0o755) }); err != nil {
			return err
		}
	}
	if fi, err := root.Lstat(rel); err == nil && !fi.Mode().IsRegular() {
		if err := enforce.WithWritableParent(root, rel, func() error { return root.RemoveAll(rel) }); err != nil {
			return err
		}
	}
	return enforce.WithWritableParent(root, rel, func() error {
		err := root.WriteFile(rel, b, 0o644)
		if errors.Is(err, fs.ErrPermission) {
			// Made read-only: replaced (when its directory lets it).
			if rerr := root.Remove(rel); rerr == nil {
				err = root.WriteFile(rel, b, 0o644)
			}
		}
		return err
	})
}

// truncateIn cuts a regular file beneath root to size; one the command
// made read-only is made writable for the time.
func truncateIn(root *os.Root, rel string, size int64) error {
	fi, err := root.Lstat(rel)
	if err != nil || !fi.Mode().IsRegular() {
		return removeIn(root, rel)
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrPermission) {
		mode := fi.Mode() & fs.ModePerm
		if cerr := root.Chmod(rel, mode|0o200); cerr == nil {
			f, err = root.OpenFile(rel, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
			_ = root.Chmod(rel, mode) // the open file stays writable
		}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(size)
}

// checkIndex reads the index the call changed: an entry at a protected
// path that is neither on disk nor in HEAD is set back to HEAD's (or
// dropped when HEAD has none). An index that cannot be read is put aside.
func (s *gitState) checkIndex(rel string, protected func(string) bool) (notes, errs []string) {
	path := filepath.Join(s.dir, rel)
	b, err := readPlain(path, 1<<30)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return s.putIndexAside(path, "it could not be read: "+err.Error())
	}
	var idx index.Index
	if err := index.NewDecoder(bytes.NewReader(b)).Decode(&idx); err != nil {
		return s.putIndexAside(path, "it could not be read: "+err.Error())
	}
	st := filesystem.NewStorage(osfs.New(s.dir), cache.NewObjectLRUDefault())
	base, err := s.tree(st, s.head)
	if err != nil {
		return s.putIndexAside(path, "HEAD's commit could not be read to compare with: "+err.Error())
	}
	var fixed []string
	kept := idx.Entries[:0]
	for _, e := range idx.Entries {
		if !s.planted(e.Name, e.Mode, e.Hash, protected) {
			kept = append(kept, e)
			continue
		}
		if base != nil {
			if te, err := base.FindEntry(e.Name); err == nil && te.Mode == e.Mode && te.Hash == e.Hash {
				kept = append(kept, e)
				continue
			} else if err == nil {
				fixed = append(fixed, fmt.Sprintf("%s (staged as %s, set back to HEAD's)", quote(e.Name), e.Hash.String()[:12]))
				e.Mode, e.Hash = te.Mode, te.Hash
				kept = append(kept, e)
				continue
			}
		}
		fixed = append(fixed, fmt.Sprintf("%s (staged as %s, unstaged)", quote(e.Name), e.Hash.String()[:12]))
	}
	if len(fixed) == 0 {
		return nil, nil
	}
	idx.Entries = kept
	idx.Cache, idx.ResolveUndo, idx.EndOfIndexEntry = nil, nil, nil
	var out bytes.Buffer
	if err := index.NewEncoder(&out).Encode(&idx); err != nil {
		return s.putIndexAside(path, "it stages a protected path ("+strings.Join(fixed, ", ")+") and could not be rewritten: "+err.Error())
	}
	tmp := path + ".custom-agent-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
		return nil, []string{"the index of " + quote(s.dir) + " stages a protected path and could not be rewritten: " + err.Error()}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, []string{"the index of " + quote(s.dir) + " stages a protected path and could not be rewritten: " + err.Error()}
	}
	return []string{"the index of " + quote(s.dir) + " staged a protected path with content neither on disk nor in HEAD, which git checkout would write: " + strings.Join(fixed, ", ")}, nil
}

func (s *gitState) putIndexAside(path, why string) (notes, errs []string) {
	aside := path + ".put-aside-by-custom-agent-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := os.Rename(path, aside); err != nil {
		return nil, []string{"the index of " + quote(s.dir) + " could not be checked (" + why + ") nor put aside: " + err.Error()}
	}
	return []string{"put the index of " + quote(s.dir) + " aside as " + quote(filepath.Base(aside)) + ": " + why + " (git now sees every file as untracked; rebuild it with git reset, which reads HEAD: moving the old one back would stage what it held)"}, nil
}

// protectedIn returns the test of a protected path for a profile: a path
// the profile keeps read-only or guards while absent, or one pathrisk
// protects from writes.
func protectedIn(p Profile, home string) func(string) bool {
	env := pathrisk.Env{Cwd: p.Cwd, Home: home}
	return func(path string) bool {
		for _, q := range slices.Concat(p.Protected, p.Absent) {
			if path == q || strings.HasPrefix(path, q+string(filepath.Separator)) {
				return true
			}
		}
		return pathrisk.Protected(pathrisk.PathFacts{Canonical: path, Write: true}, env)
	}
}

func quote(s string) string { return strconv.Quote(s) }
