package resolve_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/resolve"
)

func TestPath(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "home", ".ssh")
	repo := filepath.Join(dir, "repo")
	for _, d := range []string{secret, repo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(secret, filepath.Join(repo, "keys")))
	must(os.Symlink(filepath.Join(dir, "home", ".ssh", "id_new"), filepath.Join(repo, "dangling")))
	must(os.Symlink("loop", filepath.Join(repo, "loop")))
	tests := []struct{ name, in, want string }{
		{"plain existing", repo, repo},
		{"not existing", filepath.Join(repo, "a", "b"), filepath.Join(repo, "a", "b")},
		{"link dir", filepath.Join(repo, "keys", "id_rsa"), filepath.Join(secret, "id_rsa")},
		{"dangling link", filepath.Join(repo, "dangling"), filepath.Join(secret, "id_new")},
		{"dotdot after link", filepath.Join(repo, "keys") + "/../x", filepath.Join(dir, "home", "x")},
		{"dotdot in missing dir", filepath.Join(repo, "nope") + "/../x", filepath.Join(repo, "x")},
		{"loop", filepath.Join(repo, "loop", "x"), filepath.Join(repo, "loop", "x")},
		{"relative stays", "rel/x", "rel/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := resolve.Path(tc.in); got != tc.want {
				t.Errorf("Path(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	// One Resolver for every case, in both orders: what it remembers of
	// one path never changes the answer for another.
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}} {
		var r resolve.Resolver
		for _, i := range order {
			if tc := tests[i]; r.Path(tc.in) != tc.want {
				t.Errorf("shared Resolver: Path(%q) = %q, want %q", tc.in, r.Path(tc.in), tc.want)
			}
		}
	}
	m := resolve.Map([]string{repo, filepath.Join(repo, "keys")})
	if len(m) != 1 || m[filepath.Join(repo, "keys")] != secret {
		t.Errorf("Map = %v", m)
	}
}

func TestGlobs(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(dir, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(proj, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	realSecret, _ := filepath.EvalSymlinks(secret)
	realProj, _ := filepath.EvalSymlinks(proj)
	pat := filepath.Join(proj, "*.txt")
	got := resolve.Globs([]string{pat, filepath.Join(proj, "*.none"), "rel/*.txt"})
	want := []string{filepath.Join(realProj, "a.txt"), realSecret}
	if len(got) != 1 || !slices.Equal(got[pat], want) {
		t.Fatalf("Globs = %v, want %s: %v", got, pat, want)
	}
	many := filepath.Join(dir, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range resolve.MaxMatches + 1 {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("f%03d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mp := filepath.Join(many, "f*")
	ms := resolve.Globs([]string{mp})[mp]
	if len(ms) != resolve.MaxMatches+1 || ms[resolve.MaxMatches] != "" {
		t.Fatalf("a pattern with too many matches: got %d entries, last %q; want %d and a final \"\"", len(ms), ms[len(ms)-1], resolve.MaxMatches+1)
	}
}

func TestTrees(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(rel, content string) {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("clean/a.go", "package a")
	mk("clean/sub/b.go", "package b")
	mk("secret/a.go", "package a")
	mk("secret/config/.env", "KEY=1")
	mk("repo/main.go", "package main")
	mk("repo/.git/config", "[remote]")
	mk("linked/a.go", "package a")
	if err := os.Symlink("/etc", filepath.Join(base, "linked", "etc")); err != nil {
		t.Fatal(err)
	}
	isSecret := func(p string) bool { return strings.HasSuffix(p, "/.env") || strings.HasSuffix(p, "/.git/config") }
	dir := func(s string) string { return filepath.Join(base, s) }
	got := resolve.Trees([]string{dir("clean"), dir("secret"), dir("repo"), dir("linked"), dir("missing"), "relative"}, isSecret)
	want := map[string]permission.Tree{
		dir("clean"):   {Complete: true},
		dir("secret"):  {Complete: true, Secret: dir("secret/config/.env")},
		dir("repo"):    {Complete: true, GitSecret: dir("repo/.git/config")},
		dir("linked"):  {Complete: true, Link: dir("linked/etc")},
		dir("missing"): {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Trees (-want +got):\n%s", diff)
	}
}

// TestTreesUnignore (review class c): an ignore file beneath the tree, or
// in a directory above it, that negates a pattern is reported, since rg
// then searches .git; one without a negation, or a "!" inside a pattern,
// is not.
func TestTreesUnignore(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(rel, content string) {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("plain/.gitignore", "node_modules/\n*.log # not!negated\n")
	mk("plain/a.go", "package a")
	mk("inside/sub/.ignore", "# keep\n  !.git\n")
	mk("rgignore/.rgignore", "!.env\n")
	mk("exclude/.git/info/exclude", "!.git\n")
	mk("parent/.gitignore", "!.git/\n")
	mk("parent/child/a.go", "package a")
	dir := func(s string) string { return filepath.Join(base, s) }
	got := resolve.Trees([]string{dir("plain"), dir("inside"), dir("rgignore"), dir("exclude"), dir("parent/child")}, func(string) bool { return false })
	for d, want := range map[string]string{
		dir("plain"): "", dir("inside"): dir("inside/sub/.ignore"), dir("rgignore"): dir("rgignore/.rgignore"),
		dir("exclude"): dir("exclude/.git/info/exclude"), dir("parent/child"): dir("parent/.gitignore"),
	} {
		if got[d].Unignore != want {
			t.Errorf("Trees(%s).Unignore = %q, want %q", d, got[d].Unignore, want)
		}
	}
}

// TestFill decides a shell call on a real tree through Fill: the command is
// analysed once (req.Analysis), the link it reads through is resolved and
// its glob expanded, so the key behind both is found.
func TestFill(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	ssh := filepath.Join(home, ".ssh")
	repo := filepath.Join(dir, "repo")
	for _, d := range []string{ssh, repo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ssh, "id_rsa"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ssh, filepath.Join(repo, "keys")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ssh, "id_rsa"), filepath.Join(repo, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	shell, _ := permission.Builtin("shell")
	for _, cmd := range []string{"cat keys/id_rsa", "cat *.txt"} {
		req := permission.Request{Tool: shell, Args: map[string]any{"command": cmd}, Cwd: repo, Home: home}
		resolve.Fill(&req)
		if req.Analysis == nil {
			t.Errorf("%s: Fill left no Analysis", cmd)
		}
		if len(req.Resolved)+len(req.Expanded) == 0 {
			t.Errorf("%s: Fill resolved nothing: %+v", cmd, req)
		}
		if d := (permission.Engine{}).Check(req); d.Decision != permission.Deny {
			t.Errorf("%s through a link to a key: %s (%s), want deny", cmd, d.Decision, d.Reason)
		}
	}
}
