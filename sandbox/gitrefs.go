package sandbox

import (
	"bytes"
	"crypto/sha256"
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
// started.
type gitState struct {
	dir      string            // the git directory
	worktree string            // its working tree; "" for a bare repository
	files    map[string][]byte // refs/**, packed-refs, *HEAD, by path relative to dir
	logs     map[string]logState
	head     string // HEAD's commit, "" when unborn or unreadable
	index    string // enforce.IndexStamp
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
		s, err := readGitState(g)
		if err != nil {
			return nil, fmt.Errorf("%w: reading the refs of %s: %w", ErrSetup, g, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// pointerName reports whether a file at the top of a git directory is one
// of git's pointers (HEAD, ORIG_HEAD, FETCH_HEAD …) or packed-refs.
func pointerName(name string) bool {
	if name == "packed-refs" {
		return true
	}
	if !strings.HasSuffix(name, "HEAD") {
		return false
	}
	for _, r := range name {
		if (r < 'A' || r > 'Z') && r != '_' {
			return false
		}
	}
	return true
}

func readGitState(dir string) (*gitState, error) {
	s := &gitState{dir: dir, files: map[string][]byte{}, logs: map[string]logState{}, index: enforce.IndexStamp(dir)}
	if filepath.Base(dir) == ".git" {
		s.worktree = filepath.Dir(dir)
	}
	total, count := int64(0), 0
	add := func(rel string, log bool) error {
		count++
		if count > maxRefFiles {
			return fmt.Errorf("more than %d ref files", maxRefFiles)
		}
		b, err := readPlain(filepath.Join(dir, rel), maxRefBytes-total)
		if err != nil {
			return err
		}
		total += int64(len(b))
		if log {
			s.logs[rel] = logState{size: int64(len(b)), sum: sha256.Sum256(b)}
		} else {
			s.files[rel] = b
		}
		return nil
	}
	if err := walkPointers(dir, "", add); err != nil {
		return nil, err
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "worktrees"))
	for _, e := range ents {
		if e.IsDir() {
			if err := walkPointers(dir, filepath.Join("worktrees", e.Name()), add); err != nil {
				return nil, err
			}
		}
	}
	s.head = resolveHead(s.files, "HEAD")
	return s, nil
}

// walkPointers calls add for each pointer file of the git directory dir
// (or of one of its worktrees, sub): the top-level pointers, and the
// files under refs/ and logs/. Lock files are skipped.
func walkPointers(dir, sub string, add func(rel string, log bool) error) error {
	ents, err := os.ReadDir(filepath.Join(dir, sub))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type().IsRegular() && pointerName(e.Name()) {
			if err := add(filepath.Join(sub, e.Name()), false); err != nil {
				return err
			}
		}
	}
	for _, tree := range []string{"refs", "logs", "reftable"} {
		root := filepath.Join(dir, sub, tree)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case errors.Is(err, fs.ErrNotExist) && path == root:
				return nil
			case err != nil:
				return err
			case !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".lock"):
				return nil
			}
			rel, _ := filepath.Rel(dir, path)
			return add(rel, tree == "logs")
		})
		if err != nil {
			return err
		}
	}
	return nil
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

var oidPattern = regexp.MustCompile(`\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b`)

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
			return oidPattern.FindString(line)
		}
		name = filepath.FromSlash(strings.TrimSpace(target))
	}
	return ""
}

func packedRef(packed []byte, name string) string {
	for line := range strings.SplitSeq(string(packed), "\n") {
		id, ref, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && filepath.FromSlash(ref) == name {
			return id
		}
	}
	return ""
}

// checkGitRefs follows what changed in each git directory since its
// snapshot, puts the refs back where a change would check a protected path
// out, and says what it did ("" when nothing).
func checkGitRefs(states []*gitState, protected func(string) bool) (notes, errs []string) {
	for _, s := range states {
		n, e := s.check(protected)
		notes, errs = append(notes, n...), append(errs, e...)
	}
	return notes, errs
}

func (s *gitState) check(protected func(string) bool) (notes, errs []string) {
	now, err := readGitState(s.dir)
	if err != nil {
		// Unreadable after the call: nothing can be followed, so the
		// refs the snapshot holds are put back.
		return s.rollback(now, "its refs could not be read after the call: "+err.Error())
	}
	known := map[string]bool{}
	for _, b := range s.files {
		for _, id := range oidPattern.FindAllString(string(b), -1) {
			known[id] = true
		}
	}
	var fresh []string
	seen := map[string]bool{}
	collect := func(b []byte) {
		for _, id := range oidPattern.FindAllString(string(b), -1) {
			if !known[id] && !seen[id] {
				seen[id] = true
				fresh = append(fresh, id)
			}
		}
	}
	for rel, b := range now.files {
		if old, ok := s.files[rel]; !ok || !bytes.Equal(old, b) {
			if strings.HasPrefix(rel, "reftable"+string(filepath.Separator)) {
				// Binary tables: what they point at cannot be followed
				// here yet, so a change to them is undone.
				return s.rollback(now, "git's reftable changed, which custom-agent cannot follow yet")
			}
			collect(b)
		}
	}
	for rel, l := range now.logs {
		if old, ok := s.logs[rel]; ok && old == l {
			continue
		}
		b, err := readPlain(filepath.Join(s.dir, rel), maxRefBytes)
		if err != nil {
			return s.rollback(now, "its reflog "+rel+" could not be read: "+err.Error())
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
		return s.checkIndex(protected)
	}
	return nil, nil
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
		case errors.Is(err, plumbing.ErrObjectNotFound), errors.Is(err, errNotATree):
			continue // nothing there to check out
		case err != nil:
			return fmt.Sprintf("the commit %s could not be read: %v", id, err)
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

var errNotATree = errors.New("not a commit or tree")

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
		default:
			return nil, errNotATree
		}
	}
	return nil, errNotATree
}

// namesOf names the pointers that hold id, for the note.
func (s *gitState) namesOf(id string) string {
	now, err := readGitState(s.dir)
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
// length. now is what the call left (nil when it could not be read).
func (s *gitState) rollback(now *gitState, why string) (notes, errs []string) {
	var failed []string
	for rel, b := range s.files {
		path := filepath.Join(s.dir, rel)
		if now != nil {
			if cur, ok := now.files[rel]; ok && bytes.Equal(cur, b) {
				continue
			}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			failed = append(failed, err.Error())
			continue
		}
		_ = os.RemoveAll(path)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if now != nil {
		for rel := range now.files {
			if _, ok := s.files[rel]; !ok {
				if err := os.Remove(filepath.Join(s.dir, rel)); err != nil {
					failed = append(failed, err.Error())
				}
			}
		}
		for rel, l := range now.logs {
			old, ok := s.logs[rel]
			path := filepath.Join(s.dir, rel)
			switch {
			case ok && old == l:
			case ok && l.size >= old.size:
				if err := os.Truncate(path, old.size); err != nil {
					failed = append(failed, err.Error())
				}
			default: // new, or rewritten: what it held cannot be told apart
				if err := os.Remove(path); err != nil {
					failed = append(failed, err.Error())
				}
			}
		}
	}
	msg := fmt.Sprintf("put the refs of %s back as they were before the call: %s", quote(s.dir), why)
	if len(failed) > 0 {
		return nil, []string{msg + "; but " + strings.Join(failed, "; ")}
	}
	return []string{msg}, nil
}

// checkIndex reads the index the call changed: an entry at a protected
// path that is neither on disk nor in HEAD is set back to HEAD's (or
// dropped when HEAD has none). An index that cannot be read is put aside.
func (s *gitState) checkIndex(protected func(string) bool) (notes, errs []string) {
	path := filepath.Join(s.dir, "index")
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
	return []string{"put the index of " + quote(s.dir) + " aside as " + quote(filepath.Base(aside)) + ": " + why + " (git now sees every file as untracked; move it back once you have looked)"}, nil
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
