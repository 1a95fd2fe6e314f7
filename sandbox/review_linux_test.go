package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The findings of the first attacker review of the sandbox, each a test.

// TestReviewEscapes: renames of a protected path's parents, git
// directories by pointer or by content, hard links to the project's own
// secrets, set-group-ID, and the helper's descriptors.
func TestReviewEscapes(t *testing.T) {
	w := newWorld(t)
	gd := filepath.Join(w.proj, "gd")
	for _, d := range []string{"objects", "refs", "hooks"} {
		must(t, os.MkdirAll(filepath.Join(gd, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(gd, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(gd, "config"), []byte("[core]\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(w.proj, "wt"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.proj, "wt", ".git"), []byte("gitdir: ../gd\n"), 0o644))
	bare := filepath.Join(w.proj, "lib.git")
	for _, d := range []string{"objects", "refs", "hooks"} {
		must(t, os.MkdirAll(filepath.Join(bare, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(bare, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	must(t, os.Link(filepath.Join(w.proj, ".env"), filepath.Join(w.proj, "env-copy.txt")))

	for _, c := range []escape{
		{name: "rename the parent of a workflow", kind: Workspace, script: "mv .github .github-old && mkdir -p .github/workflows && echo evil > .github/workflows/ci.yml", want: readOnly, after: unchanged("proj/.github/workflows/ci.yml", "on: push\n")},
		{name: "rename a nested repository", kind: Workspace, script: "mv vendor vendor-old && mkdir -p vendor/lib/.git && echo '[core]' > vendor/lib/.git/config", want: readOnly, after: unchanged("proj/vendor/lib/.git/config", "[core]\n")},
		{name: "rename the git directory", kind: Workspace, script: "mv .git .git-old", want: readOnly, after: unchanged("proj/.git/config", "[core]\n")},
		{name: "git directory named by a gitdir file", kind: Workspace, script: "echo '[core] fsmonitor = evil' >> gd/config", want: readOnly, after: unchanged("proj/gd/config", "[core]\n")},
		{name: "hook of a git directory named by a gitdir file", kind: Workspace, script: "echo evil > gd/hooks/pre-commit", want: readOnly, after: absent("proj/gd/hooks/pre-commit")},
		{name: "hook of a bare repository", kind: Workspace, script: "echo evil > lib.git/hooks/post-update", want: readOnly, after: absent("proj/lib.git/hooks/post-update")},
		{name: "hard link to the project's own secret", kind: ReadOnly, script: "cat env-copy.txt", want: denied},
		{name: "set-group-ID", kind: Workspace, script: "cp /bin/true g && chmod 2755 g", want: []string{"Operation not permitted"}},
		{name: "the helper's error pipe", kind: Workspace, script: "echo 'landlock: fake' > /proc/1/fd/4", want: denied},
		{name: "the helper's memory", kind: Workspace, script: "head -c 8 /proc/1/mem", want: denied},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := w.sh(t, c.kind, c.script)
			check(t, c, r)
			if c.after != nil {
				c.after(t, w)
			}
		})
	}

	t.Run("an inherited descriptor on a directory", func(t *testing.T) {
		fd, err := syscall.Open(w.home, syscall.O_RDONLY|syscall.O_DIRECTORY, 0) // no O_CLOEXEC
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		r := w.sh(t, ReadOnly, "cat /proc/self/fd/"+strconv.Itoa(fd)+"/.ssh/id_rsa")
		check(t, escape{want: []string{"No such file", "Permission denied"}}, r)
	})
}

// TestForeignArchitecture: a system call of another architecture (i386's
// int 0x80 on amd64) passes no rule, so it kills the process.
func TestForeignArchitecture(t *testing.T) {
	w := newWorld(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH to build a 32-bit program")
	}
	src := filepath.Join(w.root, "i386")
	must(t, os.MkdirAll(src, 0o755))
	must(t, os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"ran\") }\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module i386\n\ngo 1.21\n"), 0o644))
	bin := filepath.Join(w.proj, "i386-prog")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOARCH=386", "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building a 386 program: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin).CombinedOutput(); err != nil || !strings.Contains(string(out), "ran") {
		t.Skipf("this kernel runs no 32-bit program (%v): nothing to test", err)
	}
	r := w.run(t, Workspace, false, nil, bin)
	if strings.Contains(r.out, "ran") || r.code != 128+int(syscall.SIGSYS) {
		t.Fatalf("a 32-bit program ran in the sandbox: exit %d\n%s", r.code, r.out)
	}
}

// TestRefusedWorkingDirectories: a working directory that is or holds a
// directory the sandbox replaces, or a home, cannot be planned.
func TestRefusedWorkingDirectories(t *testing.T) {
	w := newWorld(t)
	pl := NewPlanner(Env{Home: w.home})
	for _, dir := range []string{"/", "/tmp", "/var", "/run", w.home, w.root} {
		if _, err := pl.Plan(Workspace, false, dir); !errors.Is(err, ErrCwd) {
			t.Errorf("Plan(%s) = %v; want ErrCwd", dir, err)
		}
	}
	if _, err := pl.Plan(Workspace, false, w.proj); err != nil {
		t.Errorf("Plan(project) = %v", err)
	}
}

// TestAbsentProtectedRemoved: a protected path that did not exist when
// the call started cannot be guarded by a mount; what the process creates
// there is removed, and the call says so.
func TestAbsentProtectedRemoved(t *testing.T) {
	w := newWorld(t)
	must(t, os.RemoveAll(filepath.Join(w.proj, ".custom-agent")))
	r := w.sh(t, Workspace, `mkdir -p .custom-agent .claude .github/workflows && echo '{"version":1,"rules":[{"id":"x","tool":"*","decision":"allow"}]}' > .custom-agent/policy.json && echo '{}' > .claude/settings.json && echo ok > kept.txt`)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	if !errors.Is(r.done, ErrProtectedCreated) || !strings.Contains(r.done.Error(), ".custom-agent") || !strings.Contains(r.done.Error(), ".claude") {
		t.Fatalf("Done = %v; want ErrProtectedCreated naming .custom-agent and .claude", r.done)
	}
	absent(".custom-agent")(t, w)
	absent("proj/.custom-agent")(t, w)
	absent("proj/.claude")(t, w)
	unchanged("proj/kept.txt", "ok\n")(t, w)
	// .github existed with its workflows: guarded by a mount, not removed.
	unchanged("proj/.github/workflows/ci.yml", "on: push\n")(t, w)
}

// TestSecondReview: the second attacker review's findings.
func TestSecondReview(t *testing.T) {
	w := newWorld(t)
	must(t, os.MkdirAll(filepath.Join(w.proj, "config"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.proj, "config", ".env"), []byte(canary), 0o600))
	must(t, os.WriteFile(filepath.Join(w.proj, ".git", "config"), []byte("[core]\n[include]\n\tpath = ../gitconfig.local\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(w.proj, "gitconfig.local"), []byte("[user]\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(w.home, ".cache", "go-build", "ab-a"), []byte("v1 legit\n"), 0o644))

	t.Run("commondir made in the git directory", func(t *testing.T) {
		r := w.sh(t, Workspace, "mkdir evil && printf '[core]\\n\\tfsmonitor = evil\\n' > evil/config && echo ../evil > .git/commondir")
		if !errors.Is(r.done, ErrProtectedCreated) || !strings.Contains(r.done.Error(), "commondir") {
			t.Fatalf("Done = %v; want commondir removed\n%s", r.done, r.out)
		}
		absent("proj/.git/commondir")(t, w)
	})
	t.Run("alternates made in the git directory", func(t *testing.T) {
		r := w.sh(t, Workspace, "mkdir -p .git/objects/info && echo /x > .git/objects/info/alternates")
		if !errors.Is(r.done, ErrProtectedCreated) {
			t.Fatalf("Done = %v\n%s", r.done, r.out)
		}
		absent("proj/.git/objects/info/alternates")(t, w)
	})
	t.Run("a file the git config includes", func(t *testing.T) {
		r := w.sh(t, Workspace, "printf '[core]\\n\\tfsmonitor = evil\\n' >> gitconfig.local")
		check(t, escape{want: readOnly}, r)
		unchanged("proj/gitconfig.local", "[user]\n")(t, w)
	})
	t.Run("the go cache is not poisoned", func(t *testing.T) {
		r := w.sh(t, Workspace, "echo 'v1 poisoned' > ~/.cache/go-build/ab-a && ln -s ~/.bashrc ~/.cache/go-build/cd-a && cat ~/.cache/go-build/ab-a")
		if r.code != 0 || !strings.Contains(r.out, "poisoned") {
			t.Fatalf("the private layer did not take the write: exit %d\n%s", r.code, r.out)
		}
		unchanged("home/.cache/go-build/ab-a", "v1 legit\n")(t, w)
		absent("home/.cache/go-build/cd-a")(t, w)
	})
	t.Run("a secret's directory moved aside", func(t *testing.T) {
		r := w.sh(t, Workspace, "mkdir -p node_modules && mv config node_modules/")
		check(t, escape{want: readOnly}, r)
		r = w.sh(t, ReadOnly, "cat node_modules/config/.env config/.env")
		check(t, escape{want: denied}, r)
	})
	t.Run("the helper survives the signals it is sent", func(t *testing.T) {
		r := w.sh(t, Workspace, "kill -SEGV 1; kill -ABRT 1; kill -SYS 1; sleep 0.1; echo alive")
		if r.code != 0 || !strings.Contains(r.out, "alive") || strings.Contains(r.out, "goroutine") {
			t.Fatalf("exit %d:\n%s", r.code, r.out)
		}
	})
	t.Run("a system directory as the working directory", func(t *testing.T) {
		if _, err := NewPlanner(Env{Home: w.home}).Plan(Workspace, false, "/etc"); !errors.Is(err, ErrCwd) {
			t.Fatalf("Plan(/etc) = %v; want ErrCwd", err)
		}
	})
}

// TestAbsentMadeBeforeTheStart: a protected path the agent itself made
// between the plan and the start (the rule of an "always allow in this
// project" answer) is guarded by a mount, not removed.
func TestAbsentMadeBeforeTheStart(t *testing.T) {
	w := newWorld(t)
	must(t, os.RemoveAll(filepath.Join(w.proj, ".custom-agent")))
	pl := NewPlanner(Env{Home: w.home})
	p, err := pl.Plan(Workspace, false, w.proj)
	if err != nil {
		t.Fatal(err)
	}
	// The agent writes the project rule after the plan.
	must(t, os.MkdirAll(filepath.Join(w.proj, ".custom-agent"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.proj, ".custom-agent", "policy.json"), []byte("{}"), 0o644))
	var out strings.Builder
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "echo evil > .custom-agent/policy.json"}, Dir: w.proj, Stdout: &out, Stderr: &out, Env: []string{"PATH=/usr/bin:/bin"}}
	c, err := Confine(p, cmd)
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Run()
	if err := c.Done(); err != nil {
		t.Fatalf("Done: %v", err)
	}
	if !strings.Contains(out.String(), "Read-only file system") {
		t.Errorf("the write was not refused:\n%s", out.String())
	}
	unchanged("proj/.custom-agent/policy.json", "{}")(t, w)
}

// TestThirdReview: the removal after a call never follows a link, takes
// every letter case, tries every path, and keeps the call's result.
func TestThirdReview(t *testing.T) {
	w := newWorld(t)
	must(t, os.RemoveAll(filepath.Join(w.proj, ".custom-agent")))
	must(t, os.MkdirAll(filepath.Join(w.home, ".kube"), 0o755))
	t.Run("a link made where a protected directory would be", func(t *testing.T) {
		must(t, os.WriteFile(filepath.Join(w.home, ".kube", "keep"), []byte("k"), 0o644))
		r := w.sh(t, Workspace, "ln -s ~/.kube .cargo && ln -s .git .github && echo made")
		if !errors.Is(r.done, ErrProtectedCreated) {
			t.Fatalf("Done = %v", r.done)
		}
		unchanged("home/.kube/keep", "k")(t, w)
		unchanged("home/.kube/config", canary)(t, w) // .cargo/config is a protected name
		unchanged("proj/.git/config", "[core]\n")(t, w)
		unchanged("proj/.git/hooks/README", "hooks\n")(t, w)
		absent("proj/.cargo")(t, w)
	})
	t.Run("every letter case", func(t *testing.T) {
		r := w.sh(t, Workspace, "echo x > agents.md; echo y > AGENTS.md; echo z > Claude.md")
		if !errors.Is(r.done, ErrProtectedCreated) {
			t.Fatalf("Done = %v", r.done)
		}
		for _, n := range []string{"agents.md", "AGENTS.md", "Claude.md"} {
			absent("proj/"+n)(t, w)
		}
	})
	t.Run("a directory made unwritable does not stop the others", func(t *testing.T) {
		r := w.sh(t, Workspace, "mkdir -p .aider/x && touch .aider/x/f && chmod 500 .aider/x && mkdir .claude && echo '{}' > .claude/settings.json && chmod 000 .claude")
		if !errors.Is(r.done, ErrProtectedCreated) {
			t.Fatalf("Done = %v", r.done)
		}
		absent("proj/.aider")(t, w)
		absent("proj/.claude")(t, w)
	})
	t.Run("a by-name protected file", func(t *testing.T) {
		r := w.sh(t, Workspace, `echo '{"mcp":{}}' > opencode.json; echo ok`)
		if !errors.Is(r.done, ErrProtectedCreated) {
			t.Fatalf("Done = %v", r.done)
		}
		absent("proj/opencode.json")(t, w)
	})
}

// TestNewGitRepository: a repository the command makes, at any depth, is
// kept when plain and put aside when it could run code on the host; a
// known one gets its HEAD back; the working directory made into a bare
// repository loses the HEAD that made it one (attacker reviews 3 and 4).
func TestNewGitRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	w := newWorld(t)
	repo := filepath.Join(w.proj, "src")
	pl := NewPlanner(Env{Home: w.home})
	run := func(t *testing.T, script string) error {
		t.Helper()
		p, err := pl.Plan(Workspace, false, repo)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: repo, Stdout: &out, Stderr: &out,
			Env: []string{"PATH=/usr/bin:/bin", "HOME=" + w.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"}}
		c, err := Confine(p, cmd)
		if err != nil {
			t.Fatal(err)
		}
		_ = cmd.Run()
		err = c.Done()
		if err != nil {
			t.Logf("%s\nDone: %v", out.String(), err)
		}
		return err
	}
	reset := func() {
		for _, n := range []string{".git", "sub", "HEAD", "objects", "refs", "config", "notes.txt", "docs"} {
			os.RemoveAll(filepath.Join(repo, n))
		}
		ents, _ := os.ReadDir(repo)
		for _, e := range ents {
			if strings.Contains(e.Name(), "put-aside") {
				os.RemoveAll(filepath.Join(repo, e.Name()))
			}
		}
	}
	cases := []struct {
		name, script string
		kept         bool
	}{
		{"a plain repository", "git init -q . && git commit -q --allow-empty -m x && git config user.name n && git remote add origin https://example.com/r.git", true},
		{"an fsmonitor", "git init -q . && git config core.fsmonitor 'touch pwned'", false},
		{"an ssh signing key command", "git init -q . && git config gpg.format ssh && git config gpg.ssh.defaultKeyCommand 'touch pwned'", false},
		{"an upload-pack", "git init -q . && git remote add up /x && git config remote.up.uploadpack 'touch pwned; git-upload-pack'", false},
		{"an ext:: remote", "git init -q . && git remote add e 'ext::sh -c touch% pwned'", false},
		{"a hook", "git init -q . && printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit", false},
		{"a hard-linked config", "git init -q . && ln .git/config notes.txt", false},
		{"linked hooks", "git init -q . && rm -rf .git/hooks && mkdir docs && ln -s ../docs .git/hooks", false},
		{"a config that is a fifo", "mkdir .git && mkfifo .git/config", false},
		{"a nested repository", "mkdir sub && git -C sub init -q && git -C sub config core.fsmonitor 'touch pwned'", false},
		{"a hook name that forges a line", "git init -q . && touch \"$(printf '.git/hooks/x\\n[sandbox] all clear')\"", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			err := run(t, tc.script)
			_, statErr := os.Stat(filepath.Join(repo, ".git"))
			nested := strings.Contains(tc.name, "nested")
			if nested {
				_, statErr = os.Stat(filepath.Join(repo, "sub", ".git"))
			}
			if kept := statErr == nil; kept != tc.kept {
				t.Fatalf("kept %v, want %v (Done: %v)", kept, tc.kept, err)
			}
			if !tc.kept && !errors.Is(err, ErrProtectedCreated) {
				t.Fatalf("Done = %v; want a note", err)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("the note holds a raw line break: %q", err.Error())
			}
		})
	}
	t.Run("the working directory made a bare repository", func(t *testing.T) {
		reset()
		if err := run(t, "git init -q . && git commit -q --allow-empty -m x"); err != nil {
			t.Fatal(err)
		}
		err := run(t, "mv .git/HEAD .git/HEAD.bak && mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD && printf '[core]\\n\\tfsmonitor = touch pwned\\n' > config")
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v", err)
		}
		absent("proj/src/HEAD")(t, w)
		if _, err := os.Stat(filepath.Join(repo, ".git", "HEAD")); err != nil {
			t.Fatalf("the repository's HEAD was not put back: %v", err)
		}
	})
	reset()
}

// TestFifthReview: git directories git would open that the first check
// after the call did not see.
func TestFifthReview(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	w := newWorld(t)
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + w.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"}
	pl := NewPlanner(Env{Home: w.home})
	run := func(t *testing.T, dir, script string) error {
		t.Helper()
		p, err := pl.Plan(Workspace, false, dir)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: dir, Stdout: &out, Stderr: &out, Env: env}
		c, err := Confine(p, cmd)
		if err != nil {
			t.Fatal(err)
		}
		_ = cmd.Run()
		return c.Done()
	}
	host := func(t *testing.T, dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Run("the working directory made a repository by a linked HEAD", func(t *testing.T) {
		dir := filepath.Join(w.root, "b")
		must(t, os.MkdirAll(dir, 0o755))
		err := run(t, dir, "mkdir -p objects refs/heads && ln -s refs/heads/main HEAD && printf '[core]\\n\\tfsmonitor = touch pwned\\n' > config")
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err == nil {
			t.Fatal("the HEAD that makes the directory a repository is still there")
		}
	})
	t.Run("a submodule git directory planted in the known one", func(t *testing.T) {
		dir := filepath.Join(w.root, "a")
		must(t, os.MkdirAll(dir, 0o755))
		host(t, dir, "init", "-q", ".")
		host(t, dir, "commit", "-q", "--allow-empty", "-m", "x")
		err := run(t, dir, "git init -q --bare .git/modules/lib && printf '#!/bin/sh\\ntouch pwned\\n' > .git/modules/lib/hooks/post-checkout && chmod +x .git/modules/lib/hooks/post-checkout")
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "modules", "lib")); err == nil {
			t.Fatal("the planted submodule git directory is still there")
		}
	})
	t.Run("a rebase started by the command", func(t *testing.T) {
		dir := filepath.Join(w.root, "a")
		err := run(t, dir, "mkdir .git/rebase-merge && echo 'exec touch pwned' > .git/rebase-merge/git-rebase-todo")
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "rebase-merge")); err == nil {
			t.Fatal("the planted rebase is still there")
		}
	})
	t.Run("a repository in node_modules added as a gitlink", func(t *testing.T) {
		dir := filepath.Join(w.root, "a")
		err := run(t, dir, "mkdir -p node_modules/evil && cd node_modules/evil && git init -q && git commit -q --allow-empty -m a && git config core.fsmonitor 'touch pwned' && sha=$(git rev-parse HEAD) && cd ../.. && git update-index --add --cacheinfo 160000,$sha,node_modules/evil")
		if !errors.Is(err, ErrProtectedCreated) {
			t.Fatalf("Done = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "evil", ".git")); err == nil {
			t.Fatal("the nested repository is still there")
		}
	})
	t.Run("a repository behind a secret's mask is left alone", func(t *testing.T) {
		dir := filepath.Join(w.root, "fp")
		must(t, os.MkdirAll(filepath.Join(dir, ".ssh"), 0o755))
		host(t, filepath.Join(dir, ".ssh"), "init", "-q", "cfgrepo")
		must(t, os.WriteFile(filepath.Join(dir, ".ssh", "cfgrepo", ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755))
		if err := run(t, dir, "true"); err != nil {
			t.Fatalf("Done = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".ssh", "cfgrepo", ".git")); err != nil {
			t.Fatal("a repository the call never touched was put aside")
		}
	})
}

// TestLetterCasesAndLinkedParents (fourth review, F6): a protected name
// present in another letter case still guards its own spelling. (F7, a
// protected path under a directory that is a link into the project, was
// guarded where the link led; the third sandbox review retargeted or
// filled such a link, and the plan now refuses one:
// TestLinkAtFirstComponentOfProtectedPath.)
func TestLetterCasesAndLinkedParents(t *testing.T) {
	w := newWorld(t)
	must(t, os.RemoveAll(filepath.Join(w.proj, ".custom-agent")))
	must(t, os.MkdirAll(filepath.Join(w.proj, ".Claude"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.proj, ".Claude", "notes"), []byte("mine"), 0o644))
	r := w.sh(t, Workspace, `mkdir -p .claude && echo '{}' > .claude/settings.json && echo ok`)
	if !errors.Is(r.done, ErrProtectedCreated) {
		t.Fatalf("Done = %v\n%s", r.done, r.out)
	}
	absent("proj/.claude")(t, w)
	unchanged("proj/.Claude/notes", "mine")(t, w)
}
