package pathrisk

import (
	"path"
	"testing"

	"pgregory.net/rapid"
)

// TestIsCleanIsPathClean: isClean, which lets Canonical skip path.Clean,
// holds exactly for the absolute paths path.Clean leaves as they are, and
// Canonical's result is path.Clean's whether or not the join was clean.
func TestIsCleanIsPathClean(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"/", "//", "/a", "/a/", "/a//b", "/.", "/..", "/a/.", "/a/..", "/a/./b", "/a/../b", "/.a", "/..a", "/a.", "/a..", "/a/.b/..c", "/..."} {
		if got, want := isClean(p), path.Clean(p) == p; got != want {
			t.Errorf("isClean(%q) = %v, path.Clean gives %q", p, got, path.Clean(p))
		}
	}
	comp := rapid.StringOfN(rapid.SampledFrom([]rune{'/', '.', 'a', 'B'}), 0, 12, -1)
	rapid.Check(t, func(t *rapid.T) {
		p := "/" + comp.Draw(t, "p")
		if got, want := isClean(p), path.Clean(p) == p; got != want {
			t.Fatalf("isClean(%q) = %v, path.Clean gives %q", p, got, path.Clean(p))
		}
		base, rest := "/"+comp.Draw(t, "base"), comp.Draw(t, "rest")
		want := base
		if rest != "" {
			want = base + "/" + rest
		}
		if got, want := joinAbs(base, rest, true), path.Clean(want); got != want {
			t.Fatalf("joinAbs(%q, %q) = %q, path.Clean gives %q", base, rest, got, want)
		}
	})
}
