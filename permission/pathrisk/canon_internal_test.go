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
	keysOf := func(m map[string]string) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		return ks
	}
	var cookies []string
	for k := range cookieNames {
		cookies = append(cookies, k)
	}
	check("cookieNames", cookieFilter, cookies)
	check("secretNames", secretFilter, keysOf(secretNames))
	check("secretExts", secretExtFilter, keysOf(secretExts))
	for name, ix := range map[string]indexed{"root": rootLocations, "home": homeLocations, "any": anyLocations} {
		var firsts []string
		for k := range ix.byFirst {
			firsts = append(firsts, k)
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
	if (&keyFilter{}).may("") || filterOf(map[string]bool{"a": true}).may("") {
		t.Error("the empty string passes a filter; no table has it as a key")
	}
}
