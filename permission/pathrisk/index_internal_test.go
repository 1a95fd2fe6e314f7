package pathrisk

import (
	"reflect"
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// naiveIndex is index as it was written first: a slice per key, appended
// to in table order.
func naiveIndex(ls []location) indexed {
	ix := indexed{byFirst: make(map[string][]location)}
	for _, l := range ls {
		if l.comps[0] == "*" {
			ix.wildcard = append(ix.wildcard, l)
			continue
		}
		ix.byFirst[l.comps[0]] = append(ix.byFirst[l.comps[0]], l)
	}
	ix.keys = filterOf(ix.byFirst)
	return ix
}

// TestIndexKeepsTableOrder checks that index groups a table as the plain
// loop does, each key's locations in table order (the first that matches
// names the finding), for every table and for one with repeated and
// interleaved keys and wildcards.
func TestIndexKeepsTableOrder(t *testing.T) {
	var all []location
	for _, ix := range []*indexed{&rootLocations, &homeLocations, &anyLocations} {
		for _, ls := range ix.byFirst {
			all = append(all, ls...)
		}
		all = append(all, ix.wildcard...)
	}
	mixed := []location{
		loc("a/x", false, cred, false, "1"), loc("*/y", false, cred, false, "2"), loc("b", true, execute, true, "3"),
		loc("a/y", false, risk.Read, false, "4"), loc("*/z", false, cred, false, "5"), loc("a", true, cred, false, "6"),
		loc("b/c", false, cred, false, "7"),
	}
	for name, ls := range map[string][]location{"all tables": all, "mixed": mixed} {
		got, want := index(ls), naiveIndex(ls)
		if !reflect.DeepEqual(got.wildcard, want.wildcard) || !reflect.DeepEqual(got.keys, want.keys) || len(got.byFirst) != len(want.byFirst) {
			t.Errorf("%s: index differs from the plain loop: wildcards, filter or keys", name)
		}
		for k, w := range want.byFirst {
			if g := got.byFirst[k]; !reflect.DeepEqual(g, w) {
				t.Errorf("%s: the locations of %q differ from the plain loop's:\n got %+v\nwant %+v", name, k, g, w)
			}
		}
		for k, g := range got.byFirst {
			if len(g) != cap(g) {
				t.Errorf("%s: the locations of %q have room to append into the next key's", name, k)
			}
		}
	}
}
