package pathrisk

import (
	"maps"
	"path"
	"slices"
	"strings"
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

// TestKeyFilterPassesEveryKey: a filter passes every key of its table,
// so a lookup it skips could have found nothing, and it turns away most
// of the names of an ordinary path.
func TestKeyFilterPassesEveryKey(t *testing.T) {
	t.Parallel()
	check := func(name string, f *keyFilter, keys []string) {
		for _, k := range keys {
			if !f.may(k) {
				t.Errorf("%s: the filter turns away its key %q", name, k)
			}
		}
	}
	for _, nt := range generatedNames() {
		if nt.filter != "" {
			check(nt.source, nt.static, slices.Collect(maps.Keys(nt.whats)))
		}
	}
	for name, ix := range map[string]indexed{"root": rootLocations, "home": homeLocations, "any": anyLocations} {
		var firsts []string
		for _, g := range ix.byFirst {
			firsts = append(firsts, g.first)
		}
		check(name+" locations", ix.keys, firsts)
	}
	// The filter is only worth having if it turns ordinary names away.
	passed := 0
	for _, c := range []string{"home", "u", "proj", "src", "internal", "main.go", "store", "sqlite", "testdata", "events.json", "cmd", "pkg"} {
		if anyLocations.keys.may(c) {
			passed++
		}
	}
	if passed > 6 {
		t.Errorf("the anywhere filter passes %d of 12 ordinary components: it no longer saves lookups", passed)
	}
	if (&keyFilter{}).may("") || filterOf(slices.Values([]string{"a"})).may("") {
		t.Error("the empty string passes a filter; no table has it as a key")
	}
}

// TestKeyTypesStartWithID: isPrivateKeyName looks for a key type only in
// names starting with "id_", which holds while every key type does.
func TestKeyTypesStartWithID(t *testing.T) {
	t.Parallel()
	for _, k := range keyTypes {
		if !strings.HasPrefix(k, "id_") {
			t.Errorf("key type %q does not start with id_", k)
		}
	}
}

// TestWithinFold: within a directory, or the directory itself, with ASCII
// case folded, never a sibling sharing its start.
func TestWithinFold(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/home/u/.ssh", "/home/u", true},
		{"/home/u", "/home/u", true},
		{"/home/u", "/Home/U", true},
		{"/home/u/x", "/HOME/U", true},
		{"/home/user", "/home/u", false},
		{"/home/u", "/home/u/x", false},
		{"/home", "/home/u", false},
		{"/x", "/", true},
		{"", "/home", false},
		{"/home/u", "", false},
		{"/home/ü/x", "/home/Ü", true},
		{"/homeX/u", "/home", false},
		// Folds that change the length in bytes: the whole path is
		// compared folded (the Kelvin sign is k, the long s is s).
		{"/home/k", "/home/\u212a", true},
		{"/home/\u017f", "/home/s", true},
	} {
		if got := withinFold(c.p, c.dir); got != c.want {
			t.Errorf("withinFold(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
}

// TestSplit: split gives the non-empty components between the slashes of
// an absolute path, and past maxComps-1 of them only the last.
func TestSplit(t *testing.T) {
	t.Parallel()
	want := func(p string) []string {
		var out []string
		for _, c := range strings.Split(p, "/") {
			if c != "" {
				out = append(out, c)
			}
		}
		if len(out) > maxComps {
			out = append(out[:maxComps-1], out[len(out)-1])
		}
		return out
	}
	check := func(t interface{ Fatalf(string, ...any) }, p string) {
		var buf [maxComps]string
		got := split(p, buf[:0])
		if w := want(p); len(got) != len(w) || len(w) > 0 && !slices.Equal(got, w) {
			t.Fatalf("split(%q) = %q, want %q", p, got, w)
		}
	}
	for _, p := range []string{"/", "//", "/a", "/a/b/", "/a//b", "/home/u/proj/src/main.go", strings.Repeat("/x", maxComps) + "/last", strings.Repeat("/x", maxComps-1)} {
		check(t, p)
	}
	rapid.Check(t, func(t *rapid.T) {
		p := "/" + rapid.StringOfN(rapid.SampledFrom([]rune{'/', 'a', 'b', '.'}), 0, 3*maxComps, -1).Draw(t, "p")
		check(t, p)
	})
}
