package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fourth review, V2: a protected path that is a link (a hook, a hooks
// directory, a conftest.py), or a link in a protected directory, leads to
// a file of the working directory: that file must be read-only during the
// call too, or the command rewrites it and the host runs it.

const hookPayload = `printf '#!/bin/sh\ntouch "$PWNED"\n'`

// TestLinkTargetProtected: the target of a protected link, through a
// chain of links or a link to a directory, is unchanged after a call that
// writes it, and the host's git commit does not run what it wrote.
func TestLinkTargetProtected(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string // made before the call (mode 0755)
		links  map[string]string // link -> target, made before the call
		hard   map[string]string // hard link -> file, made before the call
		rmdirs []string          // removed before the links are made
		moves  [][2]string       // renamed before the links are made
		script string
		keep   []string // files whose content (or absence) must not change
		keepLn []string // links whose target must not change
	}{
		{
			name:   "hook file linked to a script of the tree",
			files:  map[string]string{"scripts/pre-commit.sh": "#!/bin/sh\nexit 0\n"},
			links:  map[string]string{".git/hooks/pre-commit": "../../scripts/pre-commit.sh"},
			script: hookPayload + ` > scripts/pre-commit.sh`,
			keep:   []string{"scripts/pre-commit.sh"},
		},
		{
			name:   "hooks directory linked to a directory of the tree",
			files:  map[string]string{"tools/hooks/README": "shared hooks\n"},
			rmdirs: []string{".git/hooks"},
			links:  map[string]string{".git/hooks": "../tools/hooks"},
			script: hookPayload + ` > tools/hooks/pre-commit; chmod +x tools/hooks/pre-commit`,
			keep:   []string{"tools/hooks/pre-commit"},
		},
		{
			name:   "conftest.py linked to a shared file",
			files:  map[string]string{"shared/conftest_common.py": "# ok\n", "pkg/x.py": ""},
			links:  map[string]string{"pkg/conftest.py": "../shared/conftest_common.py"},
			script: `echo 'import os; os.system("touch $PWNED")' > shared/conftest_common.py`,
			keep:   []string{"shared/conftest_common.py", "pkg/conftest.py"},
		},
		{
			name:  "hook linked through a chain of links",
			files: map[string]string{"impl/pc.sh": "#!/bin/sh\nexit 0\n"},
			links: map[string]string{".git/hooks/pre-commit": "../../scripts/pc", "scripts/pc": "../impl/pc.sh"},
			script: hookPayload + ` > impl/pc.sh; ` + hookPayload + ` > evil.sh; chmod +x evil.sh; ln -sf ../evil.sh scripts/pc; ` +
				`mv scripts scripts.old; mkdir scripts; ln -s ../evil.sh scripts/pc`,
			keep:   []string{"impl/pc.sh"},
			keepLn: []string{"scripts/pc"},
		},
		{
			name:   "hooks directory linked through a directory link",
			files:  map[string]string{"lib/hooks/README": "shared hooks\n"},
			rmdirs: []string{".git/hooks"},
			links:  map[string]string{".git/hooks": "../tools/hooks", "tools/hooks": "../lib/hooks"},
			script: hookPayload + ` > lib/hooks/pre-commit; chmod +x lib/hooks/pre-commit; ` +
				`rm tools/hooks; mkdir tools/hooks; ` + hookPayload + ` > tools/hooks/pre-commit; chmod +x tools/hooks/pre-commit`,
			keep:   []string{"lib/hooks/pre-commit"},
			keepLn: []string{"tools/hooks"},
		},
		{
			name:  "git configuration linked to a file of the tree",
			moves: [][2]string{{".git/config", "gitconfig"}},
			links: map[string]string{".git/config": "../gitconfig"},
			script: `printf '[core]\n\thooksPath = evil\n' >> gitconfig; mkdir evil; ` +
				hookPayload + ` > evil/pre-commit; chmod +x evil/pre-commit`,
			keep: []string{"gitconfig"},
		},
		{
			name:   "hook linked to a script not there yet",
			links:  map[string]string{".git/hooks/pre-commit": "../../scripts/pre-commit.sh"},
			script: `mkdir -p scripts; ` + hookPayload + ` > scripts/pre-commit.sh; chmod +x scripts/pre-commit.sh`,
			keep:   []string{"scripts/pre-commit.sh"},
		},
		{
			// Fifth review, F1: the ".." after a missing directory goes
			// wherever the directory made there leads, not where the
			// path reads.
			name:   "hook linked through a missing directory and ..",
			files:  map[string]string{"README2": "x"},
			links:  map[string]string{".git/hooks/pre-commit": "../../nodir/../pc.sh"},
			script: `mkdir -p a/b; ln -s a/b nodir; ` + hookPayload + ` > a/pc.sh; chmod +x a/pc.sh`,
		},
		{
			// Fifth review, F3: a mount covers one name of a file.
			name:   "hook linked to a script with a second name",
			files:  map[string]string{"tools/pc.sh": "#!/bin/sh\nexit 0\n"},
			hard:   map[string]string{"other/pc2.sh": "tools/pc.sh"},
			links:  map[string]string{".git/hooks/pre-commit": "../../tools/pc.sh"},
			script: hookPayload + ` > other/pc2.sh`,
			keep:   []string{"tools/pc.sh"},
		},
		{
			name:   "hook that is a second name of a file of the tree",
			files:  map[string]string{"tools/pc.sh": "#!/bin/sh\nexit 0\n"},
			hard:   map[string]string{".git/hooks/pre-commit": "tools/pc.sh"},
			script: hookPayload + ` > tools/pc.sh`,
			keep:   []string{"tools/pc.sh"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newGitLab(t)
			dir := l.repo(t, "linktarget")
			for rel, body := range c.files {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o755))
			}
			for _, rel := range c.rmdirs {
				must(t, os.RemoveAll(filepath.Join(dir, rel)))
			}
			for _, m := range c.moves {
				must(t, os.Rename(filepath.Join(dir, m[0]), filepath.Join(dir, m[1])))
			}
			for rel, to := range c.links {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
				must(t, os.Symlink(to, filepath.Join(dir, rel)))
			}
			for rel, to := range c.hard {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
				must(t, os.Link(filepath.Join(dir, to), filepath.Join(dir, rel)))
			}
			l.git(t, dir, "add", "-A")
			l.git(t, dir, "commit", "-q", "--no-verify", "--allow-empty", "-m", "layout")
			before := map[string]string{}
			for _, rel := range c.keep {
				before[rel] = content(filepath.Join(dir, rel))
			}
			for _, rel := range c.keepLn {
				before[rel], _ = os.Readlink(filepath.Join(dir, rel))
			}
			out, err := l.run(t, dir, c.script)
			t.Logf("command output: %s; Done: %v", out, err)
			for _, rel := range c.keep {
				if now := content(filepath.Join(dir, rel)); now != before[rel] {
					t.Errorf("%s went from %s to %s during the call", rel, before[rel], now)
				}
			}
			for _, rel := range c.keepLn {
				if now, _ := os.Readlink(filepath.Join(dir, rel)); now != before[rel] {
					t.Errorf("the link %s went from %q to %q during the call", rel, before[rel], now)
				}
			}
			if out, err := l.try(dir, "commit", "-q", "--allow-empty", "-m", "x"); err != nil {
				t.Logf("host git commit: %v %s", err, out)
			}
			l.notPwned(t)
		})
	}
}

// content is a file's content, links followed, or what stands instead.
func content(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(none: %v)", errors.Unwrap(err))
	}
	return fmt.Sprintf("%q", b)
}

// TestLinkTargetUnprotectable: a protected link whose target cannot be
// made read-only, or cannot be found in a bounded number of steps, fails
// the plan (the call is asked) with a reason.
func TestLinkTargetUnprotectable(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string)
		reason string // in the error
	}{
		{"hooks directory linked to the working directory", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, ".git", "hooks")))
			must(t, os.Symlink("..", filepath.Join(dir, ".git", "hooks")))
		}, "writable directory"},
		{"hook linked to the directory above the working directory", func(t *testing.T, dir string) {
			must(t, os.Symlink("../../..", filepath.Join(dir, ".git", "hooks", "pre-commit")))
		}, "writable directory"},
		{"hooks in a loop", func(t *testing.T, dir string) {
			must(t, os.Symlink("b", filepath.Join(dir, ".git", "hooks", "pre-commit")))
			must(t, os.Symlink("pre-commit", filepath.Join(dir, ".git", "hooks", "b")))
		}, "loop"},
		{"hook through a link right in the working directory", func(t *testing.T, dir string) {
			must(t, os.MkdirAll(filepath.Join(dir, "vendor", "tools"), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "vendor", "tools", "pc.sh"), []byte("#!/bin/sh\n"), 0o755))
			must(t, os.Symlink("vendor/tools", filepath.Join(dir, "tools")))
			must(t, os.Symlink("../../tools/pc.sh", filepath.Join(dir, ".git", "hooks", "pre-commit")))
		}, "right in a writable directory"},
		{"hook linked through /proc/self", func(t *testing.T, dir string) {
			// Fifth review, F2: it resolves against whichever process
			// reads it, git's working directory on the host.
			must(t, os.MkdirAll(filepath.Join(dir, "tools"), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "tools", "pc.sh"), []byte("#!/bin/sh\n"), 0o755))
			must(t, os.Symlink("/proc/self/cwd/tools/pc.sh", filepath.Join(dir, ".git", "hooks", "pre-commit")))
		}, "resolves differently for each process"},
		{"protected directory too large to search for links", func(t *testing.T, dir string) {
			// The bound lowered, so that the test makes 101 files, not
			// 10,001.
			was := maxLinkWalk
			maxLinkWalk = 100
			t.Cleanup(func() { maxLinkWalk = was })
			hooks := filepath.Join(dir, ".git", "hooks")
			for i := 0; i <= maxLinkWalk; i++ {
				must(t, os.WriteFile(filepath.Join(hooks, fmt.Sprintf("f%05d", i)), nil, 0o644))
			}
		}, "more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newGitLab(t)
			dir := l.repo(t, "unprotectable")
			c.setup(t, dir)
			_, err := l.pl.Plan(Workspace, false, dir)
			if !errors.Is(err, ErrUnprotectable) {
				t.Fatalf("Plan = %v, want ErrUnprotectable", err)
			}
			if !strings.Contains(err.Error(), c.reason) {
				t.Errorf("Plan = %v, want a reason with %q", err, c.reason)
			}
		})
	}
}
