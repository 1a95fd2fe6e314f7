package pathrisk

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"iter"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
)

var updateLocations = flag.Bool("update-locations", false, "rewrite "+locationsGenFile+" from the tables of locations.go and names.go")

// locationsGenFile holds the indexed tables of locations and the filters
// of the name tables, written by TestLocationsGenerated -update-locations
// (go generate).
const locationsGenFile = "locations_gen.go"

// generatedTables are the static tables of locationsGenFile with the
// source each is generated from, in the file's order.
func generatedTables() []struct {
	name   string
	static indexed
	source []location
} {
	return []struct {
		name   string
		static indexed
		source []location
	}{
		{"rootLocations", rootLocations, sourceRootLocations()},
		{"homeLocations", homeLocations, sourceHomeLocations()},
		{"anyLocations", anyLocations, sourceAnyLocations()},
	}
}

// generatedFilters are the static filters of the name tables of
// locationsGenFile with their keys, in the file's order.
func generatedFilters() []struct {
	name   string
	static *keyFilter
	keys   []string
} {
	return []struct {
		name   string
		static *keyFilter
		keys   []string
	}{
		{"cookieFilter", cookieFilter, slices.Sorted(maps.Keys(cookieNames))},
		{"secretFilter", secretFilter, slices.Sorted(maps.Keys(secretNames))},
		{"secretExtFilter", secretExtFilter, slices.Sorted(maps.Keys(secretExts))},
	}
}

// TestLocationsGenerated checks that the static tables of locationsGenFile
// are the tables of locations.go indexed, and the name filters those of
// names.go's tables: the file is, byte for byte, what the generator writes
// from them now, and its values are what index and filterOf build. Were a
// loc line or a name changed without go generate, this fails; with
// -update-locations it rewrites the generated file instead.
func TestLocationsGenerated(t *testing.T) {
	src, err := genLocations()
	if err != nil {
		t.Fatal(err)
	}
	if *updateLocations {
		if err := os.WriteFile(locationsGenFile, src, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s; run the test again without -update-locations", locationsGenFile)
		return
	}
	const regen = "; run go generate ./permission/pathrisk after changing a table"
	committed, err := os.ReadFile(locationsGenFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, src) {
		t.Errorf("%s differs from what the tables generate%s:\n%s", locationsGenFile, regen, firstDiff(committed, src))
	}
	for _, tb := range generatedTables() {
		if want := index(tb.source); !reflect.DeepEqual(tb.static, want) {
			t.Errorf("%s differs from its source table indexed%s", tb.name, regen)
		}
	}
	for _, f := range generatedFilters() {
		if want := filterOf(slices.Values(f.keys)); !reflect.DeepEqual(f.static, want) {
			t.Errorf("%s differs from the filter of its table's names%s", f.name, regen)
		}
	}
}

// TestLocationsGeneratedCatchesDrift changes each field of a location, the
// order of a table and a name, and checks that the generator then writes
// something else than the committed file: an edited loc line or name is
// seen by TestLocationsGenerated.
func TestLocationsGeneratedCatchesDrift(t *testing.T) {
	committed, err := os.ReadFile(locationsGenFile)
	if err != nil {
		t.Fatal(err)
	}
	type tables struct {
		locs  [][]location
		names [][]string
	}
	current := func() tables {
		var ts tables
		for _, tb := range generatedTables() {
			ts.locs = append(ts.locs, tb.source)
		}
		for _, f := range generatedFilters() {
			ts.names = append(ts.names, f.keys)
		}
		return ts
	}
	for name, change := range map[string]func(ts *tables){
		"path":       func(ts *tables) { ts.locs[0][1].comps = splitAll("proc/*/environs") },
		"tree":       func(ts *tables) { ts.locs[1][0].tree = !ts.locs[1][0].tree },
		"level":      func(ts *tables) { ts.locs[2][0].level = execute },
		"write only": func(ts *tables) { ts.locs[2][0].writeOnly = !ts.locs[2][0].writeOnly },
		"what":       func(ts *tables) { ts.locs[1][3].what += "." },
		"order":      func(ts *tables) { ts.locs[0][5], ts.locs[0][6] = ts.locs[0][6], ts.locs[0][5] },
		"dropped":    func(ts *tables) { ts.locs[2] = slices.Delete(ts.locs[2], 7, 8) },
		"wildcard":   func(ts *tables) { ts.locs[1] = append(ts.locs[1], loc("*/x", false, cred, false, "x")) },
		"name":       func(ts *tables) { ts.names[1] = append(ts.names[1], "wallet.dat") },
	} {
		ts := current()
		change(&ts)
		src, err := genLocationsFrom(ts.locs, ts.names)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if bytes.Equal(src, committed) {
			t.Errorf("%s: a changed table generates the committed file", name)
		}
	}
	ts := current()
	if src, err := genLocationsFrom(ts.locs, ts.names); err != nil || !bytes.Equal(src, committed) {
		t.Errorf("the unchanged tables do not generate the committed file (err %v)", err)
	}
}

// firstDiff returns the first line where a and b differ, for a failure
// message.
func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n committed: %s\n generated: %s", i+1, x, y)
		}
	}
	return "(no line differs)"
}

// index builds the table of ls, each first component's locations in the
// order of ls.
func index(ls []location) indexed {
	var ix indexed
	for _, l := range ls {
		if l.comps[0] == "*" {
			ix.wildcard = append(ix.wildcard, l)
			continue
		}
		i, ok := slices.BinarySearchFunc(ix.byFirst, l.comps[0], func(g firstGroup, c string) int { return strings.Compare(g.first, c) })
		if !ok {
			ix.byFirst = slices.Insert(ix.byFirst, i, firstGroup{first: l.comps[0]})
		}
		ix.byFirst[i].locs = append(ix.byFirst[i].locs, l)
	}
	ix.keys = filterOf(func(yield func(string) bool) {
		for _, g := range ix.byFirst {
			if !yield(g.first) {
				return
			}
		}
	})
	return ix
}

// filterOf returns the filter of keys, which are never empty.
func filterOf(keys iter.Seq[string]) *keyFilter {
	f := new(keyFilter)
	for k := range keys {
		f.first[k[0]] |= 1 << (len(k) % 64)
		f.last[k[len(k)-1]] |= 1 << (len(k) % 64)
	}
	return f
}

// genLocations returns the source of locationsGenFile for the tables as
// they are.
func genLocations() ([]byte, error) {
	var locs [][]location
	for _, tb := range generatedTables() {
		locs = append(locs, tb.source)
	}
	var names [][]string
	for _, f := range generatedFilters() {
		names = append(names, f.keys)
	}
	return genLocationsFrom(locs, names)
}

// genLocationsFrom returns the source of locationsGenFile for the tables
// of locations locs and the keys of the name tables names, in the order
// of generatedTables and generatedFilters: composite literals of
// constants only, which the compiler lays out in the binary, so that no
// code runs at init to build them.
func genLocationsFrom(locs [][]location, names [][]string) ([]byte, error) {
	tables, filters := generatedTables(), generatedFilters()
	if len(locs) != len(tables) || len(names) != len(filters) {
		return nil, fmt.Errorf("%d tables and %d name tables, want %d and %d", len(locs), len(names), len(tables), len(filters))
	}
	var b bytes.Buffer
	b.WriteString(`// Code generated by go test -run '^TestLocationsGenerated$' -update-locations; DO NOT EDIT.

package pathrisk

// The tables of locations.go indexed by first component (index) and the
// filters of the name tables of names.go (filterOf), as static data: no
// code runs at start to build them. TestLocationsGenerated checks that
// they are what the tables give.
`)
	for i, tb := range tables {
		ix := index(locs[i])
		fmt.Fprintf(&b, "\nvar %s = indexed{\nbyFirst: []firstGroup{\n", tb.name)
		for _, g := range ix.byFirst {
			fmt.Fprintf(&b, "{first: %s, locs: []location{\n", strconv.Quote(g.first))
			for _, l := range g.locs {
				if err := genLocation(&b, l); err != nil {
					return nil, fmt.Errorf("%s: %w", tb.name, err)
				}
			}
			b.WriteString("}},\n")
		}
		b.WriteString("},\n")
		if ix.wildcard != nil {
			b.WriteString("wildcard: []location{\n")
			for _, l := range ix.wildcard {
				if err := genLocation(&b, l); err != nil {
					return nil, fmt.Errorf("%s: %w", tb.name, err)
				}
			}
			b.WriteString("},\n")
		}
		b.WriteString("keys: ")
		genFilter(&b, ix.keys)
		b.WriteString(",\n}\n")
	}
	b.WriteString("\nvar (\n")
	for i, f := range filters {
		for _, k := range names[i] {
			if k == "" {
				return nil, fmt.Errorf("%s: an empty name", f.name)
			}
		}
		fmt.Fprintf(&b, "%s = ", f.name)
		genFilter(&b, filterOf(slices.Values(names[i])))
		b.WriteString("\n")
	}
	b.WriteString(")\n")
	return format.Source(b.Bytes())
}

// genLocation writes l as a composite literal, one line.
func genLocation(b *bytes.Buffer, l location) error {
	level, ok := map[risk.Level]string{cred: "cred", execute: "execute"}[l.level]
	if !ok {
		return fmt.Errorf("%q: level %v has no constant in the generator; add one", strings.Join(l.comps, "/"), l.level)
	}
	if len(l.comps) == 0 {
		return fmt.Errorf("a location without components (%q)", l.what)
	}
	b.WriteString("{comps: []string{")
	for i, c := range l.comps {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(c))
	}
	b.WriteString("}")
	if l.tree {
		b.WriteString(", tree: true")
	}
	fmt.Fprintf(b, ", level: %s", level)
	if l.writeOnly {
		b.WriteString(", writeOnly: true")
	}
	fmt.Fprintf(b, ", what: %s},\n", strconv.Quote(l.what))
	return nil
}

// genFilter writes f as a composite literal of its non-zero bitmaps, by
// byte.
func genFilter(b *bytes.Buffer, f *keyFilter) {
	b.WriteString("&keyFilter{\n")
	for _, m := range [...]struct {
		name string
		bits *[256]uint64
	}{{"first", &f.first}, {"last", &f.last}} {
		fmt.Fprintf(b, "%s: [256]uint64{", m.name)
		for c, bits := range m.bits {
			if bits == 0 {
				continue
			}
			if c < 0x80 && strconv.IsPrint(rune(c)) {
				b.WriteString(strconv.QuoteRune(rune(c)))
			} else {
				fmt.Fprintf(b, "%#02x", c)
			}
			fmt.Fprintf(b, ": %#x, ", bits)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}")
}
