package enforce

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A command in the workspace profile may write git's own files (objects,
// refs, the index), so that git add and git commit work. What git would
// run later on the host is guarded by mounts in the git directories the
// plan knew, and by checkGit after the call for the rest: a git directory
// made during the call, at any depth or as the working directory itself,
// and a known one whose HEAD went missing.

// maxGitConfig bounds the configuration read of a new repository.
const maxGitConfig = 1 << 20

// checkGit looks, after the call, for git directories the plan did not
// know. A new one that could run code on the host (a hook, a configuration
// key outside a short list of plain ones, a pointer elsewhere, anything
// that cannot be read as a plain file) is put aside under a name git does
// not look for. The working directory turned into a bare repository loses
// the HEAD that made it one. A known repository whose HEAD is gone gets it
// back as it was.
func checkGit(p *Profile) error {
	if len(p.Writable) == 0 {
		return nil
	}
	var notes, errs []string
	known := map[string]bool{}
	for _, g := range p.GitDirs {
		known[g] = true
	}
	p.knownSub = map[string]bool{}
	for _, g := range p.GitSubs {
		p.knownSub[g] = true
	}
	for dir, head := range p.GitHeads {
		hp := filepath.Join(dir, "HEAD")
		if validHead(hp) {
			continue
		}
		_ = os.RemoveAll(hp)
		if err := os.WriteFile(hp, []byte(head), 0o644); err != nil {
			errs = append(errs, fmt.Sprintf("%s could not be put back: %v", quote(hp), err))
			continue
		}
		notes = append(notes, "put back "+quote(hp)+", which the command removed or made unreadable to git (git then looks for the repository elsewhere)")
	}
	if !p.CwdGit && LooksLikeGit(p.Cwd) {
		head := filepath.Join(p.Cwd, "HEAD")
		if p.CwdHead {
			errs = append(errs, "the working directory now looks like a git repository (HEAD, objects, refs); its HEAD was there before, so it is left: check "+quote(p.Cwd))
		} else if err := os.Remove(head); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", quote(head), err))
		} else {
			notes = append(notes, "removed "+quote(head)+", which made the working directory a git repository")
		}
		if c := filepath.Join(p.Cwd, "commondir"); !p.CwdGit {
			if _, err := os.Lstat(c); err == nil && os.Remove(c) == nil {
				notes = append(notes, "removed "+quote(c))
			}
		}
	}
	// New submodule and worktree git directories inside a known one:
	// git opens them (git submodule update, a status that recurses).
	for _, g := range p.GitDirs {
		for _, sub := range []string{"modules", "worktrees"} {
			// A link there would point git at whatever it names, and
			// its entries are not this repository's: it is put aside
			// itself, never listed or followed (moving what is behind
			// it would move the files of whatever it names).
			fi, err := os.Lstat(filepath.Join(g, sub))
			if err != nil || !fi.IsDir() {
				if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
					n, e := putAside(g, sub, "a link, which points git at another directory for its "+sub)
					notes, errs = append(notes, n...), append(errs, e...)
				}
				continue
			}
			ents, err := os.ReadDir(filepath.Join(g, sub))
			if err != nil {
				continue
			}
			for _, e := range ents {
				path := filepath.Join(g, sub, e.Name())
				if known[path] || p.knownSub[path] {
					continue
				}
				why := vetGit(path, e)
				if why == "" {
					continue
				}
				n, e := putAside(g, filepath.Join(sub, e.Name()), why)
				notes, errs = append(notes, n...), append(errs, e...)
			}
		}
	}
	hidden := map[string]bool{}
	for _, h := range p.Hidden {
		hidden[h] = true
	}
	// node_modules is walked only when a git index changed: git enters a
	// nested repository there only through a gitlink the index holds.
	walkModules := p.indexChanged()
	var visit fs.WalkDirFunc
	walk := func(root string) {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			return visit(path, d, err)
		})
	}
	retried := map[string]bool{}
	visit = func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// A directory the command made unreadable: git may still
			// reach a repository inside by its path. It is made
			// readable and walked; one that stays closed is put aside.
			if d == nil || !d.IsDir() || retried[path] || hidden[path] {
				return nil
			}
			retried[path] = true
			fi, serr := os.Lstat(path)
			if serr != nil {
				return nil // gone
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Getuid() || !ChangedSince(fi, p.started.Add(-time.Second))) {
				// Not the command's doing: another user's directory, or
				// one nothing changed during the call.
				return nil
			}
			if os.Chmod(path, fi.Mode().Perm()|0o700) == nil {
				if _, rerr := os.ReadDir(path); rerr == nil {
					notes = append(notes, "made "+quote(path)+" readable again to check it")
					walk(path)
					return nil
				}
			}
			aside := path + ".put-aside-by-custom-agent-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			if rerr := os.Rename(path, aside); rerr != nil {
				errs = append(errs, fmt.Sprintf("%s cannot be read to check it: %v", quote(path), rerr))
			} else {
				notes = append(notes, fmt.Sprintf("put %s aside as %s: it cannot be read to check it for a git repository", quote(path), quote(filepath.Base(aside))))
			}
			return nil
		}
		if path == p.Cwd {
			return nil
		}
		if hidden[path] {
			return skip(d) // behind a mask: not the process's to change
		}
		if d.IsDir() && d.Name() == "node_modules" && !walkModules {
			return fs.SkipDir
		}
		isGit := d.Name() == ".git" || d.IsDir() && LooksLikeGit(path)
		if !isGit {
			return nil
		}
		if known[path] {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		why := vetGit(path, d)
		if why == "" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		aside := path + ".put-aside-by-custom-agent-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		if err := os.Rename(path, aside); err != nil {
			errs = append(errs, fmt.Sprintf("the new git directory %s (%s): %v", quote(path), why, err))
		} else {
			notes = append(notes, fmt.Sprintf("put the new git directory %s aside as %s: %s, which git would run on the host", quote(path), quote(filepath.Base(aside)), why))
		}
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	walk(p.Cwd)
	return created(notes, "NOT fixed", errs)
}

// ChangedSince reports whether fi's change time is at or after since, or
// cannot be told: the checks after a call look only at what the call may
// have changed. The change time, unlike the modification time, cannot be
// set back by the process.
func ChangedSince(fi fs.FileInfo, since time.Time) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || !time.Unix(st.Ctim.Sec, st.Ctim.Nsec).Before(since)
}

// putAside moves rel, an entry of the known git directory g that git
// would follow or run, into a new directory of g's own whose name git
// does not look for (a directory, so that the refs check, which reads g's
// top-level files as pointers, takes it for none). It works through g
// (os.Root): no link on the way is followed, and nothing moves out of g.
// A link is moved as a link; what it points at is left alone.
func putAside(g, rel, why string) (notes, errs []string) {
	path := filepath.Join(g, rel)
	fail := func(err error) (notes, errs []string) {
		return nil, []string{fmt.Sprintf("the new git directory %s (%s): %v", quote(path), why, err)}
	}
	root, err := os.OpenRoot(g)
	if err != nil {
		return fail(err)
	}
	defer root.Close()
	aside := "put-aside-by-custom-agent-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := root.Mkdir(aside, 0o700); err != nil {
		return fail(err)
	}
	to := filepath.Join(aside, filepath.Base(rel))
	if err := root.Rename(rel, to); err != nil {
		_ = root.Remove(aside)
		return fail(err)
	}
	return []string{fmt.Sprintf("put the new git directory %s aside as %s: %s, which git would run on the host", quote(path), quote(filepath.Join(g, to)), why)}, nil
}

// LooksLikeGit reports whether git would open dir as a git directory, as
// git's is_git_directory has it: a HEAD that is a file or a link into
// refs/, and objects and refs there or in the directory a commondir file
// names. The plan and the check after the call use this one test.
func LooksLikeGit(dir string) bool {
	head := filepath.Join(dir, "HEAD")
	fi, err := os.Lstat(head)
	switch {
	case err != nil:
		return false
	case fi.Mode()&fs.ModeSymlink != 0:
		if t, err := os.Readlink(head); err != nil || !strings.HasPrefix(t, "refs/") {
			return false
		}
	case !fi.Mode().IsRegular():
		return false
	}
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		return true // objects and refs are wherever it points
	}
	// git asks only that objects and refs can be searched (access X_OK):
	// a plain file with an execute bit will do, so any type counts.
	for _, sub := range []string{"objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, sub)); err != nil {
			return false
		}
	}
	return true
}

// validHead reports whether git reads path as a HEAD (validate_headref):
// a link into refs/, or a file holding "ref: refs/…" or an object id.
// git passes over a git directory whose HEAD is anything else, and looks
// for the repository in the directory above.
func validHead(path string) bool {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return false
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(path)
		return err == nil && strings.HasPrefix(t, "refs/")
	case !fi.Mode().IsRegular():
		return false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 255))
	if ref, ok := strings.CutPrefix(string(b), "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(ref, " \t\n\v\f\r"), "refs/")
	}
	n := 0
	for n < len(b) && strings.IndexByte("0123456789abcdefABCDEF", b[n]) >= 0 {
		n++
	}
	return n >= 40
}

// ReadHead returns the HEAD file of the git directory dir as it is, when
// it is a regular file of at most 256 bytes: it is read without following
// a link and without waiting on a pipe or a device, so that a HEAD the
// command made odd can neither block the next plan nor feed it another
// file.
func ReadHead(dir string) (string, bool) {
	path := filepath.Join(dir, "HEAD")
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, 257))
	if err != nil || len(b) > 256 {
		return "", false
	}
	return string(b), true
}

// vetGit says why a git directory made during the call could run code
// later, or "" when it is a plain repository (git init, commits, a remote
// over http or ssh).
func vetGit(path string, d fs.DirEntry) string {
	if !d.IsDir() {
		return "it is a " + map[bool]string{true: "link", false: "file"}[d.Type()&fs.ModeSymlink != 0] + ", which can point git at another directory"
	}
	for _, name := range []string{"HEAD", "config", "hooks", "info", "objects", "refs"} {
		if fi, err := os.Lstat(filepath.Join(path, name)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return name + " is a symbolic link"
		}
	}
	for _, name := range []string{"commondir", "gitdir", "config.worktree", "objects/info/alternates", "modules", "worktrees"} {
		if _, err := os.Lstat(filepath.Join(path, name)); err == nil {
			return "it holds " + name
		}
	}
	// Files git reads that are a pipe, a device or a socket: reading one
	// waits, or never ends (the next plan reads HEAD).
	for _, name := range []string{"HEAD", "config", "index", "packed-refs"} {
		if fi, err := os.Lstat(filepath.Join(path, name)); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			return "its " + name + " is not a plain file"
		}
	}
	if why := vetHooks(filepath.Join(path, "hooks")); why != "" {
		return why
	}
	return vetConfig(filepath.Join(path, "config"))
}

// vetHooks says why a hooks directory could run something: a hook that is
// not a sample, or a directory that cannot be listed (git needs only to
// search it to run a hook).
func vetHooks(dir string) string {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return "its hooks cannot be listed"
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".sample") || !e.Type().IsRegular() {
			return "it holds the hook " + quote(e.Name())
		}
	}
	return ""
}

// plainGitKeys are the configuration keys a new repository may hold: what
// git init, git clone and git config user.* write. Any other key may name
// a command git runs (core.fsmonitor, gpg.*.program, remote.*.uploadpack,
// filter drivers, aliases …), so it is not kept.
var plainGitKeys = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true,
	"core.logallrefupdates": true, "core.ignorecase": true, "core.precomposeunicode": true,
	"core.symlinks": true, "init.defaultbranch": true, "user.name": true, "user.email": true,
	"branch.*.remote": true, "branch.*.merge": true, "branch.*.rebase": true,
	"remote.*.url": true, "remote.*.fetch": true,
}

// vetConfig reads a new repository's configuration as git's syntax has
// it, and says why it could run something: a key outside plainGitKeys, a
// remote whose URL is not http(s), ssh or git, or a file that is not a
// plain, readable, single-linked file of at most maxGitConfig bytes.
func vetConfig(path string) string {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	switch {
	case err != nil:
		return "its configuration cannot be checked"
	case !fi.Mode().IsRegular():
		return "its configuration is not a plain file"
	case fi.Size() > maxGitConfig:
		return "its configuration is too large to check"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return "its configuration has another name (a hard link), through which it could change later"
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "its configuration cannot be read"
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGitConfig+1))
	if err != nil || len(b) > maxGitConfig {
		return "its configuration cannot be read"
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), maxGitConfig)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			return "its configuration continues a line"
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "its configuration has a section it cannot read"
			}
			section = sectionKey(line[1:end])
			if rest := strings.TrimSpace(line[end+1:]); rest != "" && rest[0] != '#' && rest[0] != ';' {
				line = rest
			} else {
				continue
			}
		}
		name, value, _ := strings.Cut(line, "=")
		key := section + "." + strings.ToLower(strings.TrimSpace(name))
		if !plainGitKeys[key] {
			return "its configuration sets " + quote(key)
		}
		if key == "remote.*.url" {
			v := strings.Trim(strings.TrimSpace(value), `"`)
			if !(strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "ssh://") || strings.HasPrefix(v, "git://") || strings.HasPrefix(v, "git@")) {
				return "its configuration has a remote URL git would hand to a helper: " + quote(v)
			}
		}
	}
	if sc.Err() != nil {
		return "its configuration cannot be read"
	}
	return ""
}

// sectionKey turns a section header's inside ("core", `remote "origin"`,
// "branch.main") into the key prefix plainGitKeys uses: the section lower
// case, and "*" for any subsection.
func sectionKey(h string) string {
	h = strings.TrimSpace(h)
	if i := strings.IndexAny(h, " \t\""); i >= 0 {
		return strings.ToLower(h[:i]) + ".*"
	}
	if i := strings.IndexByte(h, '.'); i >= 0 {
		return strings.ToLower(h[:i]) + ".*"
	}
	return strings.ToLower(h)
}

// quote quotes a name for a note: control characters and escapes cannot
// reach a terminal or forge a line.
func quote(s string) string { return strconv.Quote(s) }

// skip is SkipDir for a directory and nil for a file, as WalkDir wants.
func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// indexChanged reports whether a known git directory's index is not as
// the plan saw it.
func (p *Profile) indexChanged() bool {
	for g, stamp := range p.GitIndexes {
		if IndexStamp(g) != stamp {
			return true
		}
	}
	return false
}

// IndexStamp is the identity, size and times of a git directory's index,
// "" when it has none. The change time is in it: a command can set the
// modification time back (touch -d) and pad the index to its old size,
// but not the change time.
func IndexStamp(gitDir string) string {
	fi, err := os.Lstat(filepath.Join(gitDir, "index"))
	if err != nil {
		return ""
	}
	stamp := strconv.FormatInt(fi.Size(), 10) + "@" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		stamp += fmt.Sprintf(" %d:%d ctime %d.%09d", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
	}
	return stamp
}
