package pathrisk

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// naiveIndex is index as it was written first: a slice per key, appended
// to in table order, and the wildcards apart.
func naiveIndex(ls []location) (byFirst map[string][]location, wildcard []location) {
	byFirst = make(map[string][]location)
	for _, l := range ls {
		if l.comps[0] == "*" {
			wildcard = append(wildcard, l)
			continue
		}
		byFirst[l.comps[0]] = append(byFirst[l.comps[0]], l)
	}
	return byFirst, wildcard
}

// TestIndexKeepsTableOrder checks that index groups a table as the plain
// loop does, each key's locations in table order (the first that matches
// names the finding), the groups sorted for first's binary search, for
// every table and for one with repeated and interleaved keys and
// wildcards; and that first finds each key's locations in the generated
// tables and in what index builds.
func TestIndexKeepsTableOrder(t *testing.T) {
	mixed := []location{
		loc("a/x", false, cred, false, "1"), loc("*/y", false, cred, false, "2"), loc("b", true, execute, true, "3"),
		loc("a/y", false, risk.Read, false, "4"), loc("*/z", false, cred, false, "5"), loc("a", true, cred, false, "6"),
		loc("b/c", false, cred, false, "7"),
	}
	cases := []struct {
		name  string
		ls    []location
		built indexed
	}{{"mixed", mixed, index(mixed)}}
	for _, tb := range generatedTables() {
		cases = append(cases, struct {
			name  string
			ls    []location
			built indexed
		}{tb.name, tb.source, tb.static}, struct {
			name  string
			ls    []location
			built indexed
		}{tb.name + " indexed", tb.source, index(tb.source)})
	}
	for _, tc := range cases {
		byFirst, wildcard := naiveIndex(tc.ls)
		got := tc.built
		if !reflect.DeepEqual(got.wildcard, wildcard) {
			t.Errorf("%s: the wildcards differ from the plain loop's:\n got %+v\nwant %+v", tc.name, got.wildcard, wildcard)
		}
		if !reflect.DeepEqual(got.keys, filterOf(maps.Keys(byFirst))) {
			t.Errorf("%s: the key filter differs from the plain loop's keys'", tc.name)
		}
		var keys []string
		for _, g := range got.byFirst {
			keys = append(keys, g.first)
			if w := byFirst[g.first]; !reflect.DeepEqual(g.locs, w) {
				t.Errorf("%s: the locations of %q differ from the plain loop's:\n got %+v\nwant %+v", tc.name, g.first, g.locs, w)
			}
		}
		if want := slices.Sorted(maps.Keys(byFirst)); !slices.Equal(keys, want) {
			t.Errorf("%s: the keys are not the plain loop's, sorted:\n got %q\nwant %q", tc.name, keys, want)
		}
		for k, w := range byFirst {
			if g := got.first(k); !reflect.DeepEqual(g, w) {
				t.Errorf("%s: first(%q) = %+v, want %+v", tc.name, k, g, w)
			}
			for _, other := range []string{k + "x", strings.TrimSuffix(k, k[len(k)-1:]), "~" + k} {
				if _, ok := byFirst[other]; !ok && got.first(other) != nil {
					t.Errorf("%s: first(%q) finds locations; no location starts with it", tc.name, other)
				}
			}
		}
	}
}
