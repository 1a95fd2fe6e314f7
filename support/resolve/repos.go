package resolve

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/shellrisk"
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
//
// subDiff says the user's own git configuration sets diff.submodule=diff
// (userSubmoduleDiff): git diff then runs git diff inside every changed
// submodule that is checked out, between two of its commits, and that
// child opens the submodules those commits name, by the "gitdir:" files
// or git directories it finds in the submodule's working tree. Those are
// not found through any index, so a repository with a submodule checked
// out is not judged.
func Repos(dirs []string, envKey string, isSecret func(abs string) bool, subDiff bool) map[string]permission.Repo {
	var m map[string]permission.Repo
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		if m == nil {
			m = make(map[string]permission.Repo)
		}
		m[d] = repoOf(d, envKey, isSecret, subDiff)
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
	env := pathrisk.Env{Cwd: req.Cwd, Home: req.Home, UserHomes: req.UserHomes, ConfigHome: req.ConfigHome, DataDir: req.DataDir}
	homes := make([]string, 0, len(req.UserHomes))
	for u, h := range req.UserHomes {
		homes = append(homes, u+"="+h)
	}
	sort.Strings(homes)
	key := strings.Join(append([]string{req.Cwd, req.Home, req.ConfigHome}, homes...), "\x00")
	// A tracked file that is a hard link to a credential file counts as
	// one (git diff prints it). The judgement is kept by the index's
	// stamp, so a tracked file swapped for such a link without the index
	// being written again is only found once the index changes.
	return Repos(dirs, key, func(abs string) bool {
		return pathrisk.IsCredential(abs, env) || hardLinkedCredential(abs, env) != ""
	}, userSubmoduleDiff(req.Home, req.ConfigHome))
}

// repoOf finds the repository holding dir and judges its index.
func repoOf(dir, envKey string, isSecret func(string) bool, subDiff bool) permission.Repo {
	budget := maxSubmodules
	return repoDepth(dir, envKey, isSecret, subDiff, 0, &budget)
}

// repoDepth judges the index of the repository holding dir and, when it
// tracks no credential file, the indexes of the submodules checked out in
// it, at any depth: git diff prints their changes too when diff.submodule
// is diff, which the user's own configuration may say.
func repoDepth(dir, envKey string, isSecret func(string) bool, subDiff bool, depth int, budget *int) permission.Repo {
	root, gitDir, ok := findRepo(dir)
	if !ok {
		return permission.Repo{Checked: true} // in no repository
	}
	if gitDir == "" || !ownGitDir(root, gitDir) {
		return permission.Repo{} // not read: see findRepo and ownGitDir
	}
	common, ok := commonDir(root, gitDir)
	if !ok || foreignParts(common) != "" || foreignParts(gitDir) != "" {
		return permission.Repo{} // another repository's objects or index, or links git reads through
	}
	path := filepath.Join(gitDir, "index")
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxIndexBytes {
		// Missing, or not a file to read (a .git file of the repository
		// may name any directory: a fifo there would block the gate).
		return permission.Repo{}
	}
	// Every submodule's index is parsed: one request parses at most
	// maxIndexBytes in all (200 submodules sharing one large index through
	// hard links took 36 s).
	if *budget -= 1 + int(st.Size()/(1<<20)); *budget < 0 {
		return permission.Repo{}
	}
	k := repoKey{index: path, env: envKey, size: st.Size(), mtime: st.ModTime().UnixNano()}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		k.ino = s.Ino
	}
	// The configuration says how long the index's object ids are; it is
	// not part of the key, so it is read every time. What else it sets is
	// judged for GitConfigs.
	hashLen := scanConfig(common, root).hashLen
	r, ok := repoCache.get(k)
	if !ok {
		r = judgeIndex(path, root, hashLen, isSecret)
		repoCache.put(k, r)
	}
	if !r.Checked || r.Secret != "" {
		return r
	}
	links, ok := gitlinks(path, hashLen)
	if *budget -= len(links); !ok || *budget < 0 || depth >= maxSubmoduleDepth && len(links) > 0 {
		return permission.Repo{}
	}
	for _, l := range links {
		sroot := root + "/" + l
		if _, err := os.Lstat(sroot + "/.git"); errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// Not checked out. If git keeps its git directory (under this
			// working tree's git directory), git diff with
			// diff.submodule=diff prints every file of it as deleted, and
			// those files are not judged here.
			if ents, err := os.ReadDir(filepath.Join(gitDir, "modules")); err == nil && len(ents) > 0 {
				return permission.Repo{}
			}
			continue
		}
		if subDiff {
			return permission.Repo{Why: "your git configuration sets diff.submodule=diff, with which git diff runs git diff inside its submodule " + strconv.Quote(l) + ", between commits whose own submodules the engine does not read"}
		}
		if sr := repoDepth(sroot, envKey, isSecret, subDiff, depth+1, budget); !sr.Checked || sr.Secret != "" {
			return sr
		}
	}
	return r
}

// GitConfigs judges, for each directory the engine asks about
// (permission.GitConfigsToRead), the configuration git reads when it runs
// there: "" when it sets nothing with which git runs a program or reads
// outside the repository, else a clause saying what it sets or why it
// was not read (see permission.Request.GitConfigs). That is the repository's own config and
// config.worktree, and the same of every submodule checked out in its
// working tree, at any depth: git status and git diff look into each of
// them with the submodule's own configuration. A directory in no
// repository is clean. Nothing is run.
func GitConfigs(dirs []string) map[string]string {
	var m map[string]string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		if m == nil {
			m = make(map[string]string)
		}
		if _, done := m[d]; done {
			continue
		}
		root, gitDir, ok := findRepo(d)
		if !ok {
			m[d] = ""
			continue
		}
		budget := maxSubmodules
		m[d] = judgeConfig(root, gitDir, 0, &budget)
	}
	return m
}

// GitConfigsFor judges the configurations of the repositories req runs
// git in (permission.GitConfigsToRead), for req.GitConfigs.
func GitConfigsFor(req permission.Request) map[string]string {
	dirs := permission.GitConfigsToRead(req)
	if len(dirs) == 0 {
		return nil
	}
	return GitConfigs(dirs)
}

// maxSubmodules bounds the submodules read for one repository, and
// maxSubmoduleDepth how deep they nest; a repository with more asks.
const (
	maxSubmodules     = 256
	maxSubmoduleDepth = 8
	// maxModuleDirDepth and maxModuleDirs bound the walk of a modules
	// directory, which looks into every directory (a submodule's name may
	// hold slashes, and put its git directory inside another's).
	maxModuleDirDepth = 32
	maxModuleDirs     = 20000
)

// judgeConfig judges the configuration of the repository at root with git
// directory gitDir, then that of each submodule its index lists that is
// checked out (has a .git), and that of every submodule git directory kept
// under its modules directory, checked out or not: git diff with
// diff.submodule=diff opens those too. budget counts down the submodules
// and gitlinks read.
func judgeConfig(root, gitDir string, depth int, budget *int) string {
	if gitDir == "" {
		return "its configuration was not read: its .git is a link, a .git file naming no directory or a directory git would not take for a repository, or the directory itself looks like a git directory"
	}
	if !ownGitDir(root, gitDir) {
		return "its .git file names another repository's git directory (" + gitDir + "), whose files git would print as this project's"
	}
	common, ok := commonDir(root, gitDir)
	if !ok {
		return "its configuration was not read: its git directory shares another's through commondir, and is not a working tree git worktree made of it"
	}
	if r := foreignParts(common); r != "" {
		return r
	}
	if common != gitDir {
		if r := foreignParts(gitDir); r != "" {
			return r
		}
	}
	hashLen, risky := readGitConfig(common, root)
	if risky == "" && common != gitDir {
		// A linked working tree's own config.worktree (and hooks, which git
		// takes from the common directory: looked in all the same).
		_, risky = readGitConfig(gitDir, root)
	}
	if risky != "" {
		return risky
	}
	// Each submodule's index is parsed: the megabytes parsed count
	// against the budget too (many submodules sharing one large index
	// through hard links defeat the cache).
	if st, err := os.Stat(filepath.Join(gitDir, "index")); err == nil {
		if *budget -= 1 + int(st.Size()/(1<<20)); *budget < 0 {
			return tooManySubmodules
		}
	}
	links, ok := gitlinks(filepath.Join(gitDir, "index"), hashLen)
	if !ok {
		return "its index, which lists the submodules git looks into with their own configurations, could not be read whole"
	}
	*budget -= len(links)
	if *budget < 0 || depth >= maxSubmoduleDepth && len(links) > 0 {
		return tooManySubmodules
	}
	for _, l := range links {
		sroot := root + "/" + l
		if r, exists, err := walkPath(sroot); err != nil {
			return "in its submodule " + strconv.Quote(l) + ", the path could not be resolved"
		} else if !exists {
			continue // not checked out
		} else {
			sroot = r
		}
		p := sroot + "/.git"
		st, err := os.Lstat(p)
		var sub string
		switch {
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			continue // not checked out: git does not look into it
		case err != nil:
		case st.IsDir():
			if isGitDirectory(p) {
				sub = p
			}
		case st.Mode().IsRegular():
			if g := gitFileDir(sroot, p); g != "" && isGitDirectory(g) {
				sub = g
			}
		}
		if c := judgeConfig(sroot, sub, depth+1, budget); c != "" {
			return "in its submodule " + strconv.Quote(l) + ", " + c
		}
	}
	dirs := maxModuleDirs
	if common != gitDir {
		// A linked working tree: git keeps the submodules it initialised
		// in its own git directory; those of the main working tree, whose
		// root is the common directory's parent, in the common one.
		if c := judgeModules(root, filepath.Join(gitDir, "modules"), depth, budget, &dirs); c != "" {
			return c
		}
		if c := judgeModules(filepath.Dir(common), filepath.Join(common, "modules"), depth, budget, &dirs); c != "" {
			return c
		}
	} else if c := judgeModules(root, filepath.Join(common, "modules"), depth, budget, &dirs); c != "" {
		return c
	}
	return moduleGitFiles(root, filepath.Join(gitDir, "modules"), filepath.Join(common, "modules"))
}

// ownGitDir reports whether gitDir, found for the working tree root, is
// that working tree's own: its .git directory, a directory inside it, a
// submodule's git directory under the .git/modules of a repository
// holding root, or one with a commondir (which commonDir then holds to the
// layout git worktree makes). A .git file naming any other repository's
// git directory would make git show and git log print that repository's
// files as this project's.
func ownGitDir(root, gitDir string) bool {
	if gitDir == root+"/.git" {
		return true // findRepo's own find: root and gitDir are resolved
	}
	r, exists, ok := physical(root, ".")
	if !ok || !exists {
		return false
	}
	if gitDir == r || strings.HasPrefix(gitDir, r+"/") {
		return true
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "commondir")); err == nil {
		return true
	}
	if i := strings.LastIndex(gitDir, "/.git/modules/"); i >= 0 {
		super := gitDir[:i]
		if r == super || strings.HasPrefix(r, super+"/") {
			return true
		}
	}
	// A submodule a linked working tree initialised keeps its git
	// directory under that tree's own, COMMON/worktrees/ID/modules/NAME,
	// whose gitdir file names the linked tree's .git.
	if i := strings.LastIndex(gitDir, "/modules/"); i >= 0 {
		wt := gitDir[:i]
		if filepath.Base(filepath.Dir(wt)) != "worktrees" {
			return false
		}
		back, err := readSmall(filepath.Join(wt, "gitdir"), 4096)
		if err != nil {
			return false
		}
		dotGit, exists, ok := physical(wt, strings.TrimRight(string(back), "\r\n"))
		if !ok || !exists || filepath.Base(dotGit) != ".git" {
			return false
		}
		super := filepath.Dir(dotGit)
		return r == super || strings.HasPrefix(r, super+"/")
	}
	return false
}

// commonDir returns the directory whose config, hooks and modules git
// uses for the git directory gitDir of the working tree root: gitDir
// itself, or for a working tree git worktree added, the main repository's
// git directory its commondir names. Such a git directory is taken only in
// the layout git worktree makes, gitDir being COMMON/worktrees/ID and its
// gitdir file naming root's .git; ok is false otherwise (a .git file made
// to borrow another repository's git directory).
func commonDir(root, gitDir string) (common string, ok bool) {
	b, err := readSmall(filepath.Join(gitDir, "commondir"), 4096)
	if errors.Is(err, os.ErrNotExist) {
		return gitDir, true
	}
	if err != nil {
		return "", false
	}
	c, exists, ok := physical(gitDir, strings.TrimRight(string(b), "\r\n"))
	if !ok || !exists || !isGitDirectory(c) || filepath.Dir(gitDir) != filepath.Join(c, "worktrees") {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(c, "commondir")); err == nil {
		return "", false
	}
	back, err := readSmall(filepath.Join(gitDir, "gitdir"), 4096)
	if err != nil {
		return "", false
	}
	want, wantExists, ok1 := physical(root, ".git")
	got, exists, ok := physical(gitDir, strings.TrimRight(string(back), "\r\n"))
	if !ok1 || !wantExists || !ok || !exists || got != want {
		return "", false
	}
	return c, true
}

const tooManySubmodules = "it has more submodules, or submodules nested deeper, than the engine reads the configurations of"

// judgeModules judges the configuration of every git directory beneath
// dir, the modules directory of the repository at root. A submodule's name
// may hold slashes, so its git directory may lie in any directory beneath,
// a git directory's own parts included (a/hooks/x): every directory is
// looked into, up to dirs of them. Their working trees may be anywhere
// inside root (or absent), so core.worktree counts only when it leads
// outside root.
func judgeModules(root, dir string, depth int, budget, dirs *int) string {
	w := &modulesWalk{root: root, budget: budget, dirs: dirs}
	return w.walk(dir, depth, false, false)
}

// userSubmoduleDiff reports whether the user's own git configuration, as
// git reads it for a shell command (the system's /etc/gitconfig, then
// $XDG_CONFIG_HOME/git/config, then ~/.gitconfig, includes followed
// whatever their conditions), leaves diff.submodule at diff. A file that
// cannot be read whole counts as saying so. $GIT_CONFIG_GLOBAL and
// $GIT_CONFIG_SYSTEM, which would name other files, are not known here.
func userSubmoduleDiff(home, configHome string) bool {
	files := []string{"/etc/gitconfig"}
	if configHome == "" && home != "" {
		configHome = home + "/.config"
	}
	if configHome != "" {
		files = append(files, configHome+"/git/config")
	}
	if home != "" {
		files = append(files, home+"/.gitconfig")
	}
	value, read := "", 0
	var file func(path string, depth int) bool
	file = func(path string, depth int) bool {
		if read++; read > maxConfigFiles || depth >= maxIncludeDepth {
			return false
		}
		b, err := readSmall(path, 1<<20)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return true // git reads a missing file as empty
		case err != nil:
			return false
		}
		ok := true
		if err := parseGitConfig(b, func(v gitConfigVar) {
			switch {
			case (v.section == "include" || v.section == "includeif") && v.key == "path":
				p := v.value
				switch {
				case strings.HasPrefix(p, "~/") && home != "":
					p = home + p[1:]
				case strings.HasPrefix(p, "~") || strings.HasPrefix(p, "%("):
					ok = false
					return
				case !filepath.IsAbs(p):
					p = filepath.Join(filepath.Dir(path), p)
				}
				if !file(p, depth+1) {
					ok = false
				}
			case v.section == "diff" && v.key == "submodule":
				value = v.value
			}
		}); err != nil {
			return false
		}
		return ok
	}
	for _, f := range files {
		if !file(f, 0) {
			return true
		}
	}
	return strings.EqualFold(value, "diff")
}

// maxModuleNames bounds the names of .gitmodules looked up.
const maxModuleNames = 4096

// moduleGitFiles looks where git looks for the git directory of a
// submodule that is not checked out (git diff, git show and git log -p
// open it with diff.submodule=diff): modules/NAME, NAME from the working
// tree's .gitmodules. A file there ("gitdir: PATH") leads git to a git
// directory anywhere, unjudged, and the walk of the modules directories
// cannot tell one from the files of a git directory it may lie in (a
// name like a/objects/ab/x) without reading them all. Without a
// .gitmodules in the working tree git takes the names from the index's
// or HEAD's, which are not read here: then any modules directory makes
// the gate ask.
func moduleGitFiles(root string, modules ...string) string {
	var present []string
	for i, m := range modules {
		if slices.Contains(modules[:i], m) {
			continue // a repository's own git directory is its common one too: one lstat
		}
		var st unix.Stat_t
		if err := unix.Lstat(m, &st); err == nil {
			present = append(present, m)
		}
	}
	if len(present) == 0 {
		return ""
	}
	path := root + "/.gitmodules"
	var st unix.Stat_t
	switch err := unix.Lstat(path, &st); {
	case errors.Is(err, unix.ENOENT):
		return "it keeps submodules' git directories but no .gitmodules in its working tree, so git takes their names from the index or HEAD, which the engine does not read"
	case err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG:
		return "its .gitmodules, which names where git finds its submodules' git directories, is not a plain file"
	}
	b, err := readSmall(path, 1<<20)
	if err != nil {
		return "its .gitmodules could not be read"
	}
	var names []string
	if err := parseGitConfig(b, func(v gitConfigVar) {
		if v.section == "submodule" && v.subsection != "" && !slices.Contains(names, v.subsection) {
			names = append(names, v.subsection)
		}
	}); err != nil {
		return "its .gitmodules could not be read whole"
	}
	if len(names) > maxModuleNames {
		return tooManySubmodules
	}
	for _, name := range names {
		if !validModuleName(name) {
			continue // git refuses such a name
		}
		for _, m := range present {
			var st unix.Stat_t
			err := unix.Lstat(m+"/"+name, &st)
			if err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
				return "where git looks for its submodule " + strconv.Quote(name) + "'s git directory (" + m + "/" + name + ") lies a file, which git would follow (\"gitdir: PATH\") to a git directory elsewhere"
			}
		}
	}
	return ""
}

// validModuleName is git's check_submodule_name: a name is refused only
// when it is empty or has a ".." component, '/' and '\\' both separating
// components. A leading '/' is taken: git opens modules//x.
func validModuleName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if c == ".." {
			return false
		}
	}
	return true
}

// modulesWalk is one judgeModules.
type modulesWalk struct {
	root         string
	budget, dirs *int
}

// walk is judgeModules at dir, which is itself judged when it looks like
// a git directory (inModules: it lies beneath the modules directory).
// Each directory is listed once, from the cache when it is unchanged: a
// walk of 40 submodules' git directories (about 270 directories each,
// objects/XX mostly) then costs an lstat a directory. Each is read when
// it is not remembered, even one with no subdirectory (its link count
// would say so): a link inside it may lead git to a git directory
// elsewhere, for a submodule named a/objects/ab/x.
func (w *modulesWalk) walk(dir string, depth int, inModules, inGitDir bool) string {
	root, budget, dirs := w.root, w.budget, w.dirs
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return ""
	} else if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		// A link beneath was named by the listing of its parent, and the
		// modules directory as a link by the git directory's link check.
		return "its submodules' git directories (" + dir + ") could not be read"
	}
	entries := 0
	l, link, ok := listDir(dir, &st, &entries, maxGitDirEntries)
	switch {
	case link != "":
		// git opens .git/modules/NAME through a link: one is not
		// followed here, so it is not read.
		return "its submodules' git directories hold a link (" + link + "), which is not read"
	case !ok:
		return "its submodules' git directories (" + dir + ") could not be read"
	}
	gitDir := inModules && l.gitish
	if l.files && !gitDir && !inGitDir {
		// Outside the submodules' git directories only directories are
		// found (the parts of a name holding slashes). git opens
		// .git/modules/NAME as a git directory, or as a "gitdir: PATH"
		// file leading to one anywhere, whose configuration would not be
		// the one judged here.
		return "its submodules' git directories (" + dir + ") hold a file where git looks for a submodule's git directory, which git would follow to another one (\"gitdir: PATH\")"
	}
	if gitDir {
		if *budget--; *budget < 0 {
			return tooManySubmodules
		}
		if l.commondir {
			return "in its submodule's git directory " + strconv.Quote(dir) + ", a commondir names another git directory, whose configuration git reads instead"
		}
		c := scanConfig(dir, "") // no working tree known: its hooks do not run for diff
		risky := c.risky
		if risky == "" {
			risky = moduleWorktree(dir, root, c.worktrees)
		}
		if risky == "" {
			risky = foreignParts(dir)
		}
		if risky != "" {
			return "in its submodule's git directory " + strconv.Quote(dir) + ", " + risky
		}
	}
	for _, name := range l.subdirs {
		if depth >= maxModuleDirDepth {
			return tooManySubmodules
		}
		// A submodule named a/b keeps its git directory at modules/a/b,
		// inside that of a submodule named a, and a/hooks/x or
		// a/objects/ab/x inside a's own parts: every directory is looked
		// into.
		if *dirs--; *dirs < 0 {
			return tooManySubmodules
		}
		if c := w.walk(filepath.Join(dir, name), depth+1, true, inGitDir || gitDir); c != "" {
			return c
		}
	}
	return ""
}

// maxGitDirEntries bounds the entries gitDirLink looks at (a repository
// may hold tens of thousands of loose refs).
const maxGitDirEntries = 200000

// gitDirLink names the first symbolic link among the parts of the git
// directory gitDir that git reads and prints from: its own entries
// (HEAD, packed-refs, shallow, BISECT_START, info …), the state of a
// rebase, objects with its pack directory, and objects/info (commit-graph
// chains), refs, logs and linked working trees' records at any depth.
// Loose objects inside objects/XX are not looked at: a link there serves
// another repository's object only to one who knows its id and path.
// git follows such a link, and git status, git branch and git log
// then print what lies at its end (a key, a credential line) or another
// repository's objects. "" when there is none.
func gitDirLink(gitDir string) (string, bool) {
	seen := 0
	var top []string // the git directory's own subdirectories, as just seen
	var look func(dir string, deep bool) (string, bool)
	look = func(dir string, deep bool) (string, bool) {
		var st unix.Stat_t
		if err := unix.Lstat(dir, &st); errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return "", true
		} else if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return "", false // a link here was seen by the scan of its parent
		}
		l, link, ok := listDir(dir, &st, &seen, maxGitDirEntries)
		if link != "" || !ok {
			return link, ok
		}
		subdirs := l.subdirs
		if dir == gitDir {
			top = subdirs
		}
		if deep {
			for _, sub := range subdirs {
				if l, ok := look(filepath.Join(dir, sub), true); l != "" || !ok {
					return l, ok
				}
			}
		}
		return "", true
	}
	if l, ok := look(gitDir, false); l != "" || !ok {
		return l, ok
	}
	for _, d := range []struct {
		rel  string
		deep bool
	}{{"rebase-merge", false}, {"rebase-apply", false}, {"objects", false}, {"objects/pack", false},
		{"objects/info", true}, {"info", false}, {"refs", true}, {"logs", true}, {"worktrees", true}} {
		first, _, _ := strings.Cut(d.rel, "/")
		if !slices.Contains(top, first) {
			continue // the git directory, as just listed or found unchanged, has no such directory
		}
		if l, ok := look(filepath.Join(gitDir, d.rel), d.deep); l != "" || !ok {
			return l, ok
		}
	}
	return "", true
}

// linkFree remembers directories gitDirLink found holding no link, with
// their subdirectories, as they stood; git status checked again and again
// then costs one lstat a directory, not a read of it (a git directory's
// objects hold 257 entries).
var linkFree = newStampCache[dirEntryList](maxCachedDirs)

type dirEntryList struct {
	subdirs []string
	// gitish: the directory holds HEAD, and objects, refs or commondir
	// (mayBeGitDir, answered from its entries); commondir: it holds a
	// commondir; files: it holds an entry neither a directory nor a link.
	gitish, commondir, files bool
}

// maxCachedDirs bounds linkFree: a walk of .git/modules looks at every
// directory of every submodule's git directory (about 270 each).
const maxCachedDirs = 32768

// listDir lists the directory dir, which lstat found to be a directory
// with st: its subdirectories, and whether it looks like a git directory.
// It reads dir only when the cache has no listing with the same stamp.
// link names a symbolic link among its entries (nothing is remembered of
// such a directory). *entries counts the entries read, up to max: past it
// ok is false. ok is false too when dir cannot be read.
func listDir(dir string, st *unix.Stat_t, entries *int, max int) (l dirEntryList, link string, ok bool) {
	stamp := dirStamp(st)
	if l, ok := linkFree.get(dir, stamp); ok {
		return l, "", true
	}
	ents, err := readDirUnsorted(dir)
	if err != nil {
		return l, "", false
	}
	var head, parts bool
	for _, e := range ents {
		if *entries++; *entries > max {
			return l, "", false
		}
		if e.Type()&os.ModeSymlink != 0 {
			return l, filepath.Join(dir, e.Name()), true
		}
		if e.IsDir() {
			l.subdirs = append(l.subdirs, e.Name())
		} else {
			l.files = true
		}
		switch e.Name() {
		case "HEAD":
			head = true
		case "objects", "refs":
			parts = true
		case "commondir":
			parts, l.commondir = true, true
		}
	}
	l.gitish = head && parts
	linkFree.put(dir, stamp, l)
	return l, "", true
}

// readDirUnsorted is os.ReadDir without the sort: the entries' types come
// from the directory itself, and their order does not matter here.
func readDirUnsorted(dir string) ([]os.DirEntry, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// foreignParts says what in the git directory gitDir makes git read and
// print what is not this repository's: objects borrowed through
// objects/info/alternates, or a link among the parts gitDirLink looks at
// (objects itself a link included). "" when there is none. Every git
// directory the gate reads is held to it.
func foreignParts(gitDir string) string {
	if alternates(gitDir) {
		return alternatesRisk
	}
	l, ok := gitDirLink(gitDir)
	switch {
	case !ok:
		return "its git directory could not be looked through for links"
	case l != "":
		return "its git directory holds a link (" + l + "), which git reads through and prints what it leads to"
	}
	return swappedObjects(gitDir)
}

// maxPackedRefs bounds the packed-refs file read for swappedObjects.
const maxPackedRefs = 64 << 20

// swappedObjects names refs with which git prints objects the names it
// shows do not lead to: refs/replace/* (git shows the replacement under
// the replaced object's name: a committed .env as README's content in git
// diff and git blame) and refs/notes/* (plain git log prints the note
// blobs of the commits it lists). A tarball's git directory may hold
// either, loose or in packed-refs. "" when there are none.
func swappedObjects(gitDir string) string {
	const why = ", with which git prints objects other than those the names it shows lead to (git log, git diff, git blame)"
	for _, d := range []string{"replace", "notes"} {
		ents, err := readDirUnsorted(filepath.Join(gitDir, "refs", d))
		switch {
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		case err != nil:
			return "its refs/" + d + " could not be read"
		case len(ents) > 0:
			return "its git directory holds refs/" + d + why
		}
	}
	path := filepath.Join(gitDir, "packed-refs")
	var st unix.Stat_t
	switch err := unix.Lstat(path, &st); {
	case errors.Is(err, unix.ENOENT):
		return ""
	case err != nil:
		return "its packed-refs could not be read"
	}
	// A repository's packed-refs may hold thousands of refs: what was
	// found in it is remembered while it is unchanged.
	stamp := fileStamp(&st)
	if r, ok := packedRefs.get(path, stamp); ok {
		return r
	}
	b, err := readSmall(path, maxPackedRefs)
	if err != nil {
		return "its packed-refs could not be read"
	}
	r := ""
	for _, d := range []string{"replace", "notes"} {
		if bytes.Contains(b, []byte(" refs/"+d+"/")) {
			r = "its packed-refs holds refs/" + d + why
			break
		}
	}
	packedRefs.put(path, stamp, r)
	return r
}

// packedRefs remembers what swappedObjects found in packed-refs files.
var packedRefs = newStampCache[string](4096)

const alternatesRisk = "its objects come partly from elsewhere (objects/info/alternates, or objects a link), so what git prints of them is not this project's"

// alternates reports whether the git directory gitDir takes objects from
// elsewhere through an objects/info/alternates file: git show and git log
// then print another repository's files as this one's.
func alternates(gitDir string) bool {
	_, err := os.Lstat(filepath.Join(gitDir, "objects", "info", "alternates"))
	return !errors.Is(err, os.ErrNotExist)
}

// moduleWorktree judges the core.worktree values of the submodule git
// directory gitDir (which scanConfig, not knowing its working tree, let
// pass): "" when each leads inside root.
func moduleWorktree(gitDir, root string, worktrees []string) string {
	for _, w := range worktrees {
		if !insideRoot(relTo(gitDir, w), root) {
			return "its own configuration sets core.worktree, a working tree outside the repository, whose files git reads"
		}
	}
	return ""
}

// relTo makes p absolute against base, joined and not cleaned.
func relTo(base, p string) string {
	if strings.HasPrefix(p, "/") || p == "" {
		return p
	}
	return base + "/" + p
}

// gitlinks returns the paths of the submodules (gitlink entries) the
// index at path lists, ok false when it exists but was not read whole. A
// missing index lists none.
func gitlinks(path string, hashLen int) (links []string, ok bool) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, true
	}
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxIndexBytes {
		return nil, false
	}
	k := repoKey{index: path, env: "gitlinks", size: st.Size(), mtime: st.ModTime().UnixNano()}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		k.ino = s.Ino
	}
	if r, ok := linkCache.get(k); ok {
		return r.links, r.ok
	}
	f, err := openIndex(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	err = readIndexNames(f, st.Size(), hashLen, func(name string, mode uint32) bool {
		if mode&0o170000 == 0o160000 {
			links = append(links, name)
		}
		return true
	})
	r := linkList{links: links, ok: err == nil}
	linkCache.put(k, r)
	return r.links, r.ok
}

// readGitConfig reads the configuration of the repository with git
// directory gitDir and working tree root (config, config.worktree) once:
// the length of its object ids (32 bytes when it says objectformat
// sha256, else 20) and a clause naming the first key with which git runs a
// program or reads outside the repository ("" when none; a configuration
// that cannot be read whole counts as such), or the post-index-change hook
// it would run. config.worktree is judged whether or not git reads it
// (extensions.worktreeConfig), and every hooks directory either file names
// is looked in, as well as the git directory's own: more than git uses,
// never less. The user's own configuration (~/.gitconfig) is theirs and
// not looked at.
func readGitConfig(gitDir, root string) (hashLen int, risky string) {
	c := scanConfig(gitDir, root)
	if c.risky == "" && root != "" {
		c.risky = indexHook(gitDir, root, c.hooks)
	}
	return c.hashLen, c.risky
}

// maxIncludeDepth bounds nested includes, as git's own limit does;
// maxConfigFiles and maxConfigBytes bound what one git directory's
// configuration may make the gate read, includes counted: files that each
// include the next many times would otherwise be read without end.
const (
	maxIncludeDepth = 10
	maxConfigFiles  = 64
	maxConfigBytes  = 4 << 20
)

// configScan is what the configuration files of one git directory set,
// their includes followed.
type configScan struct {
	gitDir, root string
	base         string // gitDir resolved by walkPath ("" when it could not be)
	files        int    // files read, includes counted
	bytes        int64  // bytes read
	hashLen      int
	hooks        []string // each core.hooksPath
	worktrees    []string // each core.worktree
	risky        string
}

// scanConfig reads config and config.worktree of gitDir, and every file
// they include (include.path, and includeIf.*.path whatever its condition:
// more than git reads, never less), relative paths taken from the
// including file's directory as git takes them.
func scanConfig(gitDir, root string) configScan {
	// Every caller passes a git directory walkPath resolved (findRepo,
	// gitFileDir, commonDir, a directory entry of one), so files in it are
	// walked from it.
	c := configScan{gitDir: gitDir, root: root, hashLen: 20, base: gitDir}
	for _, name := range []string{"config", "config.worktree"} {
		c.file(filepath.Join(gitDir, name), name, 0)
	}
	return c
}

// file reads the configuration file at built, the path as git builds it
// (a relative include is taken from its directory as written, not from
// where its links lead), opening it where walkPath resolves it.
func (c *configScan) file(built, name string, depth int) {
	var target string
	var exists bool
	var err error
	if rel, ok := strings.CutPrefix(built, c.gitDir+"/"); ok && c.base != "" {
		target, exists, err = walkFrom(c.base, rel)
	} else {
		target, exists, err = walkPath(built)
	}
	if err == nil && !exists {
		return // git reads a missing file, or include, as empty
	}
	if c.files++; c.files > maxConfigFiles {
		if c.risky == "" {
			c.risky = "its own configuration includes more files than the engine reads"
		}
		return
	}
	var b []byte
	if err == nil {
		b, err = readSmall(target, 1<<20)
	}
	if c.bytes += int64(len(b)); c.bytes > maxConfigBytes {
		if c.risky == "" {
			c.risky = "its own configuration, includes counted, is larger than the engine reads"
		}
		return
	}
	if err == nil {
		err = parseGitConfig(b, func(v gitConfigVar) { c.variable(v, built, name, depth) })
	}
	if err != nil && c.risky == "" {
		c.risky = "its configuration could not be read whole (" + name + ")"
	}
}

func (c *configScan) variable(v gitConfigVar, path, name string, depth int) {
	if (v.section == "include" || v.section == "includeif") && v.key == "path" {
		plain := !strings.HasPrefix(v.value, "~") && !strings.HasPrefix(v.value, "%(") && v.value != ""
		switch {
		case c.risky != "" || c.files > maxConfigFiles:
		case !plain:
			c.risky = "its own configuration includes " + strconv.Quote(v.value) + ", which the engine does not read"
		case depth+1 >= maxIncludeDepth:
			c.risky = "its own configuration nests includes deeper than git reads"
		default:
			c.file(relTo(dirOf(path), v.value), "the included "+strconv.Quote(v.value), depth+1)
		}
		return
	}
	switch {
	case v.section == "extensions" && v.key == "objectformat" && depth == 0 && name == "config":
		// git reads extensions from the repository's own config only, and
		// the last value counts.
		c.hashLen = 20
		if strings.EqualFold(v.value, "sha256") {
			c.hashLen = 32
		}
	case v.section == "core" && v.key == "hookspath":
		c.hooks = append(c.hooks, v.value)
	case v.section == "core" && v.key == "worktree":
		c.worktrees = append(c.worktrees, v.value)
	}
	if why := riskyVar(v, c.gitDir, c.root); why != "" && c.risky == "" {
		from := "its own configuration"
		if depth > 0 {
			from += ", in " + name + ","
		}
		c.risky = from + " sets " + v.section + "." + v.key + ", " + why
	}
}

// indexHook names a post-index-change hook in the repository's hooks
// directories (each core.hooksPath, and hooks in the git directory): git
// status runs it whenever it refreshes the index, which it does after any
// file was touched. No other hook runs for a read-only form.
func indexHook(gitDir, root string, hooksPaths []string) string {
	dirs := []string{filepath.Join(gitDir, "hooks")}
	for _, h := range hooksPaths {
		if h == "" {
			continue
		}
		if strings.HasPrefix(h, "~") || strings.HasPrefix(h, "%(") {
			return "its own configuration sets core.hookspath to " + strconv.Quote(h) + ", a hooks directory outside the repository, which is not read"
		}
		dirs = append(dirs, relTo(root, h))
	}
	for i, d := range dirs {
		p := d + "/post-index-change"
		var exists bool
		var err error
		if i == 0 {
			_, exists, err = walkFrom(gitDir, "hooks/post-index-change") // gitDir is resolved
		} else {
			_, exists, err = walkPath(p)
		}
		switch {
		case err != nil && !errors.Is(err, syscall.ENOTDIR):
			return "its hooks directory " + strconv.Quote(d) + " could not be read"
		case err != nil || !exists:
			continue
		}
		return "it has a post-index-change hook (" + p + "), which git status runs when it refreshes the index"
	}
	return ""
}

// openIndex opens the index file at path for reading, without blocking on
// what is not a regular file (a fifo put there after it was looked at).
func openIndex(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotSmallFile}
	}
	return f, nil
}

// errNotSmallFile: readSmall found no regular file of at most its bound.
var errNotSmallFile = errors.New("not a regular file of the size expected")

// readSmall reads the regular file p whole, if it holds at most max bytes.
// It never blocks on what is not a regular file (a fifo in a repository
// the gate is asked about would otherwise stop it), does not follow a link
// in its last component (a link into /proc/self leads elsewhere for the
// gate than for git), and it costs four
// system calls, not the eight of os.ReadFile: git commands are checked
// often. An error for a missing file is os.ErrNotExist.
func readSmall(p string, max int64) ([]byte, error) {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: p, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > max {
		return nil, &os.PathError{Op: "read", Path: p, Err: errNotSmallFile}
	}
	// What is written after the stat is git's to read later either way.
	b := make([]byte, st.Size)
	n := 0
	for n < len(b) {
		m, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: p, Err: err}
		}
		if m == 0 {
			break // it shrank
		}
		n += m
	}
	return b[:n], nil
}

// worktreeIs reports whether core.worktree = value, in the git directory
// gitDir, names root: what a submodule's git directory under
// .git/modules says of the working tree it belongs to.
func worktreeIs(gitDir, value, root string) bool {
	if value == "" || root == "" {
		return false
	}
	a, exists, ok := physical(gitDir, value)
	b, rootExists, rootOK := physical(root, ".")
	return ok && exists && rootOK && rootExists && a == b
}

// riskyVar says how v makes a read-only git command (git status, diff,
// log, show, blame …) run a program or read outside the repository, or ""
// when it does not. Keys that only a push, a fetch or an editor reads are
// not listed: no built-in rule covers those. gitDir and root are the
// repository's git directory and working tree.
func riskyVar(v gitConfigVar, gitDir, root string) string {
	const runs = "with which git runs a program"
	switch v.section {
	case "core":
		switch v.key {
		case "fsmonitor":
			if _, ok := gitBool(v); ok {
				return "" // off, or git's own daemon (git fsmonitor--daemon): no program of the repository's
			}
			return runs + " to list changed files (git status, git diff, git ls-files)"
		case "worktree":
			if root == "" || worktreeIs(gitDir, v.value, root) {
				// A submodule's git directory names its own working tree;
				// with no root known (judgeModules), moduleWorktree judges it.
				return ""
			}
			return "a working tree elsewhere, whose files git reads"
		case "attributesfile":
			return "an attributes file outside the repository, which can name filters and drivers"
		case "notesref":
			return "the notes plain git log prints under each commit, which may be any blob"
		}
	case "notes":
		if v.key == "displayref" {
			return "the notes plain git log prints under each commit, which may be any blob"
		}
	case "diff":
		if v.key == "external" || v.key == "textconv" || v.key == "command" {
			return runs + " on the files' content (git diff, git blame, git show)"
		}
		if v.key == "submodule" && strings.EqualFold(v.value, "diff") {
			return "with which git diff runs git diff inside every changed submodule, comparing commits whose own submodules the engine does not read"
		}
	case "filter":
		if v.key == "clean" || v.key == "smudge" || v.key == "process" {
			return runs + " on the files' content (git status, git diff, git blame)"
		}
	case "gpg":
		if v.key == "program" {
			return runs + " to verify signatures (git log, git show)"
		}
	case "extensions":
		if v.key == "partialclone" {
			return "a partial clone: git fetches missing objects over the network, running ssh or a program the configuration names"
		}
	case "remote":
		if v.key == "promisor" || v.key == "partialclonefilter" {
			return "a partial clone: git fetches missing objects over the network, running ssh or a program the configuration names"
		}
	case "hook":
		return runs + " as a hook"
	case "log", "pretty", "format":
		// Signatures: git checks them by running gpg, which no read-only
		// form given on the command line may ask for (--show-signature,
		// %G placeholders).
		const gpg = "with which git log runs gpg to check commit signatures"
		switch {
		case v.section == "log" && v.key == "showsignature":
			if b, ok := gitBool(v); !ok || b {
				return gpg
			}
		case v.section == "pretty" || v.section == "format" && v.key == "pretty":
			if shellrisk.FormatRunsGpg(v.value) {
				return gpg
			}
		}
	case "mailmap":
		// git log shows as an author's name what the file says before
		// <their email>: a file outside the repository leaks its lines.
		if v.key == "file" && !insideRoot(v.value, root) {
			return "a file outside the repository whose lines git log prints as authors' names"
		}
	case "blame":
		if v.key == "ignorerevsfile" && !insideRoot(v.value, root) {
			return "a file outside the repository that git blame reads, and prints lines of in its errors"
		}
	}
	return ""
}

// gitBool reads v as git reads a boolean.
func gitBool(v gitConfigVar) (value, ok bool) {
	if !v.hasValue {
		return true, true
	}
	switch strings.ToLower(v.value) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0", "":
		return false, true
	}
	return false, false
}

// insideRoot reports whether the path p, relative to root unless
// absolute, leads inside root once its links are resolved in order (a
// missing file is judged by its directory).
func insideRoot(p, root string) bool {
	if p == "" {
		return true
	}
	if strings.HasPrefix(p, "~") || strings.HasPrefix(p, "%(") || root == "" {
		return false
	}
	r, exists, ok := physical(root, ".")
	if !ok || !exists {
		return false
	}
	q, _, ok := physical(root, p)
	return ok && (q == r || strings.HasPrefix(q, r+"/"))
}

// findRepo walks up from dir to the nearest repository as git's own
// discovery does (setup.c): at each directory D, first D/.git, then D
// itself as a bare repository, then the parent. dir is resolved first, as
// git -C and the kernel do (a link before ".." is followed). It returns
// the root of the working tree and the git directory, or gitDir "" when
// the repository cannot be read as git would read it: a .git that is a
// link or stranger, a .git directory git would not take for one (it would
// then look further, at D and above, for a configuration the engine has
// not read), a .git file naming no git directory, a git directory that
// shares another's through commondir, or D itself looking like a git
// directory. ok is false when there is none up to /.
func findRepo(dir string) (root, gitDir string, ok bool) {
	start, exists, err := walkPath(dir)
	if err != nil || !exists {
		return dir, "", true // git -C would fail, or the directory leads under /proc: not read
	}
	for d := start; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		st, err := os.Lstat(p)
		switch {
		case err == nil && st.IsDir():
			if !isGitDirectory(p) {
				return d, "", true
			}
			return d, p, true
		case err == nil && st.Mode().IsRegular():
			g := gitFileDir(d, p)
			if g == "" || !isGitDirectory(g) {
				return d, "", true // git stops here: "invalid gitfile format"
			}
			return d, g, true
		case err == nil, !errors.Is(err, os.ErrNotExist):
			return d, "", true // a link or something stranger: not read
		case mayBeGitDir(d):
			return d, "", true // git's discovery may take d itself for a git directory
		}
		if d == filepath.Dir(d) {
			return "", "", false
		}
	}
}

// isGitDirectory reports whether git surely takes p for a git directory
// (is_git_directory): a HEAD git accepts (a link to refs/…, "ref: refs/…"
// or an object id), and objects and refs it can enter. When it says false
// git may still take p for one, or may not; the caller does not read it.
func isGitDirectory(p string) bool {
	head := filepath.Join(p, "HEAD")
	st, err := os.Lstat(head)
	switch {
	case err != nil:
		return false
	case st.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(head)
		if err != nil || !strings.HasPrefix(t, "refs/") {
			return false
		}
	case st.Mode().IsRegular():
		b, err := readSmall(head, 4096)
		if err != nil || !validHead(string(b)) {
			return false
		}
	default:
		return false
	}
	if _, err := os.Lstat(filepath.Join(p, "commondir")); err == nil {
		return true // its objects and refs are the common directory's (commonDir)
	}
	return unix.Access(filepath.Join(p, "objects"), unix.X_OK) == nil && unix.Access(filepath.Join(p, "refs"), unix.X_OK) == nil
}

// validHead reports whether git reads b as a HEAD (validate_headref): a
// symbolic ref "ref: refs/…" or an object id in hex.
func validHead(b string) bool {
	if rest, ok := strings.CutPrefix(b, "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(rest, " \t\n\r"), "refs/")
	}
	n := 0
	for n < len(b) && strings.IndexByte("0123456789abcdef", b[n]) >= 0 {
		n++
	}
	return n == 40 || n == 64
}

// mayBeGitDir reports whether git may take d for a git directory itself (a
// bare repository, or one made to look so): it has a HEAD of any kind and
// objects, refs or a commondir. It errs towards yes: a yes is not read.
func mayBeGitDir(d string) bool {
	if _, err := os.Lstat(filepath.Join(d, "HEAD")); err != nil {
		return false
	}
	for _, n := range []string{"objects", "refs", "commondir"} {
		if _, err := os.Lstat(filepath.Join(d, n)); err == nil {
			return true
		}
	}
	return false
}

// gitFileDir reads a .git file ("gitdir: PATH", worktrees and submodules)
// and returns the directory it names, its links resolved as git resolves
// them; "" when it names none. Only the line end is trimmed, as git does.
func gitFileDir(root, p string) string {
	b, err := readSmall(p, 4096)
	if err != nil {
		return ""
	}
	s, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
	if !ok || s == "" || strings.ContainsAny(s, "\r\n") {
		return ""
	}
	if !filepath.IsAbs(s) {
		s = root + "/" + s
	}
	r, exists, err := walkPath(s)
	if err != nil || !exists {
		return ""
	}
	return r
}

// processRelative reports whether p is under /proc or /dev/fd, where a
// path names different files for different processes (/proc/self/cwd is
// the gate's working directory for the gate and git's for git).
func processRelative(p string) bool {
	return p == "/proc" || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd")
}

// judgeIndex parses the index at path and returns the first entry that
// isSecret judges a credential.
func judgeIndex(path, root string, hashLen int, isSecret func(string) bool) permission.Repo {
	f, err := openIndex(path)
	if err != nil {
		return permission.Repo{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return permission.Repo{}
	}
	secret := ""
	err = readIndexNames(f, st.Size(), hashLen, func(name string, _ uint32) bool {
		abs := filepath.Join(root, filepath.FromSlash(name))
		if isSecret(abs) {
			secret = abs
			return false
		}
		return true
	})
	if err != nil {
		return permission.Repo{}
	}
	return permission.Repo{Checked: true, Secret: secret}
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
// and again does not parse and judge a large index each time; linkCache
// keeps the submodules of indexes, for git status.
var (
	repoCache = &judgements[permission.Repo]{}
	linkCache = &judgements[linkList]{}
)

// linkList is what gitlinks found in one index.
type linkList struct {
	links []string
	ok    bool
}

// judgements is a bounded cache of what was found in index files.
type judgements[V any] struct {
	mu sync.Mutex
	m  map[repoKey]V
}

func (c *judgements[V]) get(k repoKey) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[k]
	return r, ok
}

func (c *judgements[V]) put(k repoKey, r V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxRepoCache {
		c.m = map[repoKey]V{}
	}
	c.m[k] = r
}
