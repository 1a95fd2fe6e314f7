package resolve

import (
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// Hard links (review class g). A hard link to ~/.ssh/id_rsa made inside the
// project before the call is, by its name, a project file: the engine,
// which judges names, would let `cat notes.txt` print the key. What a read
// opens is compared with the credential files by device and inode instead:
// a regular file whose link count is above one is the cue, and a match
// makes the engine judge the call as a use of the credential file, by
// handing it in as the path's resolved form (Request.Resolved,
// Request.Expanded) or as the tree's secret (Request.Trees).

// credDirs are the directories under HOME where credential files live,
// each read to the depth given (caches and registries beside the
// credential files, as in ~/.cargo or ~/.m2, are not walked). HOME's own
// files and the working directory's are read too (.netrc, .npmrc, .env),
// and so is custom-agent's data directory when the runner was given one
// (Request.DataDir), to the depth of the default one here: serve's script
// tokens and the event log are at its top.
var credDirs = []struct {
	dir   string
	depth int
}{
	{".local/share/custom-agent", dataDirDepth}, {".ssh", 3}, {".aws", 3}, {".gnupg", 3}, {".docker", 1}, {".kube", 2}, {".azure", 2}, {".config/gcloud", 3},
	{".config/gh", 1}, {".config/hub", 0}, {".config/git", 0}, {".config/custom-agent", 1}, {".local/share/keyrings", 1},
	{".password-store", 3}, {".terraform.d", 0}, {".oci", 1}, {".cargo", 0}, {".config/op", 1}, {".config/doctl", 0},
	{".gem", 0}, {".m2", 0}, {".gradle", 0}, {".pki", 3}, {".vault-token", 0}, {".config", 0},
}

// dataDirDepth is how deep a data directory is read: its top (serve-*.token,
// events.db) and the directories there, not the artifact store's fan-out.
const dataDirDepth = 1

// maxCredEntries bounds the entries read to build one index.
const maxCredEntries = 5000

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

// credIndex maps the identities of the credential files under one home
// (and one working directory) to their paths, with the stamps of the
// directories read to build it.
type credIndex struct {
	ids    map[fileID]string
	stamps map[string]stamp // directory → its stamp when read; a missing one has none
}

var credCache struct {
	sync.Mutex
	m map[[3]string]*credIndex
}

// fresh reports whether no directory read for c changed since.
func (c *credIndex) fresh() bool {
	for d, s := range c.stamps {
		var st unix.Stat_t
		if unix.Stat(d, &st) != nil || dirStamp(&st) != s {
			return false
		}
	}
	return true
}

// credentialIndex returns the index for env's home, working directory and
// data directory, read once and again only when a directory it read has
// changed.
func credentialIndex(env pathrisk.Env) *credIndex {
	key := [3]string{env.Home, env.Cwd, env.DataDir}
	credCache.Lock()
	defer credCache.Unlock()
	if c, ok := credCache.m[key]; ok && c.fresh() {
		return c
	}
	c := buildIndex(env)
	if credCache.m == nil {
		credCache.m = make(map[[3]string]*credIndex)
	}
	credCache.m[key] = c
	return c
}

func buildIndex(env pathrisk.Env) *credIndex {
	c := &credIndex{ids: map[fileID]string{}, stamps: map[string]stamp{}}
	entries := 0
	var read func(dir string, depth int)
	read = func(dir string, depth int) {
		var st unix.Stat_t
		if unix.Stat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return
		}
		c.stamps[dir] = dirStamp(&st)
		list, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range list {
			if entries++; entries > maxCredEntries {
				return
			}
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				if depth > 0 {
					read(p, depth-1)
				}
			case e.Type().IsRegular():
				if !pathrisk.IsCredential(p, env) && !pathrisk.Protected(pathrisk.PathFacts{Raw: p, Canonical: p, Write: true}, env) {
					continue
				}
				var fst unix.Stat_t
				if unix.Stat(p, &fst) == nil {
					id := fileID{uint64(fst.Dev), fst.Ino}
					if _, dup := c.ids[id]; !dup {
						c.ids[id] = p
					}
				}
			}
		}
	}
	if filepath.IsAbs(env.DataDir) {
		read(filepath.Clean(env.DataDir), dataDirDepth)
	}
	if filepath.IsAbs(env.Home) {
		read(env.Home, 0)
		for _, d := range credDirs {
			read(filepath.Join(env.Home, d.dir), d.depth)
		}
	}
	if filepath.IsAbs(env.Cwd) && env.Cwd != env.Home {
		read(env.Cwd, 0)
	}
	return c
}

// hardLinkedCredential returns the credential (or protected) file that p is
// another name of, or "": p must be a regular file with more than one link
// whose device and inode are those of a file in the index. p is judged as
// the file it opens, symbolic links followed.
func hardLinkedCredential(p string, env pathrisk.Env) string {
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink < 2 {
		return ""
	}
	c := credentialIndex(env)
	if cred, ok := c.ids[fileID{uint64(st.Dev), st.Ino}]; ok && cred != p {
		return cred
	}
	return ""
}

// hardLinks replaces, in req.Resolved and req.Expanded, every path that is
// a hard link to a credential file by that file, so that the engine judges
// the file the call opens.
func hardLinks(req *permission.Request, paths []string) {
	env := pathrisk.Env{Cwd: req.Cwd, Home: req.Home, UserHomes: req.UserHomes, ConfigHome: req.ConfigHome, DataDir: req.DataDir}
	for _, p := range paths {
		target := p
		if r, ok := req.Resolved[p]; ok && r != "" {
			target = r
		}
		if !filepath.IsAbs(target) {
			continue
		}
		if cred := hardLinkedCredential(target, env); cred != "" {
			if req.Resolved == nil {
				req.Resolved = map[string]string{}
			}
			req.Resolved[p] = cred
		}
	}
	for pat, matches := range req.Expanded {
		for i, m := range matches {
			if m == "" || !filepath.IsAbs(m) {
				continue
			}
			if cred := hardLinkedCredential(m, env); cred != "" {
				req.Expanded[pat][i] = cred
			}
		}
	}
}
