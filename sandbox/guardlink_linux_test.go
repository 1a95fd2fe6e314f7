package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Third review, R5 and R6: a link where a guarded directory, or the first
// directory of a protected path (.cargo of .cargo/config.toml), goes must
// not keep what the command planted behind it.

// guardRun plans a workspace call in the world's project and, when the
// plan is made, runs script there with sh. It returns the plan's error
// (the script is not run then) and what Done said.
func guardRun(t *testing.T, w *world, script string) (planErr, done error) {
	t.Helper()
	pl := NewPlanner(Env{Home: w.home, DataDir: filepath.Join(w.home, ".local", "share", "custom-agent"), Caches: []string{w.cache}})
	p, err := pl.Plan(Workspace, false, w.proj)
	if err != nil {
		return err, nil
	}
	var out strings.Builder
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: w.proj, Stdout: &out, Stderr: &out,
		Env: []string{"PATH=/usr/bin:/bin", "HOME=" + w.home}}
	c, err := Confine(p, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("the command: %v\n%s", err, out.String())
	}
	return nil, c.Done()
}

// reached fails if a file can be read at rel in the project, links
// followed, as the tool that reads it would.
func reached(t *testing.T, w *world, rel string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(w.proj, rel)); err == nil {
		t.Errorf("%s, planted during the call, is there after it", rel)
	}
}

// TestGuardedDirReplacedByLink: a directory that existed when the call
// started, replaced by a link to itself under another name, with a
// guarded name planted in it. The link is removed, and the note says so.
func TestGuardedDirReplacedByLink(t *testing.T) {
	cases := []struct {
		name    string
		dirs    []string // made before the call, each with a file
		script  string
		planted string // must not be reachable after the call
		link    string // the link the note names
	}{
		{"pytest's tests directory", []string{"tests"},
			`mv tests tests.d && ln -s tests.d tests && echo 'import os' > tests.d/conftest.py`,
			"tests/conftest.py", "tests"},
		{"a package's directory and its .npmrc", []string{"web"},
			`mv web web.d && ln -s web.d web && echo 'node-options=--require=./x.js' > web.d/.npmrc`,
			"web/.npmrc", "web"},
		{"a directory two deep, linked to elsewhere", []string{"a/b"},
			`mv a/b b.d && ln -s ../b.d a/b && echo 'import os' > b.d/conftest.py`,
			"a/b/conftest.py", "a/b"},
		{"a directory whose parent was linked", []string{"c/d"},
			`mv c c.d && ln -s c.d c && echo 'import os' > c.d/d/conftest.py`,
			"c/d/conftest.py", "c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			for _, d := range tc.dirs {
				must(t, os.MkdirAll(filepath.Join(w.proj, d), 0o755))
				must(t, os.WriteFile(filepath.Join(w.proj, d, "test_a.py"), []byte("def test_a(): pass\n"), 0o644))
			}
			planErr, done := guardRun(t, w, tc.script)
			if planErr != nil {
				t.Fatal(planErr)
			}
			t.Logf("Done = %v", done)
			reached(t, w, tc.planted)
			if !errors.Is(done, ErrProtectedCreated) || !strings.Contains(done.Error(), "removed "+strconv.Quote(tc.link)) {
				t.Errorf("Done = %v, want a note that removed %s", done, tc.link)
			}
		})
	}
}

// TestLinkAtKeptFirstComponent: the first directory of a protected path
// of several components that existed when the call started (.cargo,
// .mvn), replaced by a link to itself under another name, with the
// protected file planted in it.
func TestLinkAtKeptFirstComponent(t *testing.T) {
	cases := []struct {
		name, dir, script, planted, link string
	}{
		{"cargo's directory in a package", "sub/.cargo",
			`mv sub/.cargo sub/.cargo.d && ln -s .cargo.d sub/.cargo && printf '[build]\nrustc-wrapper = "/tmp/evil"\n' > sub/.cargo.d/config.toml`,
			"sub/.cargo/config.toml", "sub/.cargo"},
		{"Maven's directory two deep", "a/b/.mvn",
			`mv a/b/.mvn a/mvn.d && ln -s ../mvn.d a/b/.mvn && echo '-javaagent:evil.jar' > a/mvn.d/jvm.config`,
			"a/b/.mvn/jvm.config", "a/b/.mvn"},
		{"Maven's directory at the top", ".mvn",
			`mv .mvn .mvn.d && ln -s .mvn.d .mvn && echo '-javaagent:evil.jar' > .mvn.d/jvm.config`,
			".mvn/jvm.config", ".mvn"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			must(t, os.MkdirAll(filepath.Join(w.proj, tc.dir), 0o755))
			must(t, os.WriteFile(filepath.Join(w.proj, tc.dir, "notes.txt"), []byte("\n"), 0o644))
			planErr, done := guardRun(t, w, tc.script)
			if planErr != nil {
				t.Fatal(planErr)
			}
			t.Logf("Done = %v", done)
			reached(t, w, tc.planted)
			if !errors.Is(done, ErrProtectedCreated) || !strings.Contains(done.Error(), tc.link) {
				t.Errorf("Done = %v, want a note that removed %s", done, tc.link)
			}
		})
	}
}

// TestLinkAtFirstComponentOfProtectedPath: a repository that ships a link
// at .cargo, .github, .mvn or gradle (dangling, into the tree, or one the
// command retargets). What is planted behind it must not stay: the plan
// refuses, as for a link at a protected path, since a process could
// retarget the link or fill its target.
func TestLinkAtFirstComponentOfProtectedPath(t *testing.T) {
	cases := []struct {
		name    string
		links   map[string]string // link → target, made before the call
		dirs    []string          // made before the call
		script  string
		planted string
	}{
		{"a dangling .cargo", map[string]string{".cargo": "cargo-cfg"}, nil,
			`mkdir cargo-cfg && printf '[build]\nrustc-wrapper = "/tmp/evil"\n' > cargo-cfg/config.toml`,
			".cargo/config.toml"},
		{"a dangling .github", map[string]string{".github": "gh"}, nil,
			`mkdir -p gh/workflows && echo 'on: push' > gh/workflows/x.yml`,
			".github/workflows/x.yml"},
		{"a .mvn retargeted", map[string]string{".mvn": "mvn-cfg"}, []string{"mvn-cfg"},
			`rm .mvn && mkdir mvn2 && ln -s mvn2 .mvn && echo '-javaagent:evil.jar' > mvn2/jvm.config`,
			".mvn/jvm.config"},
		{"a .cargo into the tree", map[string]string{".cargo": "cargo"}, []string{"cargo"},
			`printf '[build]\nrustc-wrapper = "/tmp/evil"\n' > cargo/config.toml`,
			".cargo/config.toml"},
		{"a dangling .cargo in a package", map[string]string{"sub/.cargo": "../cargo-cfg"}, []string{"sub"},
			`mkdir cargo-cfg && printf '[build]\nrustc-wrapper = "/tmp/evil"\n' > cargo-cfg/config.toml`,
			"sub/.cargo/config.toml"},
		{"a gradle directory in a package, retargeted", map[string]string{"sub/gradle": "../g1"}, []string{"sub", "g1"},
			`rm sub/gradle && mkdir -p g2/wrapper && ln -s ../g2 sub/gradle && echo 'distributionUrl=x' > g2/wrapper/gradle-wrapper.properties`,
			"sub/gradle/wrapper/gradle-wrapper.properties"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			must(t, os.RemoveAll(filepath.Join(w.proj, ".github")))
			for _, d := range tc.dirs {
				must(t, os.MkdirAll(filepath.Join(w.proj, d), 0o755))
			}
			for link, target := range tc.links {
				must(t, os.Symlink(target, filepath.Join(w.proj, link)))
			}
			planErr, done := guardRun(t, w, tc.script)
			if planErr != nil {
				if !errors.Is(planErr, ErrUnprotectable) {
					t.Fatalf("Plan = %v, want ErrUnprotectable", planErr)
				}
				return
			}
			t.Logf("Done = %v", done)
			reached(t, w, tc.planted)
		})
	}
}
