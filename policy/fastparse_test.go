package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/custom-agent/custom-agent/permission"
)

// strictRead is what the strict reader makes of src.
func strictRead(src []byte) (*parsed, error) {
	p := &parsed{path: "f", src: src}
	return p, p.read()
}

// sameAsStrict fails when parseFast accepts src and decodes it otherwise
// than the strict reader, or accepts what the strict reader refuses.
func sameAsStrict(t interface {
	Helper()
	Fatalf(string, ...any)
}, src []byte) (fast bool) {
	t.Helper()
	fp, ok := parseFast("f", src)
	sp, err := strictRead(src)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("parseFast accepts what the strict reader refuses (%v):\n%s", err, src)
	}
	if diff := gocmp.Diff(sp.ents, fp.ents); diff != "" {
		t.Fatalf("parseFast decodes other rules (-strict +fast):\n%s\nfrom:\n%s", diff, src)
	}
	if diff := gocmp.Diff(sp.offs, fp.offs); diff != "" {
		t.Fatalf("parseFast places rules elsewhere (-strict +fast):\n%s\nfrom:\n%s", diff, src)
	}
	return true
}

// TestFastParseSameRules: the one-pass reader gives the strict reader's
// rules and offsets for every file it accepts, accepts the ordinary ones,
// and refuses whatever the strict reader would read differently or report.
func TestFastParseSameRules(t *testing.T) {
	t.Parallel()
	rules := []Rule{
		{ID: "npm-test", Tool: "shell", Command: "npm test", Decision: permission.Allow, Comment: "tests \"quoted\" \\ and\nnewline"},
		{ID: "docs", Tool: "read_file", Path: "docs/**", Decision: permission.Allow},
		{ID: "gh", Tool: "mcp__github__create_issue", Args: map[string]string{"repo": "org/*", "title": "*"}, Decision: permission.Ask},
		{ID: "empty-args", Tool: "x", Args: map[string]string{}, Decision: permission.Deny},
		{ID: "ex", Tool: "read_file", Path: "src/**", Decision: permission.Allow,
			Examples: &Examples{Match: []map[string]any{{"path": "src/a.go", "limit": 3.5, "n": nil, "l": []any{true, "x"}}}, NotMatch: []map[string]any{{}}}},
	}
	indented, _ := json.MarshalIndent(File{Version: Version, Rules: rules}, "", "  ")
	compact, _ := json.Marshal(File{Version: Version, Rules: rules})
	accepted := map[string][]byte{
		"indented":    indented,
		"compact":     compact,
		"builtin":     permission.BuiltinJSON(),
		"rules first": []byte(`{"rules": [{"id": "a", "tool": "shell", "decision": "allow"}], "version": 1}`),
		"no rules":    []byte(`{"version": 1}`),
		"empty rules": []byte(" \n{ \"version\" : 1 , \"rules\" : [ ] }\n"),
		// Repeated keys inside a rule: the last wins in both readers.
		"repeated field":   []byte(`{"version": 1, "rules": [{"id": "a", "tool": "shell", "tool": "read_file", "decision": "allow"}]}`),
		"repeated arg":     []byte(`{"version": 1, "rules": [{"id": "a", "tool": "x", "args": {"k": "1", "k": "2"}, "decision": "allow"}]}`),
		"repeated example": []byte(`{"version": 1, "rules": [{"id": "a", "tool": "x", "examples": {"match": [{"p": 1, "p": 2}]}, "decision": "allow"}]}`),
		"nulls":            []byte(`{"version": 1, "rules": [{"id": "a", "tool": "x", "examples": null, "args": null, "decision": "allow"}]}`),
		"nested example":   []byte(`{"version": 1, "rules": [{"id": "a", "tool": "x", "examples": {"match": [{"p": [1, {"q": null}], "r": true}]}, "decision": "allow"}]}`),
		"null examples":    []byte(`{"version": 1, "rules": [{"id": "a", "tool": "x", "examples": {"match": null, "notMatch": [null, {}, {"o": {"q": [1, "s"]}, "e": {}}]}, "decision": "allow"}]}`),
		// Structure inside strings, after an escaped quote and an
		// escaped backslash: the offsets' scan must not take it for
		// the end of a rule.
		"escaped quote": []byte(`{"version": 1, "rules": [{"id": "a", "tool": "x", "command": "q\"}, {", "decision": "allow"}, {"id": "b", "tool": "x", "path": "\\\"]}", "decision": "deny"}]}`),
	}
	for name, src := range accepted {
		if !sameAsStrict(t, src) {
			t.Errorf("%s: parseFast refuses an ordinary file:\n%s", name, src)
		}
	}
	refused := map[string]string{
		"key in capitals":      `{"version": 1, "rules": [{"ID": "a", "tool": "shell", "decision": "allow"}]}`,
		"top key in capitals":  `{"Version": 1, "rules": []}`,
		"escaped key":          `{"version": 1, "rules": [{"i\u0064": "a", "tool": "shell", "decision": "allow"}]}`,
		"escaped value":        `{"version": 1, "rules": [{"id": "a\u00e9", "tool": "shell", "decision": "allow"}]}`,
		"lone surrogate":       `{"version": 1, "rules": [{"id": "\ud800", "tool": "shell", "decision": "allow"}]}`,
		"invalid UTF-8":        "{\"version\": 1, \"rules\": [{\"id\": \"a\xff\", \"tool\": \"shell\", \"decision\": \"allow\"}]}",
		"rules twice":          `{"version": 1, "rules": [], "rules": [{"id": "a", "tool": "shell", "decision": "allow"}]}`,
		"version twice":        `{"version": 1, "version": 1}`,
		"version as float":     `{"version": 1.0, "rules": []}`,
		"version 2":            `{"version": 2, "rules": []}`,
		"no version":           `{"rules": []}`,
		"unknown top key":      `{"version": 1, "rules": [], "extra": 1}`,
		"unknown rule key":     `{"version": 1, "rules": [{"id": "a", "tool": "shell", "decision": "allow", "sudo": true}]}`,
		"rules null":           `{"version": 1, "rules": null}`,
		"rule not an object":   `{"version": 1, "rules": [3]}`,
		"args not strings":     `{"version": 1, "rules": [{"id": "a", "tool": "x", "args": {"n": 3}, "decision": "allow"}]}`,
		"trailing data":        `{"version": 1, "rules": []} {}`,
		"trailing comma":       `{"version": 1, "rules": [],}`,
		"syntax error in rule": `{"version": 1, "rules": [{"id": "a" "tool": "x"}]}`,
		"truncated":            `{"version": 1, "rules": [{"id": "a"`,
		"number too large":     `{"version": 1, "rules": [{"id": "a", "tool": "x", "decision": "allow", "examples": {"match": [{"n": 1e400}]}}]}`,
		"not an object":        `[]`,
	}
	for name, src := range refused {
		if sameAsStrict(t, []byte(src)) {
			t.Errorf("%s: parseFast accepts a file only the strict reader should read:\n%s", name, src)
		}
	}
}

// TestFastRuleInStep: fastRule has Rule's fields, names and JSON tags in
// order, and fastExamples Examples's (only map types of their own differ,
// and the examples' type), so that a field added to Rule or Examples is
// not silently dropped by the one-pass reader.
func TestFastRuleInStep(t *testing.T) {
	t.Parallel()
	inStep(t, reflect.TypeFor[Rule](), reflect.TypeFor[fastRule]())
	inStep(t, reflect.TypeFor[Examples](), reflect.TypeFor[fastExamples]())
}

func inStep(t *testing.T, rt, ft reflect.Type) {
	t.Helper()
	if rt.NumField() != ft.NumField() {
		t.Fatalf("%s has %d fields, %s %d", rt, rt.NumField(), ft, ft.NumField())
	}
	for i := range rt.NumField() {
		r, f := rt.Field(i), ft.Field(i)
		if r.Name != f.Name || r.Tag != f.Tag || !sameShape(r.Type, f.Type) {
			t.Errorf("field %d: %s has %s %s `%s`, %s %s %s `%s`", i, rt, r.Name, r.Type, r.Tag, ft, f.Name, f.Type, f.Tag)
		}
	}
}

// sameShape reports whether the fast reader's type f holds what r does:
// the same type, one convertible to it (fastArgs, fastCall), a pointer to
// or list of such, or fastExamples for Examples (checked on its own).
func sameShape(r, f reflect.Type) bool {
	switch {
	case r == f || f.ConvertibleTo(r):
		return true
	case r == reflect.TypeFor[Examples]():
		return f == reflect.TypeFor[fastExamples]()
	case r.Kind() == f.Kind() && (r.Kind() == reflect.Pointer || r.Kind() == reflect.Slice):
		return sameShape(r.Elem(), f.Elem())
	}
	return false
}

// TestPropFastParseSameRules: random policy files of random rules, written
// compactly or indented, read alike by both readers.
func TestPropFastParseSameRules(t *testing.T) {
	t.Parallel()
	str := rapid.OneOf(rapid.SampledFrom([]string{"", "a", "npm test", "docs/**", "~/.ssh/*", `q"uote`, `back\slash`, "tab\there", "é", "<&>", "/",
		// What the offsets' scan must see as string content, not structure.
		`\`, `\"`, `"\`, `a\\"b`, `{}[],:`, `"}]`, `"rules": [`, `"version": 2`}), rapid.String())
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 5).Draw(t, "n")
		var b strings.Builder
		b.WriteString(`{"version": 1, "rules": [`)
		for i := range n {
			if i > 0 {
				b.WriteString(rapid.SampledFrom([]string{",", " , ", ",\n  "}).Draw(t, "sep"))
			}
			r := Rule{ID: fmt.Sprintf("r%d", i), Tool: str.Draw(t, "tool"), Command: str.Draw(t, "command"), Path: str.Draw(t, "path"),
				Decision: rapid.SampledFrom([]permission.Verdict{permission.Allow, permission.Ask, permission.Deny, "maybe"}).Draw(t, "decision")}
			if rapid.Bool().Draw(t, "hasargs") {
				r.Args = map[string]string{str.Draw(t, "argname"): str.Draw(t, "argval")}
			}
			if rapid.Bool().Draw(t, "hasex") {
				r.Examples = &Examples{Match: []map[string]any{{"path": str.Draw(t, "expath"), "n": rapid.Float64().Draw(t, "exnum")}}}
				if rapid.Bool().Draw(t, "hasnotmatch") {
					r.Examples.NotMatch = []map[string]any{{}, {"o": map[string]any{str.Draw(t, "exkey"): []any{str.Draw(t, "exval"), true, nil}}}}
				}
			}
			var enc []byte
			if rapid.Bool().Draw(t, "indent") {
				enc, _ = json.MarshalIndent(r, "", "\t")
			} else {
				enc, _ = json.Marshal(r)
			}
			b.Write(enc)
		}
		b.WriteString("]}")
		sameAsStrict(t, []byte(b.String()))
	})
}
