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

// A nameTable is a table of names of names.go as the generator writes it:
// a function looking a name up (a switch, which the compiler turns into a
// search, where a map would be built at start), and the filter of its
// names or their sorted list where the package needs them.
type nameTable struct {
	source string            // the function that returns the table
	whats  map[string]string // the table: names and what they are ("" in a set)
	set    bool              // lookup reports only whether a name is one
	lookup string            // the generated function
	get    func(string) (string, bool)
	filter string // the generated filter of the names, or ""
	static *keyFilter
	sorted string // the generated sorted list of the names, or ""
	list   []string
}

// generatedNames are the name tables of locationsGenFile, in the file's
// order, with the generated lookups, filters and lists.
func generatedNames() []nameTable {
	set := func(m map[string]bool) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			if v {
				out[k] = ""
			} else {
				out[k] = "false" // genLocationsFrom refuses it
			}
		}
		return out
	}
	isCookie := func(s string) (string, bool) { return "", isCookieName(s) }
	return []nameTable{
		{source: "sourceCookieNames", whats: set(sourceCookieNames()), set: true, lookup: "isCookieName", get: isCookie, filter: "cookieFilter", static: cookieFilter},
		{source: "sourceSecretNames", whats: sourceSecretNames(), lookup: "secretName", get: secretName, filter: "secretFilter", static: secretFilter},
		{source: "sourceSecretExts", whats: sourceSecretExts(), lookup: "secretExt", get: secretExt, filter: "secretExtFilter", static: secretExtFilter},
		{source: "sourceProtectedNames", whats: sourceProtectedNames(), lookup: "protectedFileName", get: protectedFileName, sorted: "protectedFileNames", list: protectedFileNames[:]},
	}
}

// TestLocationsGenerated checks that the static tables of locationsGenFile
// are the tables of locations.go indexed, and the lookups, filters and lists of
// names those of the name tables: the file is, byte for byte, what the generator writes
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
	for _, nt := range generatedNames() {
		names := slices.Sorted(maps.Keys(nt.whats))
		for _, n := range names {
			if w, ok := nt.get(n); !ok || w != nt.whats[n] {
				t.Errorf("%s(%q) = %q, %v; %s has %q%s", nt.lookup, n, w, ok, nt.source, nt.whats[n], regen)
			}
			for _, other := range []string{n + "x", n[:len(n)-1], "~" + n, strings.ToUpper(n)} {
				if _, in := nt.whats[other]; !in {
					if _, ok := nt.get(other); ok {
						t.Errorf("%s(%q) finds a name %s does not have%s", nt.lookup, other, nt.source, regen)
					}
				}
			}
		}
		if nt.filter != "" && !reflect.DeepEqual(nt.static, filterOf(slices.Values(names))) {
			t.Errorf("%s differs from the filter of %s%s", nt.filter, nt.source, regen)
		}
		if nt.sorted != "" && !slices.Equal(nt.list, names) {
			t.Errorf("%s differs from the names of %s, sorted%s", nt.sorted, nt.source, regen)
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
		names []map[string]string
	}
	current := func() tables {
		var ts tables
		for _, tb := range generatedTables() {
			ts.locs = append(ts.locs, tb.source)
		}
		for _, nt := range generatedNames() {
			ts.names = append(ts.names, nt.whats)
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
		"name":       func(ts *tables) { ts.names[1]["wallet.dat"] = "a wallet" },
		"set name":   func(ts *tables) { ts.names[0]["cookies.db"] = "" },
		"name what":  func(ts *tables) { ts.names[3]["setup.py"] += "." },
		"no name":    func(ts *tables) { delete(ts.names[2], ".pem") },
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
	var names []map[string]string
	for _, nt := range generatedNames() {
		names = append(names, nt.whats)
	}
	return genLocationsFrom(locs, names)
}

// genLocationsFrom returns the source of locationsGenFile for the tables
// of locations locs and the keys of the name tables names, in the order
// of generatedTables and generatedNames: composite literals of
// constants only, which the compiler lays out in the binary, so that no
// code runs at init to build them.
func genLocationsFrom(locs [][]location, names []map[string]string) ([]byte, error) {
	tables, nts := generatedTables(), generatedNames()
	if len(locs) != len(tables) || len(names) != len(nts) {
		return nil, fmt.Errorf("%d tables and %d name tables, want %d and %d", len(locs), len(names), len(tables), len(nts))
	}
	var b bytes.Buffer
	b.WriteString(`// Code generated by go test -run '^TestLocationsGenerated$' -update-locations; DO NOT EDIT.

package pathrisk

// The tables of locations.go indexed by first component (index), and the
// name tables of names.go and locations.go as switches with the filters
// of their names (filterOf), as static data and code: nothing runs at
// start to build them. TestLocationsGenerated checks that they are what
// the tables give.
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
	for i, nt := range nts {
		if err := genNames(&b, nt, names[i]); err != nil {
			return nil, err
		}
	}
	return format.Source(b.Bytes())
}

// genNames writes the lookup of the name table whats as a switch, and its
// filter and sorted list where nt has them.
func genNames(b *bytes.Buffer, nt nameTable, whats map[string]string) error {
	names := slices.Sorted(maps.Keys(whats))
	for _, n := range names {
		if n == "" || !nt.set && whats[n] == "" || nt.set && whats[n] != "" {
			return fmt.Errorf("%s: %q: an empty name, a name without what it is, or one a set has not", nt.source, n)
		}
	}
	if nt.set {
		fmt.Fprintf(b, "\n// %s reports whether s is one of %s.\nfunc %s(s string) bool {\nswitch s {\ncase ", nt.lookup, nt.source, nt.lookup)
		for i, n := range names {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(strconv.Quote(n))
		}
		b.WriteString(":\nreturn true\n}\nreturn false\n}\n")
	} else {
		fmt.Fprintf(b, "\n// %s returns what s is when %s has it.\nfunc %s(s string) (string, bool) {\nswitch s {\n", nt.lookup, nt.source, nt.lookup)
		for _, n := range names {
			fmt.Fprintf(b, "case %s:\nreturn %s, true\n", strconv.Quote(n), strconv.Quote(whats[n]))
		}
		b.WriteString("}\nreturn \"\", false\n}\n")
	}
	if nt.filter != "" {
		fmt.Fprintf(b, "\n// %s passes the names of %s.\nvar %s = ", nt.filter, nt.source, nt.filter)
		genFilter(b, filterOf(slices.Values(names)))
		b.WriteString("\n")
	}
	if nt.sorted != "" {
		fmt.Fprintf(b, "\n// %s are the names of %s, sorted.\nvar %s = [...]string{\n", nt.sorted, nt.source, nt.sorted)
		for _, n := range names {
			b.WriteString(strconv.Quote(n) + ",\n")
		}
		b.WriteString("}\n")
	}
	return nil
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
