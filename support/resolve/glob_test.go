package resolve

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestBoundedGlobAsFilepathGlob: within its bounds, boundedGlob finds what
// filepath.Glob finds, in the same order.
func TestBoundedGlobAsFilepathGlob(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/x.go", "a/y.txt", "b/c/z.go", "b/.hidden", ".env", "d e/f.go", "link-target/t.go"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, p), nil, 0o644))
	}
	must(t, os.Symlink(filepath.Join(root, "link-target"), filepath.Join(root, "lnk")))
	for _, pat := range []string{"*", "*/*.go", "*/*/*.go", "a/*", "b/*", ".e*", "[a-b]/*", "[^a]/*", "d e/*", "lnk/*", "*/nothing", "a/x.go", "*/", "?/*.txt"} {
		full := filepath.Join(root, pat)
		want, _ := filepath.Glob(full)
		got, cut, err := boundedGlob(full, 1000, 1000)
		if err != nil || cut || !slices.Equal(got, want) {
			t.Errorf("%s: got %v (cut %v, %v), want %v", pat, got, cut, err, want)
		}
	}
	if _, _, err := boundedGlob(filepath.Join(root, "[x"), 10, 10); err == nil {
		t.Error("a bad pattern gives no error")
	}
}

// TestBoundedGlobStops: a pattern that would read the whole tree stops
// after the directories it may read, and after the matches it may keep,
// saying so; work is bounded by counting, not by a clock.
func TestBoundedGlobStops(t *testing.T) {
	root := t.TempDir()
	for i := range 30 {
		for j := range 3 {
			must(t, os.MkdirAll(filepath.Join(root, strconv.Itoa(i), strconv.Itoa(j)), 0o755))
		}
	}
	// 1 + 30 directories to read for two levels; a budget of 10 stops it.
	got, cut, err := boundedGlob(filepath.Join(root, "*", "*", "*"), 1000, 10)
	if err != nil || !cut {
		t.Fatalf("got %d matches, cut %v, %v; want it cut", len(got), cut, err)
	}
	got, cut, _ = boundedGlob(filepath.Join(root, "*", "*"), 7, 1000)
	if !cut || len(got) != 7 {
		t.Fatalf("got %d matches, cut %v; want 7 and cut", len(got), cut)
	}
	// Through a link to the tree's own top, as deep as one likes.
	must(t, os.Symlink(root, filepath.Join(root, "0", "loop")))
	deep := root
	for range 200 {
		deep = filepath.Join(deep, "*")
	}
	if _, cut, _ := boundedGlob(deep, MaxMatches, MaxGlobDirs); !cut {
		t.Fatal("a pattern 200 levels deep through a loop was not cut")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
