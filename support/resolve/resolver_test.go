package resolve_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/custom-agent/custom-agent/support/resolve"
)

// TestResolverAsEvalSymlinks: on a tree of directories, files and links
// (to directories, to files, relative, absolute, dangling, looping, to
// "..") one Resolver resolves random paths — with ".", "..", missing and
// doubled components — exactly as resolving each from the root did.
func TestResolverAsEvalSymlinks(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	mk(os.MkdirAll(filepath.Join(root, "a", "b", "c"), 0o755))
	mk(os.MkdirAll(filepath.Join(root, "home", ".ssh"), 0o755))
	mk(os.WriteFile(filepath.Join(root, "a", "file"), nil, 0o644))
	mk(os.WriteFile(filepath.Join(root, "home", ".ssh", "id_rsa"), nil, 0o600))
	links := map[string]string{
		"a/up":        "..",
		"a/b/keys":    filepath.Join(root, "home", ".ssh"),
		"a/b/rel":     "../file",
		"a/b/c/deep":  "../../../home",
		"a/dangling":  filepath.Join(root, "home", "nope", "x"),
		"a/loop":      "loop",
		"a/b/tofile":  filepath.Join(root, "a", "file"),
		"a/b/chain":   "keys",
		"home/backup": "../a/b",
	}
	for l, target := range links {
		mk(os.Symlink(target, filepath.Join(root, l)))
	}
	comps := []string{"a", "b", "c", "up", "keys", "rel", "deep", "dangling", "loop", "tofile", "chain", "home", "backup",
		".ssh", "id_rsa", "file", "missing", ".", "..", ""}
	rapid.Check(t, func(t *rapid.T) {
		var r resolve.Resolver
		for range rapid.IntRange(1, 6).Draw(t, "paths") {
			parts := rapid.SliceOfN(rapid.SampledFrom(comps), 1, 7).Draw(t, "parts")
			p := root + "/" + strings.Join(parts, "/")
			if want, got := resolve.PathUncached(p), r.Path(p); got != want {
				t.Fatalf("Path(%q) = %q, resolving from the root gives %q", strings.TrimPrefix(p, root), got, want)
			}
		}
	})
}
