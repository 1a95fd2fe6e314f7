package resolve_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/resolve"
)

// gitRepo makes a repository with the given files added to its index, with
// the real git (the index format is git's).
func gitRepo(t *testing.T, files ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("init", "-q")
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		run("add", "-f", f)
	}
	return dir
}

// TestReposFindsATrackedSecret: a git diff from the root or from a
// subdirectory learns the repository tracks a credential file, anywhere in
// it; one that tracks none is clean; an untracked secret does not count
// (git diff prints only what the index tracks); a directory in no
// repository tracks nothing; an index that cannot be read is not checked.
func TestReposFindsATrackedSecret(t *testing.T) {
	home := t.TempDir()
	check := func(cwd string) permission.Repo {
		t.Helper()
		info, _ := permission.Builtin("shell")
		req := permission.Request{Tool: info, Args: map[string]any{"command": "git diff"}, Cwd: cwd, Home: home}
		m := resolve.ReposFor(req)
		r, ok := m[cwd]
		if !ok || len(m) != 1 {
			t.Fatalf("ReposFor(git diff in %s) = %v", cwd, m)
		}
		return r
	}
	leaky := gitRepo(t, "src/main.go", "config/.env")
	if r := check(leaky); !r.Checked || r.Secret != filepath.Join(leaky, "config/.env") {
		t.Fatalf("repository tracking config/.env: %+v", r)
	}
	if r := check(filepath.Join(leaky, "src")); !r.Checked || r.Secret != filepath.Join(leaky, "config/.env") {
		t.Fatalf("from a subdirectory: %+v", r)
	}
	clean := gitRepo(t, "src/main.go", "README.md")
	if err := os.WriteFile(filepath.Join(clean, ".env"), []byte("TOKEN=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := check(clean); !r.Checked || r.Secret != "" {
		t.Fatalf("repository tracking no secret (an untracked .env beside): %+v", r)
	}
	// The same index judged again comes from the cache; a change is seen.
	cmd := exec.Command("git", "add", "-f", ".env")
	cmd.Dir = clean
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	if r := check(clean); r.Secret != filepath.Join(clean, ".env") {
		t.Fatalf("after git add .env: %+v", r)
	}
	if r := check(t.TempDir()); !r.Checked || r.Secret != "" {
		t.Fatalf("no repository: %+v", r)
	}
	broken := gitRepo(t, "a.txt")
	if err := os.WriteFile(filepath.Join(broken, ".git", "index"), []byte("DIRC garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := check(broken); r.Checked {
		t.Fatalf("a damaged index was read as checked: %+v", r)
	}
	fresh := gitRepo(t)
	if r := check(fresh); r.Checked {
		t.Fatalf("a repository with no index was read as checked: %+v", r)
	}
}

// indexNames reads the names of the index of repository dir.
func indexNames(t *testing.T, dir string) ([]string, error) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	var names []string
	err = resolve.ReadIndexNames(f, st.Size(), 20, func(n string, _ uint32) bool { names = append(names, n); return true })
	return names, err
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestIndexNamesAsGitListsThem: the index reader gives the names git
// ls-files gives, in versions 2, 3 (extended flags: git add -N) and 4
// (names prefix-compressed), for names of every length around the 8-byte
// padding; a split index is refused as incomplete.
func TestIndexNamesAsGitListsThem(t *testing.T) {
	var files []string
	for n := 1; n <= 20; n++ {
		files = append(files, "d/"+strings.Repeat("x", n))
	}
	files = append(files, "e/deeper/file.go", "é/ü.txt", "z")
	dir := gitRepo(t, files...)
	if err := os.WriteFile(filepath.Join(dir, "later.txt"), []byte("y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-N", "later.txt") // intent to add: an extended flag, version 3
	want := strings.Split(strings.TrimSuffix(gitIn(t, dir, "-c", "core.quotepath=off", "ls-files"), "\n"), "\n")
	for _, v := range []string{"2", "3", "4"} {
		if v == "2" {
			gitIn(t, dir, "rm", "-q", "--cached", "later.txt")
			want = strings.Split(strings.TrimSuffix(gitIn(t, dir, "-c", "core.quotepath=off", "ls-files"), "\n"), "\n")
		}
		gitIn(t, dir, "update-index", "--index-version", v)
		got, err := indexNames(t, dir)
		if err != nil {
			t.Fatalf("version %s: %v", v, err)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("version %s: names\n%q\nwant\n%q", v, got, want)
		}
		if v == "2" {
			gitIn(t, dir, "add", "-N", "later.txt")
			want = strings.Split(strings.TrimSuffix(gitIn(t, dir, "-c", "core.quotepath=off", "ls-files"), "\n"), "\n")
		}
	}
	gitIn(t, dir, "update-index", "--split-index")
	if _, err := indexNames(t, dir); err == nil {
		t.Fatal("a split index was read as whole")
	}
}

// TestIndexV4NamesCannotGrowWithoutBound: a version 4 index whose every
// name repeats the last and adds a byte is refused once a name passes
// git's limit, instead of holding every name (memory quadratic in the
// file's size).
func TestIndexV4NamesCannotGrowWithoutBound(t *testing.T) {
	var b []byte
	b = append(b, "DIRC"...)
	b = append(b, 0, 0, 0, 4)
	n := 20000
	b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	entry := make([]byte, 40+20+2)
	entry[24], entry[25], entry[26], entry[27] = 0, 0, 0x81, 0xa4 // 0100644
	for i := 0; i < n; i++ {
		l := min(i+1, 0xFFF) // the name's length, as git writes it in the flags
		entry[60], entry[61] = byte(l>>8), byte(l)
		b = append(b, entry...)
		b = append(b, 0, 'a', 0) // strip nothing, add "a"
	}
	seen := 0
	err := resolve.ReadIndexNames(strings.NewReader(string(b)), int64(len(b)), 20, func(string, uint32) bool { seen++; return true })
	if err == nil || !strings.Contains(err.Error(), "longer than 4096") {
		t.Fatalf("err = %v after %d names, want a refusal of a name over 4096 bytes", err, seen)
	}
}

// TestReposNotFooledByGitDirShapes: a working directory git takes for a
// git directory (HEAD and commondir, as a bare repository), a .git file
// naming a git directory that shares another's objects (commondir), and a
// gitdir line with a trailing blank (git keeps it) are not read as a clean
// index; each is left unchecked, so git diff is asked.
func TestReposNotFooledByGitDirShapes(t *testing.T) {
	victim := gitRepo(t, ".env")
	info, _ := permission.Builtin("shell")
	check := func(cwd string) permission.Repo {
		t.Helper()
		r, ok := resolve.ReposFor(permission.Request{Tool: info, Args: map[string]any{"command": "git diff"}, Cwd: cwd, Home: t.TempDir()})[cwd]
		if !ok {
			t.Fatalf("git diff in %s: nothing read", cwd)
		}
		return r
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bare := t.TempDir()
	write(filepath.Join(bare, "HEAD"), "ref: refs/heads/master\n")
	write(filepath.Join(bare, "commondir"), filepath.Join(victim, ".git")+"\n")
	if r := check(bare); r.Checked {
		t.Errorf("a directory git takes for a git directory: %+v", r)
	}
	shared := t.TempDir()
	gd := filepath.Join(shared, "gd")
	write(filepath.Join(gd, "HEAD"), "ref: refs/heads/master\n")
	write(filepath.Join(gd, "commondir"), filepath.Join(victim, ".git")+"\n")
	write(filepath.Join(shared, ".git"), "gitdir: gd\n")
	if r := check(shared); r.Checked {
		t.Errorf("a gitdir sharing another repository's objects: %+v", r)
	}
	blank := gitRepo(t, ".env")
	if err := os.Rename(filepath.Join(blank, ".git"), filepath.Join(blank, ".gd ")); err != nil {
		t.Fatal(err)
	}
	decoy, err := os.ReadFile(filepath.Join(gitRepo(t, "a.txt"), ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(blank, ".gd", "index"), string(decoy))
	write(filepath.Join(blank, ".git"), "gitdir: .gd \n")
	if r := check(blank); !r.Checked || r.Secret != filepath.Join(blank, ".env") {
		// git reads ".gd /index", which tracks .env; the clean decoy
		// ".gd/index" must not be what is read.
		t.Errorf("gitdir with a trailing blank: %+v", r)
	}
}

// TestGitConfigsSeeARiskyConfiguration: a repository whose own
// configuration makes git run a program (diff.external, a textconv driver,
// core.fsmonitor) or read outside it (core.worktree), or includes another
// file, is not clean, for git status as for git diff.
func TestGitConfigsSeeARiskyConfiguration(t *testing.T) {
	info, _ := permission.Builtin("shell")
	for _, c := range []struct{ args, want string }{
		{"diff.external /tmp/x.sh", "diff.external"},
		{"diff.img.textconv /tmp/x.sh", "diff.textconv"},
		{"core.worktree ../..", "core.worktree"},
		{"core.fsmonitor /tmp/x.sh", "core.fsmonitor"},
		{"core.fsmonitor false", ""},
		{"core.fsmonitor true", ""}, // git's own daemon, as scalar sets it
		{"core.fsmonitor yes", ""},
		{"include.path /nonexistent/other", ""}, // git reads a missing include as empty
		{"include.path ~/.gitconfig.more", "include.path"},
		{"filter.lfs.process /tmp/x.sh", "filter.process"},
		{"gpg.ssh.program /tmp/x.sh", "gpg.program"},
		{"extensions.partialClone origin", "extensions.partialclone"},
		{"remote.origin.promisor true", "remote.promisor"},
		{"hook.pre-x.command /tmp/x.sh", "hook.command"},
		{"blame.ignoreRevsFile /etc/passwd", "blame.ignorerevsfile"},
		{"log.showSignature true", "log.showsignature"},
		{"log.showSignature false", ""},
		{"format.pretty %h%G?", "format.pretty"},
		{"pretty.sig %GS", "pretty.sig"},
		{"pretty.short %h", ""},
		{"blame.ignoreRevsFile .git-blame-ignore-revs", ""},
		{"core.hooksPath .githooks", ""}, // a hooks directory alone runs nothing for a read
		{"mailmap.file /etc/passwd", "mailmap.file"},
		{"mailmap.file .mailmap", ""},
		{"user.name someone", ""},
	} {
		for _, cmd := range []string{"git diff", "git status", "git log --oneline"} {
			dir := gitRepo(t, "a.txt")
			req := permission.Request{Tool: info, Args: map[string]any{"command": cmd}, Cwd: dir, Home: t.TempDir()}
			if got, ok := resolve.GitConfigsFor(req)[dir]; !ok || got != "" {
				t.Fatalf("%s before git config %s: %q (present %v)", cmd, c.args, got, ok)
			}
			k, v, _ := strings.Cut(c.args, " ")
			gitIn(t, dir, "config", k, v)
			got := resolve.GitConfigsFor(req)[dir]
			if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, "its own configuration sets "+c.want+", ") && !strings.HasPrefix(got, "its own configuration includes ") {
				t.Errorf("%s after git config %s: %q, want it to name %q", cmd, c.args, got, c.want)
			}
		}
	}
}

// TestGitConfigsSeeAnIndexHook: git status runs a post-index-change hook
// whenever it refreshes the index, from the git directory's hooks or from
// core.hooksPath; no other hook runs for a read.
func TestGitConfigsSeeAnIndexHook(t *testing.T) {
	dir := gitRepo(t, "a.txt")
	judge := func() string { return resolve.GitConfigs([]string{dir})[dir] }
	write(t, filepath.Join(dir, ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
	if got := judge(); got != "" {
		t.Fatalf("a pre-commit hook: %q", got)
	}
	write(t, filepath.Join(dir, ".git", "hooks", "post-index-change"), "#!/bin/sh\n")
	if got := judge(); !strings.Contains(got, "post-index-change hook") {
		t.Errorf("post-index-change in .git/hooks: %q", got)
	}
	// With core.hooksPath set git no longer looks in .git/hooks, but the
	// gate does (one in config.worktree may be ignored by git): more
	// than git uses, never less.
	gitIn(t, dir, "config", "core.hooksPath", ".githooks")
	if got := judge(); !strings.Contains(got, "post-index-change hook") {
		t.Errorf("core.hooksPath elsewhere, a hook in .git/hooks: %q", got)
	}
	if err := os.Remove(filepath.Join(dir, ".git", "hooks", "post-index-change")); err != nil {
		t.Fatal(err)
	}
	if got := judge(); got != "" {
		t.Errorf("core.hooksPath elsewhere, no hook: %q", got)
	}
	write(t, filepath.Join(dir, ".githooks", "post-index-change"), "#!/bin/sh\n")
	if got := judge(); !strings.Contains(got, filepath.Join(dir, ".githooks", "post-index-change")) {
		t.Errorf("post-index-change in core.hooksPath: %q", got)
	}
}

// TestGitConfigsReadSubmodules: git status and git diff look into every
// submodule checked out in the working tree with the submodule's own
// configuration, so a program named there makes the superproject unclean,
// whether the submodule's git directory is in its working tree or under
// the superproject's .git/modules; a submodule not checked out is not
// looked into. An index that cannot be read hides which submodules there
// are.
func TestGitConfigsReadSubmodules(t *testing.T) {
	judge := func(dir string) string {
		t.Helper()
		got, ok := resolve.GitConfigs([]string{dir})[dir]
		if !ok {
			t.Fatalf("GitConfigs has no entry for %s", dir)
		}
		return got
	}
	const fsmonitor = "its own configuration sets core.fsmonitor"

	// Embedded: sub/.git is a directory.
	top := gitRepo(t, "a.txt")
	inner := embedded(t, top, "b.txt")
	if got := judge(top); got != "" {
		t.Fatalf("clean submodule: %q", got)
	}
	gitIn(t, inner, "config", "core.fsmonitor", "/tmp/x.sh")
	if got := judge(top); !strings.Contains(got, `in its submodule "sub", `+fsmonitor) {
		t.Errorf("embedded submodule with core.fsmonitor: %q", got)
	}
	if got := judge(inner); !strings.HasPrefix(got, fsmonitor) {
		t.Errorf("git run in the submodule itself: %q", got)
	}

	// Absorbed: sub/.git is a file naming .git/modules/sub.
	top2 := gitRepo(t, "a.txt")
	gitIn(t, top2, "-c", "protocol.file.allow=always", "submodule", "add", "-q", inner, "mod")
	if st, err := os.Lstat(filepath.Join(top2, "mod", ".git")); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("submodule add made no .git file: %v", err)
	}
	if got := judge(top2); got != "" {
		t.Fatalf("clean absorbed submodule: %q", got)
	}
	gitIn(t, filepath.Join(top2, "mod"), "config", "diff.x.textconv", "/tmp/x.sh")
	if got := judge(top2); !strings.Contains(got, `in its submodule "mod", its own configuration sets diff.textconv, `) {
		t.Errorf("absorbed submodule with a textconv driver: %q", got)
	}
	// Not checked out: git status does not look into it, but git diff
	// with diff.submodule=diff opens its git directory under
	// .git/modules, with its configuration.
	if err := os.RemoveAll(filepath.Join(top2, "mod")); err != nil {
		t.Fatal(err)
	}
	if got := judge(top2); !strings.Contains(got, `submodule's git directory`) || !strings.Contains(got, "sets diff.textconv") {
		t.Errorf("submodule not checked out, its git directory's textconv: %q", got)
	}
	gitIn(t, top2, "config", "--file", filepath.Join(top2, ".git", "modules", "mod", "config"), "--unset", "diff.x.textconv")
	if got := judge(top2); got != "" {
		t.Errorf("submodule not checked out, clean: %q", got)
	}

	// A damaged index hides the submodules.
	write(t, filepath.Join(top2, ".git", "index"), "DIRC garbage")
	if got := judge(top2); !strings.Contains(got, "its index") {
		t.Errorf("damaged index: %q", got)
	}
	// No repository: git reads no repository's configuration.
	if got := judge(t.TempDir()); got != "" {
		t.Errorf("in no repository: %q", got)
	}
}

// write makes the file p hold s, and its directory.
func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGitConfigsDoNotBlockOnAFifo: a repository is the attacker's to
// shape, and a fifo where git's configuration belongs must not stop the
// gate; it is not a configuration that was read.
func TestGitConfigsDoNotBlockOnAFifo(t *testing.T) {
	dir := gitRepo(t, "a.txt")
	cfg := filepath.Join(dir, ".git", "config.worktree")
	if err := syscall.Mkfifo(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- resolve.GitConfigs([]string{dir})[dir] }()
	select {
	case got := <-done:
		if !strings.Contains(got, "could not be read whole (config.worktree)") {
			t.Errorf("a fifo as config.worktree: %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("GitConfigs blocked on a fifo")
	}
}

// indexOf builds a version 2 index of one regular file named name (git
// does not check the names of an index it reads, nor, by default, its
// checksum).
func indexOf(name string) []byte {
	b := []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01")
	entry := make([]byte, 40+20+2)
	entry[24], entry[25], entry[26], entry[27] = 0, 0, 0x81, 0xa4 // 0100644
	entry[60], entry[61] = byte(len(name)>>8), byte(len(name))
	b = append(b, entry...)
	b = append(b, name...)
	for n := len(entry) + len(name); ; n++ {
		b = append(b, 0)
		if (n+1)%8 == 0 {
			break
		}
	}
	return append(b, make([]byte, 20)...)
}

// TestIndexNamingOutsideIsNotRead: an index written by hand may name
// ../../x or /etc/x, which git grep and git diff then read; such an index
// is not read, for the secret check nor for the submodules.
func TestIndexNamingOutsideIsNotRead(t *testing.T) {
	info, _ := permission.Builtin("shell")
	for _, name := range []string{"../../notes.txt", "/etc/hostname", "a/../../x", ".git/config", "a/.GIT/x", "ok.txt"} {
		dir := gitRepo(t, "a.txt")
		write(t, filepath.Join(dir, ".git", "index"), string(indexOf(name)))
		req := permission.Request{Tool: info, Args: map[string]any{"command": "git diff"}, Cwd: dir, Home: t.TempDir()}
		r := resolve.ReposFor(req)[dir]
		cfg := resolve.GitConfigs([]string{dir})[dir]
		if name == "ok.txt" {
			if !r.Checked || cfg != "" {
				t.Errorf("an index naming %q: %+v, %q; want it read and clean", name, r, cfg)
			}
			continue
		}
		if r.Checked || cfg == "" {
			t.Errorf("an index naming %q: %+v, %q; want it not read", name, r, cfg)
		}
	}
}

// TestGitConfigsFindTheRepositoryGitFinds: the repository whose
// configuration is judged is the one git's own discovery finds. A .git
// directory git would not take for one (a broken HEAD, nothing inside)
// sends git further, to a directory beside it the model may have filled,
// so it is not read; a directory that looks like a git directory, its HEAD
// a dangling link as git accepts, is not read; a directory reached through
// a link is where git -C goes; a configuration that is a link is not
// followed.
func TestGitConfigsFindTheRepositoryGitFinds(t *testing.T) {
	judge := func(dir string) string {
		t.Helper()
		return resolve.GitConfigs([]string{dir})[dir]
	}
	dir := gitRepo(t, "a.txt")
	if got := judge(dir); got != "" {
		t.Fatalf("a plain repository: %q", got)
	}

	// An empty sub/.git: git walks past it, to the top's configuration.
	if err := os.MkdirAll(filepath.Join(dir, "sub", ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := judge(filepath.Join(dir, "sub")); !strings.Contains(got, "was not read") {
		t.Errorf("an empty .git directory: %q", got)
	}
	// A broken HEAD in the top's .git.
	head := filepath.Join(dir, ".git", "HEAD")
	write(t, head, "garbage\n")
	if got := judge(dir); !strings.Contains(got, "was not read") {
		t.Errorf("a .git with a broken HEAD: %q", got)
	}
	write(t, head, "ref: refs/heads/master\n")

	// A look-alike git directory whose HEAD is a dangling link.
	evil := filepath.Join(dir, "evil")
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(evil, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("refs/heads/main", filepath.Join(evil, "HEAD")); err != nil {
		t.Fatal(err)
	}
	if got := judge(evil); !strings.Contains(got, "was not read") {
		t.Errorf("a look-alike git directory, HEAD a dangling link: %q", got)
	}
	// git -C through a link goes where the link leads.
	if err := os.Symlink("evil/objects", filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	for _, via := range []string{filepath.Join(dir, "docs"), dir + "/docs/.."} {
		if got := judge(via); !strings.Contains(got, "was not read") {
			t.Errorf("%s, into the look-alike: %q", via, got)
		}
	}
	// A configuration that is a link (to /proc/self/cwd/…, which names the
	// gate's directory for the gate and git's for git) is not followed.
	cfg := filepath.Join(dir, ".git", "config")
	if err := os.Rename(cfg, cfg+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/cwd/cfg", cfg); err != nil {
		t.Fatal(err)
	}
	if got := judge(dir); !strings.Contains(got, "holds a link ("+cfg+")") {
		t.Errorf("a configuration that is a link: %q", got)
	}
}

// TestGitConfigsReadLinkedWorkingTrees: in a working tree git worktree
// added, git reads the main repository's config and hooks, and the
// working tree's own config.worktree: the same is judged, so a clean one
// is clean. A .git file made to borrow another repository's git directory
// through commondir, outside the layout git worktree makes, is not read.
func TestGitConfigsReadLinkedWorkingTrees(t *testing.T) {
	judge := func(dir string) string {
		t.Helper()
		return resolve.GitConfigs([]string{dir})[dir]
	}
	main := gitRepo(t, "a.txt")
	gitIn(t, main, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "a")
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, main, "worktree", "add", "-q", wt)
	if got := judge(wt); got != "" {
		t.Fatalf("a clean linked working tree: %q", got)
	}
	gitIn(t, main, "config", "core.fsmonitor", "/tmp/x.sh")
	if got := judge(wt); !strings.Contains(got, "sets core.fsmonitor") {
		t.Errorf("the main repository's config sets core.fsmonitor: %q", got)
	}
	gitIn(t, main, "config", "--unset", "core.fsmonitor")
	gitIn(t, main, "config", "extensions.worktreeConfig", "true")
	gitIn(t, wt, "config", "--worktree", "diff.x.textconv", "/tmp/x.sh")
	if got := judge(wt); !strings.Contains(got, "sets diff.textconv") {
		t.Errorf("the working tree's config.worktree sets a textconv driver: %q", got)
	}
	gitIn(t, wt, "config", "--worktree", "--unset", "diff.x.textconv")
	if got := judge(wt); got != "" {
		t.Fatalf("clean again: %q", got)
	}

	// Another directory whose .git file names the working tree's git
	// directory: it is not that working tree.
	other := t.TempDir()
	gd := strings.TrimPrefix(strings.TrimSpace(readFile(t, filepath.Join(wt, ".git"))), "gitdir: ")
	write(t, filepath.Join(other, ".git"), "gitdir: "+gd+"\n")
	if got := judge(other); !strings.Contains(got, "commondir") {
		t.Errorf("a .git file borrowing a working tree's git directory: %q", got)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGitConfigsFollowIncludes: an include is judged by what it includes,
// from the including file's directory, to git's depth; a program named in
// an included file (or one includeIf names, whatever its condition) counts.
func TestGitConfigsFollowIncludes(t *testing.T) {
	dir := gitRepo(t, "a.txt")
	judge := func() string { return resolve.GitConfigs([]string{dir})[dir] }
	write(t, filepath.Join(dir, "shared.gitconfig"), "[alias]\n\tst = status\n")
	gitIn(t, dir, "config", "include.path", "../shared.gitconfig") // relative to .git/config
	if got := judge(); got != "" {
		t.Fatalf("an include of a clean committed file: %q", got)
	}
	write(t, filepath.Join(dir, "shared.gitconfig"), "[alias]\n\tst = status\n[include]\n\tpath = more.gitconfig\n")
	write(t, filepath.Join(dir, "more.gitconfig"), "[core]\n\tfsmonitor = /tmp/x.sh\n")
	if got := judge(); !strings.Contains(got, "sets core.fsmonitor") || !strings.Contains(got, "more.gitconfig") {
		t.Errorf("a nested include setting core.fsmonitor: %q", got)
	}
	write(t, filepath.Join(dir, "more.gitconfig"), "[includeIf \"onbranch:nothing\"]\n\tpath = more.gitconfig\n")
	if got := judge(); !strings.Contains(got, "deeper") {
		t.Errorf("an include of itself: %q", got)
	}
	write(t, filepath.Join(dir, "more.gitconfig"), "[includeIf \"gitdir:/elsewhere/\"]\n\tpath = evil.gitconfig\n")
	write(t, filepath.Join(dir, "evil.gitconfig"), "[filter \"x\"]\n\tclean = /tmp/x.sh\n")
	if got := judge(); !strings.Contains(got, "sets filter.clean") {
		t.Errorf("an includeIf whose condition does not hold here: %q", got)
	}
}

// TestIndexEntriesReadAsGitReadsThem: git takes a name's length from the
// entry's flags, and masks the type bits of its mode; an entry whose
// flags disagree with where its NUL is (which would hide the next entry
// from this reader, or show git one it does not see), whose padding is not
// NUL, or whose mode git does not write, is refused.
func TestIndexEntriesReadAsGitReadsThem(t *testing.T) {
	read := func(b []byte) error {
		return resolve.ReadIndexNames(strings.NewReader(string(b)), int64(len(b)), 20, func(string, uint32) bool { return true })
	}
	if err := read(indexOf("src/a.go")); err != nil {
		t.Fatalf("a well-formed index: %v", err)
	}
	b := indexOf("src/a.go")
	b[12+61] = 5 // flags: a 5-byte name
	if err := read(b); err == nil || !strings.Contains(err.Error(), "flags say a 5-byte name") {
		t.Errorf("flags naming a shorter name: %v", err)
	}
	b = indexOf("src/a.go")
	b[12+62+8+1] = 'x' // a padding byte after the NUL
	if err := read(b); err == nil || !strings.Contains(err.Error(), "padding") {
		t.Errorf("padding that is not NUL: %v", err)
	}
	b = indexOf("src/a.go")
	b[12+24] = 1 // mode 0x010081a4: git reads a regular file, this reader would not know
	if err := read(b); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("a mode git does not write: %v", err)
	}
}

// TestReposOfOtherRepositoriesAndSubmodules: a .git file naming another
// repository's git directory, or objects borrowed through alternates,
// would make git print that repository's files as this project's, so
// neither is read; a submodule checked out is judged for credential files
// too (git diff prints its changes with diff.submodule=diff); linked
// working trees of a repository with submodules are clean, and git diff
// there reads the working tree's own index.
func TestReposOfOtherRepositoriesAndSubmodules(t *testing.T) {
	info, _ := permission.Builtin("shell")
	home := t.TempDir()
	diffOf := func(dir string) permission.Repo {
		req := permission.Request{Tool: info, Args: map[string]any{"command": "git diff"}, Cwd: dir, Home: home}
		return resolve.ReposFor(req)[dir]
	}
	configOf := func(dir string) string { return resolve.GitConfigs([]string{dir})[dir] }

	private := gitRepo(t, "notes.md")
	proj := t.TempDir()
	write(t, filepath.Join(proj, ".git"), "gitdir: "+filepath.Join(private, ".git")+"\n")
	if got := configOf(proj); !strings.Contains(got, "another repository's git directory") {
		t.Errorf("a .git file naming another repository: %q", got)
	}
	if r := diffOf(proj); r.Checked {
		t.Errorf("git diff through a .git file naming another repository: %+v", r)
	}

	borrow := gitRepo(t, "a.txt")
	write(t, filepath.Join(borrow, ".git", "objects", "info", "alternates"), filepath.Join(private, ".git", "objects")+"\n")
	if got := configOf(borrow); !strings.Contains(got, "alternates") {
		t.Errorf("objects borrowed through alternates: %q", got)
	}

	// A submodule tracking a credential file.
	top := gitRepo(t, "a.txt")
	sub := embedded(t, top, ".env")
	if r := diffOf(top); !r.Checked || r.Secret != filepath.Join(sub, ".env") {
		t.Errorf("git diff in a repository whose submodule tracks .env: %+v", r)
	}

	// A linked working tree of a repository whose absorbed submodule is
	// initialised in the main working tree.
	mainRepo := gitRepo(t, "a.txt")
	lib := gitRepo(t, "b.txt")
	gitIn(t, lib, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "b")
	gitIn(t, mainRepo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	gitIn(t, mainRepo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "lib")
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, mainRepo, "worktree", "add", "-q", wt)
	if got := configOf(wt); got != "" {
		t.Errorf("a linked working tree of a repository with a submodule: %q", got)
	}
	if r := diffOf(wt); !r.Checked || r.Secret != "" {
		t.Errorf("git diff in a linked working tree: %+v", r)
	}

	// A link in .git/modules, and a submodule named a/b inside a's git
	// directory.
	write(t, filepath.Join(mainRepo, ".git", "modules", "lib", "modules", "x", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(mainRepo, ".git", "modules", "lib", "modules", "x", "config"), "[diff]\n\texternal = /tmp/x.sh\n")
	if err := os.MkdirAll(filepath.Join(mainRepo, ".git", "modules", "lib", "modules", "x", "objects"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := configOf(mainRepo); !strings.Contains(got, "diff.external") {
		t.Errorf("a nested submodule's git directory: %q", got)
	}
	if err := os.RemoveAll(filepath.Join(mainRepo, ".git", "modules", "lib", "modules")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mainRepo, ".git", "modules", "lib", "b", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(mainRepo, ".git", "modules", "lib", "b", "config"), "[diff]\n\texternal = /tmp/x.sh\n")
	if err := os.MkdirAll(filepath.Join(mainRepo, ".git", "modules", "lib", "b", "objects"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := configOf(mainRepo); !strings.Contains(got, "diff.external") {
		t.Errorf("a submodule named lib/b inside lib's git directory: %q", got)
	}
	if err := os.RemoveAll(filepath.Join(mainRepo, ".git", "modules", "lib", "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(mainRepo, ".git", "modules", "lib"), filepath.Join(mainRepo, ".git", "modules", "other")); err != nil {
		t.Fatal(err)
	}
	if got := configOf(mainRepo); !strings.Contains(got, "a link") {
		t.Errorf("a link in .git/modules: %q", got)
	}
}

// TestGitConfigsBoundTheIncludes: a file that includes itself many times
// at each of ten levels would make the gate read without end (git itself
// is stopped by the shell tool's timeout, the gate by nothing); the files
// read for one git directory are bounded, and past the bound it is not
// clean.
func TestGitConfigsBoundTheIncludes(t *testing.T) {
	dir := gitRepo(t, "a.txt")
	// f0 includes f1 twenty times, f1 includes f2 twenty times, … f8:
	// nine levels, within git's depth, 20^8 reads.
	for i := range 9 {
		var b strings.Builder
		if i < 8 {
			for range 20 {
				fmt.Fprintf(&b, "[include]\n\tpath = f%d.cfg\n", i+1)
			}
		}
		write(t, filepath.Join(dir, ".git", fmt.Sprintf("f%d.cfg", i)), b.String())
	}
	gitIn(t, dir, "config", "include.path", "f0.cfg")
	done := make(chan string, 1)
	go func() { done <- resolve.GitConfigs([]string{dir})[dir] }()
	select {
	case got := <-done:
		if !strings.Contains(got, "more files than the engine reads") {
			t.Errorf("20 includes at each of 9 levels: %q", got)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("GitConfigs did not return: the includes are not bounded")
	}
}

// embedded makes a repository sub inside top, committing file, and adds it
// to top's index as a submodule (a gitlink, its .git a directory).
func embedded(t *testing.T, top, file string) string {
	t.Helper()
	sub := filepath.Join(top, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	gitIn(t, sub, "init", "-q")
	write(t, filepath.Join(sub, file), "x\n")
	gitIn(t, sub, "add", file)
	gitIn(t, sub, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", file)
	gitIn(t, top, "add", "sub")
	return sub
}

// TestGitConfigsSeeLinksInTheGitDirectory: git reads its state files,
// refs and objects through links and prints what they lead to (git status
// prints a rebase's head-name, git log a graft or a broken packed-refs
// line, git show another repository's objects), so a git directory with a
// link among them is not clean, nor read for git diff.
func TestGitConfigsSeeLinksInTheGitDirectory(t *testing.T) {
	info, _ := permission.Builtin("shell")
	for _, rel := range []string{"rebase-merge/head-name", "packed-refs", "shallow", "info/grafts", "refs/heads/x", "objects/pack/p.pack", "objects/ab", "logs/HEAD"} {
		dir := gitRepo(t, "a.txt")
		p := filepath.Join(dir, ".git", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(p)
		if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), p); err != nil {
			t.Fatal(err)
		}
		if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "holds a link") {
			t.Errorf(".git/%s a link: %q", rel, got)
		}
		req := permission.Request{Tool: info, Args: map[string]any{"command": "git diff"}, Cwd: dir, Home: t.TempDir()}
		if r := resolve.ReposFor(req)[dir]; r.Checked {
			t.Errorf(".git/%s a link, git diff: %+v", rel, r)
		}
	}
}

// TestGitConfigsFindModulesInsideOthersParts: a submodule named a/hooks/x
// keeps its git directory inside the hooks directory of submodule a's; the
// walk of .git/modules looks into every directory.
func TestGitConfigsFindModulesInsideOthersParts(t *testing.T) {
	dir := gitRepo(t, "a.txt")
	write(t, filepath.Join(dir, ".gitmodules"), "[submodule \"a\"]\n\tpath = a\n")
	for _, name := range []string{"a", "a/hooks/x", "a/objects/ab/y"} {
		m := filepath.Join(dir, ".git", "modules", name)
		write(t, filepath.Join(m, "HEAD"), "ref: refs/heads/main\n")
		if err := os.MkdirAll(filepath.Join(m, "objects"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if got := resolve.GitConfigs([]string{dir})[dir]; got != "" {
		t.Fatalf("clean module git directories: %q", got)
	}
	for _, name := range []string{"a/hooks/x", "a/objects/ab/y"} {
		cfg := filepath.Join(dir, ".git", "modules", name, "config")
		write(t, cfg, "[diff]\n\texternal = /tmp/x.sh\n")
		if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "diff.external") {
			t.Errorf("a submodule named %s: %q", name, got)
		}
		if err := os.Remove(cfg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestModulesGitFilesAreNotFollowed: git opens .git/modules/NAME as a
// git directory, or as a "gitdir: PATH" file leading to one anywhere (a
// directory of the working tree the repository arrived with). Such a file
// where a submodule's git directory would be, at the top or beneath a
// directory of a name with slashes, is not followed: the gate asks.
func TestModulesGitFilesAreNotFollowed(t *testing.T) {
	for _, name := range []string{"sub", "vendor/sub"} {
		dir := gitRepo(t, "a.txt")
		evil := filepath.Join(dir, "vendor-evil")
		write(t, filepath.Join(evil, "HEAD"), "ref: refs/heads/main\n")
		write(t, filepath.Join(evil, "config"), "[diff]\n\texternal = /tmp/x.sh\n")
		if err := os.MkdirAll(filepath.Join(evil, "objects"), 0o700); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, ".git", "modules", name), "gitdir: ../../vendor-evil\n")
		if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "gitdir: PATH") {
			t.Errorf("modules/%s a gitdir file: %q", name, got)
		}
	}
}

// TestModulesGitFilesGitWouldOpenAreFound: inside a submodule's git
// directory (or a directory made to look like one) a "gitdir:" file
// cannot be told from the git directory's own files without reading them
// all; git opens it only for a name .gitmodules gives, so those names are
// looked up. Without a .gitmodules in the working tree git takes the
// names from the index or HEAD, unread here: the gate asks.
func TestModulesGitFilesGitWouldOpenAreFound(t *testing.T) {
	dir := gitRepo(t, "a.txt")
	a := filepath.Join(dir, ".git", "modules", "a")
	write(t, filepath.Join(a, "HEAD"), "ref: refs/heads/main\n")
	if err := os.MkdirAll(filepath.Join(a, "refs"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(a, "objects", "ab", "x"), "gitdir: ../../../../../vendor-evil\n")
	gitmodules := filepath.Join(dir, ".gitmodules")
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "no .gitmodules") {
		t.Errorf("modules kept, no .gitmodules: %q", got)
	}
	write(t, gitmodules, "[submodule \"a\"]\n\tpath = a\n")
	if got := resolve.GitConfigs([]string{dir})[dir]; got != "" {
		t.Errorf("the file is not where .gitmodules sends git: %q", got)
	}
	write(t, gitmodules, "[submodule \"a\"]\n\tpath = a\n[submodule \"a/objects/ab/x\"]\n\tpath = vendor/x\n")
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "lies a file") {
		t.Errorf("a gitdir file .gitmodules names: %q", got)
	}
	// git takes a name with a leading slash (it refuses only ".."
	// components), and opens modules//a/objects/ab/x.
	write(t, gitmodules, "[submodule \"a\"]\n\tpath = a\n[submodule \"/a/objects/ab/x\"]\n\tpath = vendor/x\n")
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "lies a file") {
		t.Errorf("a gitdir file .gitmodules names with a leading slash: %q", got)
	}
	write(t, gitmodules, "[submodule \"a\"]\n\tpath = a\n[submodule \"a/../a/objects/ab/x\"]\n\tpath = vendor/x\n")
	if got := resolve.GitConfigs([]string{dir})[dir]; got != "" {
		t.Errorf("a name git refuses (a .. component): %q", got)
	}
	if err := os.Remove(gitmodules); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), gitmodules); err != nil {
		t.Fatal(err)
	}
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "not a plain file") {
		t.Errorf(".gitmodules a link: %q", got)
	}
}

// TestSubmoduleDiffInTheConfigurations: with diff.submodule=diff git diff
// runs git diff inside each changed submodule that is checked out, between
// two of its commits, and that child opens the submodules those commits
// name through whatever .git it finds in the submodule's working tree,
// which no index lists. Set in the repository's own configuration it is a
// risk like any other program it names; set in the user's (system,
// XDG, ~/.gitconfig, includes followed) git diff in a repository with a
// submodule checked out is not judged, and says why. git status stays
// allowed: it runs no child diff.
func TestSubmoduleDiffInTheConfigurations(t *testing.T) {
	lib := gitRepo(t, "lib.txt")
	gitIn(t, lib, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "lib")
	dir := gitRepo(t, "a.txt")
	gitIn(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	gitIn(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "lib")
	info, _ := permission.Builtin("shell")
	diffOf := func(home string) permission.Repo {
		req := permission.Request{Tool: info, Args: map[string]any{"command": "git diff"}, Cwd: dir, Home: home}
		return resolve.ReposFor(req)[dir]
	}
	home := t.TempDir()
	if r := diffOf(home); !r.Checked {
		t.Fatalf("no diff.submodule anywhere: %+v", r)
	}
	write(t, filepath.Join(home, ".gitconfig"), "[diff]\n\tsubmodule = diff\n")
	if r := diffOf(home); r.Checked || !strings.Contains(r.Why, "diff.submodule=diff") {
		t.Errorf("diff.submodule=diff in ~/.gitconfig: %+v", r)
	}
	if got := resolve.GitConfigs([]string{dir})[dir]; got != "" {
		t.Errorf("the user's setting makes the repository's configuration risky: %q", got)
	}
	// A later file wins; an include is followed; one that cannot be
	// read counts as setting it.
	write(t, filepath.Join(home, ".config", "git", "config"), "[diff]\n\tsubmodule = diff\n")
	write(t, filepath.Join(home, ".gitconfig"), "[diff]\n\tsubmodule = short\n")
	if r := diffOf(home); !r.Checked {
		t.Errorf("~/.gitconfig, read after the XDG file, says short: %+v", r)
	}
	write(t, filepath.Join(home, ".gitconfig"), "[diff]\n\tsubmodule = short\n[include]\n\tpath = more.inc\n")
	write(t, filepath.Join(home, "more.inc"), "[diff]\n\tsubmodule = diff\n")
	if r := diffOf(home); r.Checked {
		t.Errorf("an include of ~/.gitconfig sets diff: %+v", r)
	}
	write(t, filepath.Join(home, "more.inc"), "[diff\n")
	if r := diffOf(home); r.Checked {
		t.Errorf("an include git would refuse: %+v", r)
	}
	// In the repository's own configuration.
	gitIn(t, dir, "config", "diff.submodule", "diff")
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "diff.submodule") {
		t.Errorf("diff.submodule=diff in .git/config: %q", got)
	}
}

// TestSwappedObjectsAreNotRead: with refs/replace/* git shows another
// object under a name it prints (a committed .env as README's content in
// git diff and git blame), and with refs/notes/* plain git log prints the
// notes' blobs; a tarball's git directory may hold either, loose or
// packed, or name other notes in its config.
func TestSwappedObjectsAreNotRead(t *testing.T) {
	id := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		name string
		make func(dir string)
		want string
	}{
		{"a replace ref", func(dir string) { write(t, filepath.Join(dir, ".git", "refs", "replace", id), id+"\n") }, "refs/replace"},
		{"a notes ref", func(dir string) { write(t, filepath.Join(dir, ".git", "refs", "notes", "commits"), id+"\n") }, "refs/notes"},
		{"a packed replace ref", func(dir string) {
			write(t, filepath.Join(dir, ".git", "packed-refs"), "# pack-refs with: peeled fully-peeled sorted\n"+id+" refs/replace/"+id+"\n")
		}, "packed-refs holds refs/replace"},
		{"a packed notes ref", func(dir string) {
			write(t, filepath.Join(dir, ".git", "packed-refs"), id+" refs/heads/main\n"+id+" refs/notes/x\n")
		}, "packed-refs holds refs/notes"},
		{"notes.displayRef", func(dir string) { gitIn(t, dir, "config", "notes.displayRef", "refs/heads/main") }, "notes.displayref"},
		{"core.notesRef", func(dir string) { gitIn(t, dir, "config", "core.notesRef", "refs/heads/x") }, "core.notesref"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gitRepo(t, "a.txt")
			if got := resolve.GitConfigs([]string{dir})[dir]; got != "" {
				t.Fatalf("before: %q", got)
			}
			tc.make(dir)
			if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want it to name %s", got, tc.want)
			}
		})
	}
	// What packed-refs held is remembered while it is unchanged, and
	// only then.
	defer resolve.SetRacyWindow(time.Millisecond)()
	packed := gitRepo(t, "a.txt")
	write(t, filepath.Join(packed, ".git", "packed-refs"), id+" refs/heads/main\n")
	time.Sleep(50 * time.Millisecond)
	for range 2 {
		if got := resolve.GitConfigs([]string{packed})[packed]; got != "" {
			t.Fatalf("a clean packed-refs: %q", got)
		}
	}
	write(t, filepath.Join(packed, ".git", "packed-refs"), id+" refs/heads/main\n"+id+" refs/notes/y\n")
	if got := resolve.GitConfigs([]string{packed})[packed]; !strings.Contains(got, "refs/notes") {
		t.Errorf("packed-refs changed after it was remembered: %q", got)
	}
	// An empty refs/notes (git makes none, a person may) is fine.
	dir := gitRepo(t, "a.txt")
	if err := os.MkdirAll(filepath.Join(dir, ".git", "refs", "notes"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := resolve.GitConfigs([]string{dir})[dir]; got != "" {
		t.Errorf("an empty refs/notes: %q", got)
	}
}

// TestModulesWalkSeesChangesThroughTheCache: the walk of .git/modules
// remembers the directories it listed; a git directory, or a link to one,
// made later inside a directory with no subdirectory (objects/XX), and a
// directory holding HEAD and a commondir file and nothing else, are
// still found. (A walk that skipped such leaves by their link count,
// tried once, missed the link.)
func TestModulesWalkSeesChangesThroughTheCache(t *testing.T) {
	defer resolve.SetRacyWindow(time.Millisecond)()
	dir := gitRepo(t, "a.txt")
	write(t, filepath.Join(dir, ".gitmodules"), "[submodule \"a\"]\n\tpath = a\n")
	a := filepath.Join(dir, ".git", "modules", "a")
	write(t, filepath.Join(a, "HEAD"), "ref: refs/heads/main\n")
	for _, d := range []string{"refs/heads", "objects/ab", "objects/cd", "objects/ef"} {
		if err := os.MkdirAll(filepath.Join(a, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(a, "objects", "ab", "0123456789abcdef0123456789abcdef012345"), "loose object\n")
	time.Sleep(50 * time.Millisecond) // past the window and a clock tick
	for range 2 {                     // the second from what was remembered
		if got := resolve.GitConfigs([]string{dir})[dir]; got != "" {
			t.Fatalf("clean module git directories: %q", got)
		}
	}
	// A git directory inside a directory remembered as a leaf.
	y := filepath.Join(a, "objects", "ab", "y")
	write(t, filepath.Join(y, "HEAD"), "ref: refs/heads/main\n")
	if err := os.MkdirAll(filepath.Join(y, "objects"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(y, "config"), "[diff]\n\texternal = /tmp/x.sh\n")
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "diff.external") {
		t.Errorf("a git directory made inside a remembered leaf: %q", got)
	}
	if err := os.RemoveAll(y); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if got := resolve.GitConfigs([]string{dir})[dir]; got != "" {
		t.Fatalf("after removing it: %q", got)
	}
	// A link in a directory remembered as a leaf: git would open a
	// submodule named a/objects/ab/z through it, with the configuration
	// at its end.
	evil := t.TempDir()
	write(t, filepath.Join(evil, "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(evil, "config"), "[diff]\n\texternal = /tmp/x.sh\n")
	if err := os.MkdirAll(filepath.Join(evil, "objects"), 0o700); err != nil {
		t.Fatal(err)
	}
	z := filepath.Join(a, "objects", "ab", "z")
	if err := os.Symlink(evil, z); err != nil {
		t.Fatal(err)
	}
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "link") {
		t.Errorf("a link to a git directory made inside a remembered leaf: %q", got)
	}
	if err := os.Remove(z); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	// A leaf that is a git directory of its own: HEAD and a commondir,
	// no subdirectory.
	write(t, filepath.Join(a, "objects", "cd", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(a, "objects", "cd", "commondir"), "../../../../..\n")
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "commondir") {
		t.Errorf("a leaf holding HEAD and commondir: %q", got)
	}
}

// TestIndexOffsetTablesAgree: git may load an index's entries from the
// offsets its IEOT extension gives, and find its extensions where EOIE
// says; an index whose tables disagree with its entries read one after
// another (which would show git entries this reader does not see) is not
// read, and one git wrote is.
func TestIndexOffsetTablesAgree(t *testing.T) {
	dir := gitRepo(t)
	for i := range 2000 { // enough entries for git to write several blocks
		write(t, filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), "x\n")
	}
	gitIn(t, dir, "-c", "index.threads=4", "-c", "index.recordOffsetTable=true", "-c", "index.recordEndOfIndexEntries=true", "add", ".")
	idx := filepath.Join(dir, ".git", "index")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(b), "IEOT")
	if at < 0 || !strings.Contains(string(b), "EOIE") {
		t.Fatalf("git wrote no IEOT and EOIE extensions")
	}
	if n := int(b[at+4])<<24 | int(b[at+5])<<16 | int(b[at+6])<<8 | int(b[at+7]); (n-4)/8 < 2 {
		t.Fatalf("git wrote an IEOT of %d blocks; the test needs two", (n-4)/8)
	}
	info, _ := permission.Builtin("shell")
	req := permission.Request{Tool: info, Args: map[string]any{"command": "git diff"}, Cwd: dir, Home: t.TempDir()}
	if r := resolve.ReposFor(req)[dir]; !r.Checked {
		t.Fatalf("an index with offset tables git wrote: %+v", r)
	}
	// The second block's offset moved by 8 bytes (the first is the
	// header's end, 12): git would start that block mid-entry.
	b[at+8+4+8+3] += 8
	if err := os.WriteFile(idx, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := resolve.ReposFor(req)[dir]; r.Checked {
		t.Errorf("an index whose IEOT disagrees with its entries was read: %+v", r)
	}
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "index") {
		t.Errorf("GitConfigs with such an index: %q", got)
	}
}

// TestReposOfRemovedAndWorktreeSubmodules: a submodule whose working tree
// was removed while git keeps its git directory is printed whole by git
// diff with diff.submodule=diff, unjudged, so git diff is not covered; a
// submodule a linked working tree initialised keeps its git directory
// under that tree's own, which is its own, not another repository's.
func TestReposOfRemovedAndWorktreeSubmodules(t *testing.T) {
	info, _ := permission.Builtin("shell")
	commit := func(dir, msg string) {
		gitIn(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", msg)
	}
	lib := gitRepo(t, "b.txt")
	commit(lib, "b")
	top := gitRepo(t, "a.txt")
	gitIn(t, top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	commit(top, "lib")

	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, top, "worktree", "add", "-q", wt)
	gitIn(t, wt, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
	if got := resolve.GitConfigs([]string{wt})[wt]; got != "" {
		t.Errorf("a linked working tree with a submodule it initialised: %q", got)
	}

	diff := permission.Request{Tool: info, Args: map[string]any{"command": "git diff"}, Cwd: top, Home: t.TempDir()}
	if r := resolve.ReposFor(diff)[top]; !r.Checked {
		t.Fatalf("git diff with the submodule checked out: %+v", r)
	}
	if err := os.RemoveAll(filepath.Join(top, "lib")); err != nil {
		t.Fatal(err)
	}
	if r := resolve.ReposFor(diff)[top]; r.Checked {
		t.Errorf("git diff with the submodule removed and its git directory kept: %+v", r)
	}
}

// TestGitDirLinksAreSeenThroughTheCache: the directories found holding no
// link are remembered as they stood; a link added afterwards changes its
// directory's times and is seen at the next check.
func TestGitDirLinksAreSeenThroughTheCache(t *testing.T) {
	defer resolve.SetRacyWindow(time.Millisecond)()
	dir := gitRepo(t, "a.txt")
	time.Sleep(50 * time.Millisecond) // past the window and a clock tick
	for range 2 {                     // the second from what was remembered
		if got := resolve.GitConfigs([]string{dir})[dir]; got != "" {
			t.Fatalf("a clean repository: %q", got)
		}
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "x"), filepath.Join(dir, ".git", "refs", "heads", "evil")); err != nil {
		t.Fatal(err)
	}
	if got := resolve.GitConfigs([]string{dir})[dir]; !strings.Contains(got, "holds a link") {
		t.Errorf("a link added after the directories were remembered: %q", got)
	}
}

// TestIndexHiddenEOIEIsRefused: git looks for EOIE only just before the
// checksum, whatever the extensions before it say, so an optional
// extension running over that place could hide an EOIE (and the offset
// table or split index it leads to) from a reader walking the extensions
// in order; such an index is refused. So is a version 4 index with an
// offset table, whose blocks git starts with no previous name.
func TestIndexHiddenEOIEIsRefused(t *testing.T) {
	read := func(b []byte) error {
		return resolve.ReadIndexNames(strings.NewReader(string(b)), int64(len(b)), 20, func(string, uint32) bool { return true })
	}
	withExt := func(sig string, body []byte) []byte {
		b := indexOf("a.txt")
		b = b[:len(b)-20] // the checksum
		n := len(body)
		b = append(b, sig...)
		b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		b = append(b, body...)
		return append(b, make([]byte, 20)...)
	}
	body := make([]byte, 64)
	if err := read(withExt("ZZZZ", body)); err != nil {
		t.Fatalf("an optional extension: %v", err)
	}
	copy(body[32:], "EOIE") // where git looks for one: 52 bytes before the end
	if err := read(withExt("ZZZZ", body)); err == nil || !strings.Contains(err.Error(), "EOIE") {
		t.Errorf("an EOIE hidden inside an optional extension: %v", err)
	}
}
