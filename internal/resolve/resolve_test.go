package resolve_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/custom-agent/custom-agent/internal/resolve"
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
