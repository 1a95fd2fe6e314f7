package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/sandbox/enforce"
)

// MaxEntries bounds the entries Plan reads in the working directory when it
// looks for secrets and protected paths. A larger tree cannot be planned:
// a secret in the part not read would be left readable, so Plan fails and
// the call is asked instead (fail closed).
const MaxEntries = 200_000

// ErrTooLarge is returned by Plan for a working directory of more than
// MaxEntries entries.
var ErrTooLarge = errors.New("the working directory holds too many files for the sandbox to find every secret in it")

// ErrUnprotectable is returned by Plan when a protected path inside a
// writable directory is a symbolic link: a mount would protect the link's
// target, and the process could replace the link.
var ErrUnprotectable = errors.New("a protected path is a symbolic link")

// Env is what Plan needs to know of the user's world.
type Env struct {
	// Home is the user's home directory; ConfigHome $XDG_CONFIG_HOME ("":
	// Home/.config).
	Home, ConfigHome string
	// DataDir is custom-agent's data directory (event log, artifacts).
	DataDir string
	// Caches are build caches a workspace process may fill (DefaultCaches):
	// it sees the host's entries, and its own writes go to a private
	// layer that is dropped when it ends.
	Caches []string
	// Path is the PATH processes get: its directories under /tmp or /run
	// stay visible.
	Path string
}

// Planner makes profiles. It remembers the secrets it found in home
// directories for homeTTL, so a turn's calls do not each read them again.
// It is safe for concurrent use.
type Planner struct {
	env Env

	mu       sync.Mutex
	homes    homeFacts
	homesAt  time.Time
	homesErr error
	// browsers are the browser profiles found by name in each home
	// (browserProfiles), by home and directories left out, kept for
	// browserTTL: the walk reads far more than the table's fixed
	// locations.
	browsers   map[string]browserFacts
	browsersAt time.Time
}

// homeTTL is how long the secrets found in home directories are reused.
const homeTTL = 10 * time.Second

// browserTTL is how long the browser profiles found by name are reused. A
// browser's profile is made once, when it first starts, so a longer
// reuse costs little; one made meanwhile is found at the next walk.
const browserTTL = time.Minute

// NewPlanner returns a planner for env.
func NewPlanner(env Env) *Planner { return &Planner{env: env} }

// homeFacts are the secrets outside the working directory.
type homeFacts struct {
	homes  []string // the home directories
	hidden []string
	inodes map[fileID]bool // of the secret files, for hard links
	// links maps where a symbolic link of a home's application data
	// leads (~/dotfiles/config) to the link (~/.config).
	links map[string]string
}

type fileID struct{ dev, ino uint64 }

// Plan returns the profile of kind for a process started in cwd, with the
// network or not. It reads the file system: the home directories' credential
// locations, and the working directory's tree for secret files, protected
// paths (workspace) and hard links to secrets.
func (pl *Planner) Plan(kind Kind, network bool, cwd string) (Profile, error) {
	if !kind.Valid() {
		return Profile{}, fmt.Errorf("unknown sandbox profile %q (want read-only or workspace)", kind)
	}
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return Profile{}, fmt.Errorf("resolving the working directory: %w", err)
	}
	homes, err := pl.homeSecrets()
	if err != nil {
		return Profile{}, err
	}
	p := Profile{Kind: kind, Cwd: real, Network: network}
	if kind == Workspace {
		p.Writable = append(p.Writable, real)
		for _, c := range pl.env.Caches {
			// A cache not made yet is made empty, as the tool would
			// make it, so that the overlay has something to stand on.
			_ = os.MkdirAll(c, 0o755)
			if r, err := filepath.EvalSymlinks(c); err == nil && !pathrisk.Within(r, real) {
				p.Caches = append(p.Caches, r)
			}
		}
	}
	if err := refuseCwd(real, homes, kind == Workspace); err != nil {
		return Profile{}, err
	}
	// The browser profiles no table names, found by walking the homes'
	// application data but the trees the process writes, which
	// walkProject reads (the working directory is one whatever kind).
	homes = pl.withBrowsers(homes, slices.Concat([]string{real}, p.Writable))
	p.Hidden = slices.Clone(homes.hidden)
	if err := pl.walkProject(&p, homes); err != nil {
		return Profile{}, err
	}
	p.Keep = keepFromPath(pl.env.Path, pl.env.Home, real)
	slices.Sort(p.Hidden)
	p.Hidden = slices.Compact(p.Hidden)
	return p, nil
}

// ErrCwd is returned by Plan for a working directory the sandbox cannot
// confine a process to: one that is or holds a directory the sandbox keeps
// private (any profile), or, for a writing one, a home or a system
// directory.
var ErrCwd = errors.New("the sandbox cannot confine writes to this working directory")

// refuseCwd fails the plan for a working directory that is or holds a
// directory the sandbox replaces (/, /tmp, /run …: their host content
// would come back), or that holds a home directory (its startup files,
// ~/.ssh/authorized_keys, ~/.config/custom-agent would be writable, even
// those not there yet).
func refuseCwd(cwd string, homes homeFacts, writes bool) error {
	if cwd == "/" {
		return fmt.Errorf("%w: it is the root directory", ErrCwd)
	}
	for _, c := range enforce.Covered {
		if pathrisk.Within(c, cwd) {
			return fmt.Errorf("%w: it holds %s, which the sandbox keeps private", ErrCwd, c)
		}
	}
	if !writes {
		return nil // a home or a system directory is only read: it may be
	}
	for _, sys := range systemDirs {
		if pathrisk.Within(cwd, sys) {
			return fmt.Errorf("%w: it is in %s, a system directory", ErrCwd, sys)
		}
	}
	for _, h := range homes.homes {
		if pathrisk.Within(h, cwd) {
			return fmt.Errorf("%w: it holds the home directory %s, whose startup and configuration files would be writable", ErrCwd, h)
		}
	}
	return nil
}

// systemDirs are directories no project lives in: a working directory in
// one would make the system writable.
var systemDirs = []string{"/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sys", "/dev"}

// keepFromPath returns the PATH directories, and the home directory, that
// lie under a covered one (the working directory is always kept).
func keepFromPath(path, home, cwd string) []string {
	var keep []string
	dirs := filepath.SplitList(path)
	if home != "" && !pathrisk.Within(cwd, home) {
		dirs = append(dirs, home)
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		for _, c := range enforce.Covered {
			if pathrisk.Within(r, c) && r != c {
				keep = append(keep, r)
			}
		}
	}
	slices.Sort(keep)
	return slices.Compact(keep)
}

// systemSecrets are files and directories outside the homes that hold
// secrets and that a process running as the file's owner could read.
var systemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/security/opasswd", "/etc/ssl/private", "/etc/sudoers.d",
	"/run/secrets", "/var/run/secrets", "/var/lib/custom-agent",
}

func (pl *Planner) homeSecrets() (homeFacts, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if !pl.homesAt.IsZero() && time.Since(pl.homesAt) < homeTTL {
		return pl.homes, pl.homesErr
	}
	h := homeFacts{inodes: map[fileID]bool{}}
	add := func(p string) {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return // absent: nothing to hide
		}
		h.hidden = append(h.hidden, r)
		collectInodes(r, h.inodes)
	}
	h.homes = homeDirs(pl.env.Home)
	for _, home := range h.homes {
		ls := lister{}
		for _, rel := range pathrisk.HomeCredentials() {
			for _, m := range ls.fold(home, rel) {
				add(m)
			}
		}
	}
	cfg := pl.env.ConfigHome
	if cfg == "" && pl.env.Home != "" {
		cfg = filepath.Join(pl.env.Home, ".config")
	}
	if cfg != "" {
		add(filepath.Join(cfg, "custom-agent"))
	}
	if pl.env.DataDir != "" {
		add(pl.env.DataDir)
	}
	for _, s := range systemSecrets {
		add(s)
	}
	if ms, _ := filepath.Glob("/etc/ssh/ssh_host_*_key"); len(ms) > 0 {
		for _, m := range ms {
			add(m)
		}
	}
	pl.homes, pl.homesAt, pl.homesErr = h, time.Now(), nil
	return h, nil
}

// lister reads directories once for fold.
type lister map[string][]os.DirEntry

// fold returns the paths beneath dir that match rel (lower case, as
// pathrisk's tables are; "*" stands for any one name) in any letter case:
// the tables say ".config/bravesoftware" and ".config/code/user/…", the
// disk has BraveSoftware and Code/User.
func (ls lister) fold(dir, rel string) []string {
	var exact []string
	if !strings.Contains(rel, "*") {
		// A directory that can be entered but not listed.
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			exact = append(exact, filepath.Join(dir, rel))
		}
	}
	dirs := []string{dir}
	for _, comp := range strings.Split(rel, "/") {
		var next []string
		for _, d := range dirs {
			ents, ok := ls[d]
			if !ok {
				ents, _ = os.ReadDir(d)
				ls[d] = ents
			}
			for _, e := range ents {
				if comp == "*" || strings.EqualFold(e.Name(), comp) {
					next = append(next, filepath.Join(d, e.Name()))
				}
			}
		}
		if dirs = next; len(dirs) == 0 {
			break
		}
	}
	out := append(exact, dirs...)
	slices.Sort(out)
	return slices.Compact(out)
}

// homeDirs returns the user's home and every other home on this machine
// (/root, /home/*): a process runs as the user, who may read them.
func homeDirs(home string) []string {
	out := []string{}
	if home != "" {
		out = append(out, home)
	}
	out = append(out, "/root")
	if ms, err := filepath.Glob("/home/*"); err == nil {
		out = append(out, ms...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// collectInodes records the regular files at or under p (two levels deep,
// at most 4,096), so that a hard link to one elsewhere is recognised.
func collectInodes(p string, into map[fileID]bool) {
	n := 0
	var walk func(string, int)
	walk = func(p string, depth int) {
		if n >= 4096 {
			return
		}
		n++
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil {
			return
		}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFREG:
			into[fileID{uint64(st.Dev), st.Ino}] = true
		case syscall.S_IFDIR:
			if depth >= 2 {
				return
			}
			ents, err := os.ReadDir(p)
			if err != nil {
				return
			}
			for _, e := range ents {
				walk(filepath.Join(p, e.Name()), depth+1)
			}
		}
	}
	walk(p, 0)
}

// dependencyTrees are protected for the analyser (their code runs later)
// but stay writable in the workspace profile: installing dependencies is
// what a build step the person allowed does.
var dependencyTrees = map[string]bool{
	"node_modules": true, ".venv": true, "venv": true, "site-packages": true, "dist-packages": true,
}

// walkProject reads the working directory's tree into p: secret files and
// hard links to secrets (hidden), and protected paths and the directories
// that lead to them (workspace). A directory it cannot read is hidden
// whole: the process, as the same user, could make it readable. Any other
// error fails the plan.
func (pl *Planner) walkProject(p *Profile, homes homeFacts) error {
	env := pathrisk.Env{Cwd: p.Cwd, Home: pl.env.Home, ConfigHome: pl.env.ConfigHome, DataDir: pl.env.DataDir}
	writable := p.Kind == Workspace
	entries := 0
	secret := maps.Clone(homes.inodes)
	if secret == nil {
		secret = map[fileID]bool{}
	}
	linked := map[fileID][]string{} // files with more than one link
	var gitDirs []string
	// The protected links and directories, whose targets are protected
	// once the walk is done.
	lt := &linkTargets{}
	// The directories whose new protected names are removed after the
	// call (Profile.GuardDirs), and the protected names already there.
	guardDirs := []string{p.Cwd}
	var guardKeep []string
	guardLinks := map[string]string{}
	// A secret by its path, or by the path through a link of a home's
	// application data that leads here (~/.config to ~/dotfiles/config:
	// a browser's History is one in ~/.config only).
	isCredential := func(path string) bool {
		if pathrisk.IsCredential(path, env) {
			return true
		}
		for target, link := range homes.links {
			if rel, err := filepath.Rel(target, path); err == nil && pathrisk.Within(path, target) &&
				pathrisk.IsCredential(filepath.Join(link, rel), env) {
				return true
			}
		}
		return false
	}
	err := filepath.WalkDir(p.Cwd, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == p.Cwd {
				return err
			}
			if errors.Is(err, fs.ErrPermission) {
				p.Hidden = append(p.Hidden, path)
				return fs.SkipDir
			}
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if entries++; entries > MaxEntries {
			return ErrTooLarge
		}
		if path == p.Cwd {
			return nil
		}
		name := d.Name()
		isDir := d.IsDir()
		if writable && (guardedName(name) || guardFirst()[strings.ToLower(name)]) {
			guardKeep = append(guardKeep, path)
			if d.Type()&fs.ModeSymlink != 0 {
				target, err := os.Readlink(path)
				if err != nil {
					return fmt.Errorf("reading %s: %w", path, err)
				}
				guardLinks[path] = target
			}
		}
		if writable && d.Type()&fs.ModeSymlink != 0 && guardFirst()[strings.ToLower(name)] && !inDependencyTree(p.Cwd, path) {
			// A link where a protected path's first directory goes
			// (.cargo of .cargo/config.toml), as at a protected path
			// (protect): no mount or removal can keep a file from
			// being made behind it, since the process could retarget
			// it, or make or fill the directory it leads to.
			rel, _ := filepath.Rel(p.Cwd, path)
			return fmt.Errorf("%w: %q, the first directory of protected paths (a process could retarget the link, or write where it leads)", ErrUnprotectable, rel)
		}
		if name == ".git" && !isDir {
			gitDirs = append(gitDirs, path) // known: not put aside after the call
		}
		if name == ".git" && d.Type().IsRegular() {
			// A "gitdir:" file: the git directory it names, when it
			// lies in the tree, is protected as one.
			if target := gitdirTarget(path); target != "" && pathrisk.Within(target, p.Cwd) {
				gitDirs = append(gitDirs, target)
				if err := pl.walkGitDir(p, lt, target); err != nil && err != fs.SkipDir {
					return err
				}
			}
		}
		if gitConfig(path) {
			// The repository's configuration is read by every git
			// command; it is protected from writes, not hidden.
			if writable {
				if err := protect(p, lt, path, d); err != nil {
					return err
				}
			}
			return nil
		}
		if isCredential(path) {
			p.Hidden = append(p.Hidden, path)
			collectInodes(path, secret)
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSocket != 0 {
			p.Hidden = append(p.Hidden, path) // a host service's socket
			return nil
		}
		if writable && isDir && name == ".git" {
			// git writes its objects, index and refs there: the
			// directory stays writable, pinned so that it cannot be
			// replaced, with what runs code read-only (walkGitDir).
			gitDirs = append(gitDirs, path)
		} else if writable && !dependencyTrees[strings.ToLower(name)] && !underProtected(p.Protected, path) &&
			pathrisk.Protected(pathrisk.PathFacts{Canonical: path, Write: true}, env) {
			if err := protect(p, lt, path, d); err != nil {
				return err
			}
		}
		if isDir {
			if name == "node_modules" {
				// Often huge, and no secret of the user's lives there;
				// one cannot be moved in either: the directories that
				// lead to a hidden file are pinned.
				return fs.SkipDir
			}
			if name == ".git" || enforce.LooksLikeGit(path) {
				if name != ".git" && writable {
					gitDirs = append(gitDirs, path)
				}
				return pl.walkGitDir(p, lt, path)
			}
			if writable {
				guardDirs = append(guardDirs, path) // filtered below
			}
			return nil
		}
		if d.Type().IsRegular() {
			var st syscall.Stat_t
			if syscall.Lstat(path, &st) == nil && st.Nlink > 1 {
				id := fileID{uint64(st.Dev), st.Ino}
				linked[id] = append(linked[id], path)
			}
		}
		return nil
	})
	if errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("%w (more than %d entries under %s)", ErrTooLarge, MaxEntries, p.Cwd)
	}
	if err != nil {
		return err
	}
	if writable {
		if err := lt.protect(p); err != nil {
			return err
		}
		// A protected file with another name in the tree would be
		// changed through that name (a hard link shares the file, and
		// a mount covers one name only): each name the walk found is
		// protected too.
		ids, err := protectedFileIDs(p.Protected)
		if err != nil {
			return err
		}
		for id, paths := range linked {
			if !ids[id] {
				continue
			}
			for _, q := range paths {
				if !covered(p.Protected, q) {
					p.Protected = append(p.Protected, q)
				}
			}
		}
	}
	// Hard links to a secret, in the home or in the tree itself.
	for id, paths := range linked {
		if secret[id] {
			p.Hidden = append(p.Hidden, paths...)
		}
	}
	if writable {
		absent, keep := absentProtected(p.Cwd)
		p.Absent = append(p.Absent, absent...)
		p.AbsentKeep = keep
		p.GuardDirs = guardable(guardDirs, p)
		p.GuardKeep = guardKeep
		if len(guardLinks) > 0 {
			p.GuardLinks = guardLinks
		}
		p.GuardPaths = guardPaths()
		p.GitDirs = gitDirs
		p.GitHeads = map[string]string{}
		p.GitIndexes = map[string]string{}
		for _, g := range gitDirs {
			if head, ok := enforce.ReadHead(g); ok {
				p.GitHeads[g] = head
			}
			p.GitIndexes[g] = enforce.IndexStamp(g)
		}
		p.CwdGit = enforce.LooksLikeGit(p.Cwd)
		_, err := os.Lstat(filepath.Join(p.Cwd, "HEAD"))
		p.CwdHead = err == nil
		// The parents of hidden paths too: a secret is a mount point, but
		// its directory could be moved under a name the next plan skips
		// or does not read as a secret's (.aws to aws).
		p.Pinned = enforce.Pins(p.Cwd, slices.Concat(p.Protected, gitDirs, p.Hidden))
		p.Pinned = append(p.Pinned, gitDirs...)
		slices.Sort(p.Pinned)
		p.Pinned = slices.Compact(p.Pinned)
	}
	return nil
}

// notGuardedAbsent are protected names whose creation is the normal work
// of a step a person allowed (git init, installing dependencies, making a
// virtualenv): they are not removed when a process creates them.
var notGuardedAbsent = map[string]bool{
	".git": true, ".git/hooks": true, ".git/config.worktree": true, ".git/info/attributes": true,
	".git/objects/info/alternates": true, "node_modules": true, ".venv": true, "venv": true,
	"site-packages": true, "dist-packages": true,
	// The manifests a scaffolding step makes (npm init, cargo new …).
	"package.json": true, "composer.json": true, "gemfile": true, "pyproject.toml": true,
	"setup.py": true, "setup.cfg": true, "build.rs": true, "pyvenv.cfg": true,
}

// guardedName reports whether an entry named name that a workspace process
// makes in a directory of the tree (Profile.GuardDirs) is removed after
// the call: a name pathrisk protects wherever it is (.npmrc, .yarnrc,
// bunfig.toml, conftest.py, eslint.config.js, x.code-workspace, .vscode
// …), which a tool run in that directory reads. Not the dependency trees
// and manifests a step makes (notGuardedAbsent), and not .pth files,
// inert outside a site directory (PyTorch names its weights so).
func guardedName(name string) bool {
	n := strings.ToLower(name)
	return pathrisk.ProtectedName(n) && !notGuardedAbsent[n] && !dependencyTrees[n] && !strings.HasSuffix(n, ".pth")
}

// guardPaths are the protected paths of several components that the check
// after the call looks for below each guarded directory, as tools read
// them from where they run (cargo's .cargo/config.toml, Maven's .mvn,
// CI directories): pathrisk.ProtectedNames less git's own (the git checks'
// business) and a virtualenv's activate scripts (a virtualenv is made by
// steps a person allowed), as at the top of the working directory.
var guardPaths = sync.OnceValue(func() []string {
	var out []string
	for _, n := range pathrisk.ProtectedNames() {
		if strings.Contains(n, "/") && !notGuardedAbsent[n] && !strings.HasPrefix(n, ".git/") &&
			!strings.HasPrefix(n, "bin/") && !strings.HasPrefix(n, "scripts/") {
			out = append(out, n)
		}
	}
	return out
})

// guardFirst are the first components of guardPaths (.cargo, .github …):
// the plan records those that exist, so that only one the process made
// is removed when it is a link.
var guardFirst = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, n := range guardPaths() {
		first, _, _ := strings.Cut(n, "/")
		m[first] = true
	}
	return m
})

// guardable returns the directories of dirs whose new protected names the
// check after the call removes: those a process may write, that is, not
// in a dependency tree (installing one is allowed), and not hidden or
// protected (read-only already, or behind a mask).
func guardable(dirs []string, p *Profile) []string {
	var out, blockers []string
	for _, q := range slices.Concat(p.Protected, p.Hidden) {
		if pathrisk.Within(q, p.Cwd) {
			blockers = append(blockers, q) // the home's secrets are not
		}
	}
	for _, d := range dirs {
		skip := inDependencyTree(p.Cwd, d)
		for _, q := range blockers {
			if skip {
				break
			}
			skip = pathrisk.Within(d, q)
		}
		if !skip {
			out = append(out, d)
		}
	}
	return out
}

// inDependencyTree reports whether path, beneath cwd, lies in a
// dependency tree (or is one): a step the person allowed installs there.
func inDependencyTree(cwd, path string) bool {
	rel, _ := filepath.Rel(cwd, path)
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		if dependencyTrees[strings.ToLower(c)] {
			return true
		}
	}
	return false
}

// absentProtected returns the protected paths of the working directory
// (pathrisk.ProtectedNames, ProtectedFileNames) that do not exist in their
// own spelling when the call starts: a mount cannot guard them, so
// Confined.Done removes any the process created, in any letter case. It
// also returns the entries of another letter case that do exist (.Claude
// for .claude), which the removal leaves alone. No link is followed (the
// plan is refused when one is where a directory on the way goes). Each
// directory is read once.
func absentProtected(cwd string) (absent, keep []string) {
	listed := map[string][]os.DirEntry{}
	list := func(dir string) []os.DirEntry {
		if ents, ok := listed[dir]; ok {
			return ents
		}
		ents, _ := os.ReadDir(dir)
		listed[dir] = ents
		return ents
	}
	var walk func(dir string, comps []string)
	walk = func(dir string, comps []string) {
		exact := false
		for _, e := range list(dir) {
			if !strings.EqualFold(e.Name(), comps[0]) {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if len(comps) == 1 {
				if e.Name() == comps[0] {
					exact = true
				} else {
					keep = append(keep, path)
				}
				continue
			}
			if e.Name() == comps[0] {
				exact = true
			}
			if !e.IsDir() {
				// A file, or a link: walkProject refuses a plan with
				// one at a protected path's first directory.
				continue
			}
			walk(path, comps[1:])
		}
		if !exact {
			absent = append(absent, filepath.Join(append([]string{dir}, comps...)...))
		}
	}
	for _, name := range slices.Concat(pathrisk.ProtectedNames(), pathrisk.ProtectedFileNames()) {
		if notGuardedAbsent[name] || strings.HasPrefix(name, "bin/") || strings.HasPrefix(name, "scripts/") {
			continue
		}
		walk(cwd, strings.Split(name, "/"))
	}
	return absent, keep
}

// underProtected reports whether path lies beneath the last protected
// directory: a read-only mount there covers it already. The walk is depth
// first, so the last one is the only one that can hold it.
func underProtected(protected []string, path string) bool {
	n := len(protected)
	return n > 0 && path != protected[n-1] && pathrisk.Within(path, protected[n-1])
}

// readSmall reads a regular file of at most limit bytes, without waiting
// on a pipe or a device: the plan reads git's files a command may have
// made anything, and must neither block nor read a file without end.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// gitdirTarget returns the directory a "gitdir: PATH" file names, absolute
// and with symbolic links resolved, or "" when it names none.
func gitdirTarget(file string) string {
	b, err := readSmall(file, 4096)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(file), dir)
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	return r
}

// gitIncludes returns the files a git configuration file includes
// ([include] and [includeIf …] path = …), absolute and clean: relative to
// the file's directory, ~/ in home.
func gitIncludes(config, home string) []string {
	b, err := readSmall(config, 1<<20)
	if err != nil {
		return nil
	}
	var out []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			sec := strings.ToLower(strings.TrimLeft(line, "[ \t"))
			in = strings.HasPrefix(sec, "include")
			continue
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "path") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch {
		case v == "":
			continue
		case strings.HasPrefix(v, "~/") && home != "":
			v = filepath.Join(home, v[2:])
		case !filepath.IsAbs(v):
			v = filepath.Join(filepath.Dir(config), v)
		}
		out = append(out, filepath.Clean(v))
	}
	return out
}

// programKeys are the configuration keys whose value git runs as a
// command or a hooks directory ("*" for any subsection).
var programKeys = map[string]bool{
	"core.hookspath": true, "core.fsmonitor": true, "core.sshcommand": true, "core.editor": true,
	"core.pager": true, "core.askpass": true, "sequence.editor": true, "gpg.program": true,
	"gpg.*.program": true, "diff.*.textconv": true, "diff.*.command": true, "diff.external": true,
	"merge.*.driver": true, "filter.*.clean": true, "filter.*.smudge": true, "filter.*.process": true,
	"credential.helper": true, "credential.*.helper": true, "alias.*": true, "pager.*": true,
	"interactive.difffilter": true, "uploadpack.packobjectshook": true,
	"remote.*.uploadpack": true, "remote.*.receivepack": true, "remote.*.vcs": true,
}

// gitProgramPaths returns the paths that the configuration files of the
// git directory dir name to run (programKeys): each word of such a value
// that names a path (it holds a slash), absolute and clean. A relative
// one is taken from the working tree, where git runs it: core.worktree,
// else the directory above a .git, else dir itself.
func gitProgramPaths(dir string, files []string) []string {
	root := dir
	if filepath.Base(dir) == ".git" {
		root = filepath.Dir(dir)
	}
	var words []string
	for _, f := range files {
		for _, kv := range gitConfigValues(f) {
			switch {
			case kv[0] == "core.worktree" && kv[1] != "":
				if filepath.IsAbs(kv[1]) {
					root = filepath.Clean(kv[1])
				} else {
					root = filepath.Join(dir, kv[1])
				}
			case kv[0] == "core.hookspath" && kv[1] != "":
				// A directory, slash or not.
				words = append(words, "./"+strings.Trim(kv[1], `"`))
			case programKeys[kv[0]]:
				words = append(words, strings.Fields(strings.NewReplacer(`"`, " ", "'", " ", "!", " ", ";", " ", "&", " ", "|", " ", "(", " ", ")", " ", "`", " ", "$", " ").Replace(kv[1]))...)
			}
		}
	}
	var out []string
	for _, w := range words {
		if !strings.Contains(w, "/") {
			continue
		}
		if !filepath.IsAbs(w) {
			w = filepath.Join(root, w)
		}
		out = append(out, filepath.Clean(w))
	}
	return out
}

// gitConfigValues reads a git configuration file's keys (section, "*"
// for a subsection, and name, lower case) and their values, as far as a
// line-by-line reading gets them: the file is the user's own (the plan
// keeps it read-only), so this only has to find what it names.
func gitConfigValues(path string) [][2]string {
	b, err := readSmall(path, 1<<20)
	if err != nil {
		return nil
	}
	var out [][2]string
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			h := strings.TrimSpace(line[1:end])
			switch i := strings.IndexAny(h, " \t\"."); {
			case i >= 0:
				section = strings.ToLower(h[:i]) + ".*"
			default:
				section = strings.ToLower(h)
			}
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		k, v, _ := strings.Cut(line, "=")
		key := section + "." + strings.ToLower(strings.TrimSpace(k))
		if programKeys[strings.SplitN(section, ".", 2)[0]+".*"] && !strings.HasSuffix(section, ".*") {
			key = section + ".*" // [alias] x = …
		}
		out = append(out, [2]string{key, strings.TrimSpace(v)})
	}
	return out
}

// walkGitDir protects what git runs or reads configuration from in a git
// directory, without reading its objects: the hooks, the configuration,
// attributes, alternates, and the same for each submodule and worktree.
func (pl *Planner) walkGitDir(p *Profile, lt *linkTargets, gitDir string) error {
	if p.Kind != Workspace {
		return fs.SkipDir
	}
	var visit func(dir string, depth int) error
	visit = func(dir string, depth int) error {
		for _, rel := range []string{"hooks", "config", "config.worktree", "info", "objects/info/alternates", "commondir", "gitdir"} {
			q := filepath.Join(dir, rel)
			fi, err := os.Lstat(q)
			if err != nil {
				// Not there: git would read it once made (commondir
				// moves the config and hooks elsewhere), so a process
				// that makes it has it removed (Profile.Absent).
				p.Absent = append(p.Absent, q)
				continue
			}
			if err := protect(p, lt, q, fs.FileInfoToDirEntry(fi)); err != nil {
				return err
			}
		}
		// Files the configuration includes are configuration too.
		for _, inc := range gitIncludes(filepath.Join(dir, "config"), pl.env.Home) {
			if !pathrisk.Within(inc, p.Cwd) {
				continue // outside the writable tree: read-only already
			}
			fi, err := os.Lstat(inc)
			if err != nil {
				p.Absent = append(p.Absent, inc)
				continue
			}
			if err := protect(p, lt, inc, fs.FileInfoToDirEntry(fi)); err != nil {
				return err
			}
		}
		// What the configuration names to run, by a path in the tree:
		// a hooks directory of any name (core.hooksPath), a script as
		// fsmonitor, filter, diff or merge driver, editor or pager.
		for _, q := range gitProgramPaths(dir, slices.Concat([]string{filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree")}, gitIncludes(filepath.Join(dir, "config"), pl.env.Home))) {
			if !pathrisk.Within(q, p.Cwd) || q == p.Cwd || underProtected(p.Protected, q) {
				continue
			}
			fi, err := os.Lstat(q)
			if err != nil {
				p.Absent = append(p.Absent, q)
				continue
			}
			if err := protect(p, lt, q, fs.FileInfoToDirEntry(fi)); err != nil {
				return err
			}
		}
		// A rebase or a cherry-pick in progress runs the exec lines of
		// its todo on --continue: one the process starts is removed.
		for _, rel := range []string{"rebase-merge", "rebase-apply", "sequencer"} {
			if _, err := os.Lstat(filepath.Join(dir, rel)); err != nil {
				p.Absent = append(p.Absent, filepath.Join(dir, rel))
			}
		}
		if depth > 4 {
			return nil
		}
		for _, sub := range []string{"modules", "worktrees"} {
			// Not through a link: its entries are not this
			// repository's (the check after the call puts it aside).
			if fi, err := os.Lstat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
				continue
			}
			ents, err := os.ReadDir(filepath.Join(dir, sub))
			if err != nil {
				continue
			}
			for _, e := range ents {
				child := filepath.Join(dir, sub, e.Name())
				p.GitSubs = append(p.GitSubs, child)
				if e.IsDir() {
					if err := visit(child, depth+1); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := visit(gitDir, 0); err != nil {
		return err
	}
	return fs.SkipDir
}

// protect adds path to p.Protected. A symbolic link cannot be protected
// by a mount (the mount would land on its target, and the process could
// replace the link), so its directory is protected instead; a link right
// in the working directory cannot be, and fails the plan. The link, or
// the directory, is recorded in lt: what it leads to is protected after
// the walk (linkTargets.protect).
func protect(p *Profile, lt *linkTargets, path string, d fs.DirEntry) error {
	if d.Type()&fs.ModeSymlink != 0 {
		parent := filepath.Dir(path)
		if parent == p.Cwd || !pathrisk.Within(parent, p.Cwd) {
			rel, _ := filepath.Rel(p.Cwd, path)
			return fmt.Errorf("%w: %q (a process could replace the link and escape the protection)", ErrUnprotectable, rel)
		}
		lt.links = append(lt.links, path)
		path = parent
	} else if d.IsDir() {
		lt.dirs = append(lt.dirs, path)
	}
	p.Protected = append(p.Protected, path)
	return nil
}

// gitConfig reports whether path is a git directory's config file.
func gitConfig(path string) bool {
	if filepath.Base(path) != "config" {
		return false
	}
	dir := filepath.Dir(path)
	return filepath.Base(dir) == ".git" || filepath.Base(filepath.Dir(dir)) == "modules" || filepath.Base(filepath.Dir(dir)) == "worktrees"
}

// DefaultCaches returns the build caches a workspace process may fill,
// from the environment it gets (getenv) and the home directory: the Go
// build cache ($GOCACHE, else ~/.cache/go-build) and pip's cache
// (~/.cache/pip). The process reads the host's entries, so a build is not
// done again from nothing, but what it writes lands in a private overlay
// layer dropped when it ends: an entry it planted would be linked into the
// next build on the host (Go checks the size of a cached output, not its
// hash), so none reaches the host.
func DefaultCaches(home string, getenv func(string) string) []string {
	cacheHome := getenv("XDG_CACHE_HOME")
	if cacheHome == "" && home != "" {
		cacheHome = filepath.Join(home, ".cache")
	}
	var out []string
	if g := getenv("GOCACHE"); g != "" && filepath.IsAbs(g) {
		out = append(out, g)
	} else if cacheHome != "" {
		out = append(out, filepath.Join(cacheHome, "go-build"))
	}
	if cacheHome != "" {
		out = append(out, filepath.Join(cacheHome, "pip"))
	}
	return out
}
