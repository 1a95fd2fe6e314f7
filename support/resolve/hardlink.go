package resolve

import (
	"os"
	"path/filepath"

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

// maxCredEntries bounds the entries read in one search for a credential.
const maxCredEntries = 5000

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

// credScan is what one directory read for the credential files holds:
// its subdirectories and its credential (or protected) files, in the
// order read, each with its position among the n entries, so that the
// bound on the entries read falls where a full read puts it.
type credScan struct {
	n     int
	items []credItem
}

// credItem is a subdirectory (name) or a credential file (id and path).
type credItem struct {
	pos  int // 1-based, among the directory's entries
	name string
	id   fileID
	path string
}

// credDirScans remembers each directory's credScan, by environment and
// path, while the directory's stamp is unchanged: the one stamp cache of
// this package, with its racy-window rule (a directory changed within
// the window is read again at the next call).
var credDirScans = newStampCache[credScan](4096)

// credEnvKey is the part of a credDirScans key that the environment
// gives: which files are credentials depends on it.
func credEnvKey(env pathrisk.Env) string {
	return env.Home + "\x00" + env.Cwd + "\x00" + env.DataDir + "\x00" + env.ConfigHome + "\x00"
}

// scanCredDir reads dir's entries as the index needs them.
func scanCredDir(dir string, env pathrisk.Env) credScan {
	list, err := os.ReadDir(dir)
	if err != nil {
		return credScan{}
	}
	sc := credScan{n: len(list)}
	for i, e := range list {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			sc.items = append(sc.items, credItem{pos: i + 1, name: e.Name()})
		case e.Type().IsRegular():
			if !pathrisk.IsCredential(p, env) && !pathrisk.Protected(pathrisk.PathFacts{Raw: p, Canonical: p, Write: true}, env) {
				continue
			}
			var fst unix.Stat_t
			if unix.Stat(p, &fst) == nil {
				sc.items = append(sc.items, credItem{pos: i + 1, id: fileID{uint64(fst.Dev), fst.Ino}, path: p})
			}
		}
	}
	return sc
}

// credentialWithID returns the first credential (or protected) file with
// identity id under env's data directory, home (its top, and credDirs to
// their depths) and working directory (its top), reading at most
// maxCredEntries entries in all, or "". Each directory's scan comes from
// credDirScans while its stamp is unchanged.
func credentialWithID(env pathrisk.Env, id fileID) string {
	key := credEnvKey(env)
	entries := 0
	found := ""
	var read func(dir string, depth int) bool
	read = func(dir string, depth int) bool {
		var st unix.Stat_t
		if unix.Stat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return false
		}
		stamp := dirStamp(&st)
		sc, ok := credDirScans.get(key+dir, stamp)
		if !ok {
			sc = scanCredDir(dir, env)
			credDirScans.put(key+dir, stamp, sc)
		}
		done := 0
		for _, it := range sc.items {
			entries += it.pos - done
			done = it.pos
			if entries > maxCredEntries {
				return false
			}
			switch {
			case it.name != "":
				if depth > 0 && read(filepath.Join(dir, it.name), depth-1) {
					return true
				}
			case it.id == id:
				found = it.path
				return true
			}
		}
		entries += sc.n - done
		return false
	}
	if filepath.IsAbs(env.DataDir) && read(filepath.Clean(env.DataDir), dataDirDepth) {
		return found
	}
	if filepath.IsAbs(env.Home) {
		if read(env.Home, 0) {
			return found
		}
		for _, d := range credDirs {
			if read(filepath.Join(env.Home, d.dir), d.depth) {
				return found
			}
		}
	}
	if filepath.IsAbs(env.Cwd) && env.Cwd != env.Home && read(env.Cwd, 0) {
		return found
	}
	return ""
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
	if cred := credentialWithID(env, fileID{uint64(st.Dev), st.Ino}); cred != p {
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
