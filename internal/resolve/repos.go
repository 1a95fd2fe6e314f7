package resolve

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// Repos reads, for each directory the engine asks about
// (permission.ReposToScan), the index of the git repository holding it and
// reports the first file the index tracks, anywhere in the repository, that
// isSecret judges a credential (isSecret gets absolute, clean paths). A
// directory in no repository tracks nothing: Checked, no Secret. An index
// that is missing (git diff would then print every committed file as
// deleted) or cannot be read whole (a format go-git does not read, a split
// or sparse index, damage) leaves Checked false, which the engine treats as
// not read. Nothing is run: the index is parsed, never handed to git, whose
// configuration a repository controls.
func Repos(dirs []string, envKey string, isSecret func(abs string) bool) map[string]permission.Repo {
	var m map[string]permission.Repo
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		if m == nil {
			m = make(map[string]permission.Repo)
		}
		m[d] = repoOf(d, envKey, isSecret)
	}
	return m
}

// ReposFor reads the indexes of the repositories whose tracked content req
// prints (permission.ReposToScan), judging files with the engine's own
// credential table, for req.Repos.
func ReposFor(req permission.Request) map[string]permission.Repo {
	dirs := permission.ReposToScan(req)
	if len(dirs) == 0 {
		return nil
	}
	env := pathrisk.Env{Cwd: req.Cwd, Home: req.Home, UserHomes: req.UserHomes, ConfigHome: req.ConfigHome}
	homes := make([]string, 0, len(req.UserHomes))
	for u, h := range req.UserHomes {
		homes = append(homes, u+"="+h)
	}
	sort.Strings(homes)
	key := strings.Join(append([]string{req.Cwd, req.Home, req.ConfigHome}, homes...), "\x00")
	return Repos(dirs, key, func(abs string) bool { return pathrisk.IsCredential(abs, env) })
}

// repoOf finds the repository holding dir and judges its index.
func repoOf(dir, envKey string, isSecret func(string) bool) permission.Repo {
	root, gitDir, ok := findRepo(dir)
	if !ok {
		return permission.Repo{Checked: true} // in no repository
	}
	if gitDir == "" {
		return permission.Repo{} // a .git that is neither a directory nor a gitdir file
	}
	path := filepath.Join(gitDir, "index")
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxIndexBytes {
		// Missing, or not a file to read (a .git file of the repository
		// may name any directory: a fifo there would block the gate).
		return permission.Repo{}
	}
	k := repoKey{index: path, env: envKey, size: st.Size(), mtime: st.ModTime().UnixNano()}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		k.ino = s.Ino
	}
	if r, ok := repoCache.get(k); ok {
		return r
	}
	r := judgeIndex(path, root, isSecret)
	repoCache.put(k, r)
	return r
}

// findRepo walks up from dir to the nearest .git: the repository's root,
// and its git directory ("" when .git is neither a directory nor a file
// naming one). ok is false when there is none up to /.
func findRepo(dir string) (root, gitDir string, ok bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		st, err := os.Lstat(p)
		switch {
		case err == nil && st.IsDir():
			return d, p, true
		case err == nil && st.Mode().IsRegular():
			return d, gitFileDir(d, p), true
		case err == nil:
			return d, "", true // a link or something stranger: not read
		}
		if d == filepath.Dir(d) {
			return "", "", false
		}
	}
}

// gitFileDir reads a .git file ("gitdir: PATH", worktrees and submodules)
// and returns the directory it names, "" when it names none.
func gitFileDir(root, p string) string {
	b, err := os.ReadFile(p)
	if err != nil || len(b) > 4096 {
		return ""
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || s == "" {
		return ""
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(root, s)
	}
	return filepath.Clean(s)
}

// judgeIndex parses the index at path and returns the first entry that
// isSecret judges a credential.
func judgeIndex(path, root string, isSecret func(string) bool) permission.Repo {
	f, err := os.Open(path)
	if err != nil {
		return permission.Repo{}
	}
	defer f.Close()
	var idx index.Index
	if err := decodeIndex(bufio.NewReader(f), &idx); err != nil {
		return permission.Repo{}
	}
	for _, e := range idx.Entries {
		abs := filepath.Join(root, filepath.FromSlash(e.Name))
		if isSecret(abs) {
			return permission.Repo{Checked: true, Secret: abs}
		}
	}
	return permission.Repo{Checked: true}
}

// decodeIndex decodes an index, turning a panic of the decoder on a
// damaged file into an error.
func decodeIndex(r *bufio.Reader, idx *index.Index) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("git index: %v", p)
		}
	}()
	return index.NewDecoder(r).Decode(idx)
}

// repoKey names one judgement of one index: the file as it stood (inode,
// size, modification time) and the credential table's inputs.
type repoKey struct {
	index, env  string
	size, mtime int64
	ino         uint64
}

// maxIndexBytes bounds the index read: a larger one is not read (Checked
// false), which asks before git diff rather than parse without end. The
// index of a repository of a million files is about 100 MB.
const maxIndexBytes = 256 << 20

// maxRepoCache bounds the judgements kept; past it the cache starts again.
const maxRepoCache = 64

// repoCache keeps judgements of indexes, so that a git diff checked again
// and again does not parse and judge a large index each time.
var repoCache = &repoJudgements{m: map[repoKey]permission.Repo{}}

type repoJudgements struct {
	mu sync.Mutex
	m  map[repoKey]permission.Repo
}

func (c *repoJudgements) get(k repoKey) (permission.Repo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[k]
	return r, ok
}

func (c *repoJudgements) put(k repoKey, r permission.Repo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxRepoCache {
		c.m = map[repoKey]permission.Repo{}
	}
	c.m[k] = r
}
