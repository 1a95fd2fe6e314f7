package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestResolveLinks: resolveLinks ends where filepath.EvalSymlinks does,
// names every link on the way (a chain, a link among the directories),
// gives the path a missing target would have, and ends a loop.
func TestResolveLinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"real/sub", "other"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(root, "real", "sub", "f"), nil, 0o644))
	links := map[string]string{
		"file":     "real/sub/f",          // one step
		"chain1":   "chain2",              // a chain
		"chain2":   "other/../real/sub/f", // .. through a real directory
		"dirlink":  "real",                // a link to a directory
		"via":      "dirlink/sub/f",       // a link among the directories
		"abs":      filepath.Join(root, "via"),
		"dangling": "real/missing/x",
		"loop1":    "loop2",
		"loop2":    "loop1",
		"notdir":   "real/sub/f/x",
	}
	for l, to := range links {
		must(t, os.Symlink(to, filepath.Join(root, l)))
	}
	f := filepath.Join(root, "real", "sub", "f")
	abs := func(rels ...string) []string {
		var out []string
		for _, r := range rels {
			out = append(out, filepath.Join(root, r))
		}
		return out
	}
	cases := []struct {
		path    string
		target  string
		hops    []string
		missing bool
		err     string
	}{
		{"real/sub/f", f, nil, false, ""},
		{"file", f, abs("file"), false, ""},
		{"chain1", f, abs("chain1", "chain2"), false, ""},
		{"dirlink", filepath.Join(root, "real"), abs("dirlink"), false, ""},
		{"via", f, abs("via", "dirlink"), false, ""},
		{"abs", f, abs("abs", "via", "dirlink"), false, ""},
		{"dangling", filepath.Join(root, "real", "missing", "x"), abs("dangling"), true, ""},
		{"loop1", "", nil, false, "a loop"},
		{"notdir", "", nil, false, "not a directory"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			target, hops, missing, err := resolveLinks(filepath.Join(root, c.path))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("resolveLinks = %v, want an error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if target != c.target || !slices.Equal(hops, c.hops) || missing != c.missing {
				t.Errorf("resolveLinks = %s %v %v, want %s %v %v", target, hops, missing, c.target, c.hops, c.missing)
			}
			if !missing {
				if want, _ := filepath.EvalSymlinks(filepath.Join(root, c.path)); want != target {
					t.Errorf("filepath.EvalSymlinks gives %s, resolveLinks %s", want, target)
				}
			}
		})
	}
}
