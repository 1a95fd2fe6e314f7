package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/support/strictjson"
	"github.com/custom-agent/custom-agent/testsupport/puritytest"
)

func TestPure(t *testing.T) { puritytest.Check(t, ".") }

// plain turns a tree into what encoding/json decodes (with UseNumber).
func plain(v *strictjson.Value) any {
	switch v.Kind {
	case strictjson.Null:
		return nil
	case strictjson.Bool:
		return v.Bool
	case strictjson.Number:
		return json.Number(v.Str)
	case strictjson.String:
		return v.Str
	case strictjson.List:
		out := make([]any, len(v.Items))
		for i := range v.Items {
			out[i] = plain(&v.Items[i].Value)
		}
		return out
	}
	out := make(map[string]any, len(v.Items))
	for i := range v.Items {
		out[v.Items[i].Key] = plain(&v.Items[i].Value)
	}
	return out
}

func stdlib(src []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimLeft(src[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// TestSameValuesAsEncodingJSON: every document read gives the values
// encoding/json gives.
func TestSameValuesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e-3`, `-12E+4`, `""`,
		` { "a" : [ 1 , "x" , null , true , { } , [ ] ] } `,
		`{"s": "tab\there \"q\" \\ \/ \b\f\n\r \u00e9 \u20AC \ud83d\ude00 é 日本"}`,
		`{"lone": "\ud800", "lone2": "\udc00x", "pair then lone": "\ud83d\ude00\ud800"}`,
		`{"bad pair": "\ud800\u0041"}`,
		`[[[[[[{"deep": [1, 2, {"x": {"y": [3]}}]}]]]]]]`,
		"\n\t{\"k\": 1}\r\n",
		// Containers at one depth one after the other, each holding
		// deeper ones, while the outer ones stay open.
		`{"rules": [{"id": "a", "x": {"y": [1]}}, {"id": "b", "x": {"y": [2, {"z": 3}]}}, {"id": "c", "w": [[4], {"q": [[5]]}]}], "v": [[1], [2], {"k": [3]}], "last": {"id": "d"}}`,
	}
	for _, d := range docs {
		v, err := strictjson.Parse([]byte(d))
		if err != nil {
			t.Errorf("Parse(%s): %v", d, err)
			continue
		}
		want, err := stdlib([]byte(d))
		if err != nil {
			t.Fatalf("encoding/json refuses %s: %v", d, err)
		}
		if diff := gocmp.Diff(want, plain(v)); diff != "" {
			t.Errorf("Parse(%s) (-encoding/json +strictjson):\n%s", d, diff)
		}
	}
}

// TestOffsets: every value and key carries where it starts.
func TestOffsets(t *testing.T) {
	t.Parallel()
	src := []byte("{\n  \"a\": [1, \"é\", {\"b\": null}],\n  \"c\": true\n}")
	v, err := strictjson.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := v.Get("a")
	c, _ := v.Get("c")
	b, _ := a.Value.Items[2].Value.Get("b")
	got := []int{v.Off, a.KeyOff, a.Value.Off, a.Value.Items[0].Value.Off, a.Value.Items[1].Value.Off, a.Value.Items[2].Value.Off, b.KeyOff, b.Value.Off, c.KeyOff, c.Value.Off}
	want := []int{0, 4, 9, 10, 13, 19, 20, 25, 35, 40}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
	if l, c := strictjson.Position(src, b.Value.Off); l != 2 || c != 23 {
		t.Errorf("Position = %d:%d, want 2:23 (columns count characters)", l, c)
	}
	if _, ok := v.Get("z"); ok {
		t.Error("Get finds a key that is not there")
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		off  int
		want string
	}{
		{``, 0, "unexpected end of file"},
		{`   `, 3, "unexpected end of file"},
		{`{"a": 1`, 7, "unexpected end of file"},
		{`{"a": "x`, 8, "unexpected end of file"},
		{`{"a": tru`, 9, "unexpected end of file"},
		{`{"a": 1,}`, 8, `invalid character '}' looking for beginning of object key string`},
		{`[1,]`, 3, `invalid character ']' looking for beginning of value`},
		{`{"a" 1}`, 5, `invalid character '1' after object key`},
		{`{"a": 1 "b": 2}`, 8, `invalid character '"' after object key:value pair`},
		{`[1 2]`, 3, `invalid character '2' after array element`},
		{`{"a": 01}`, 7, `invalid character '1' after object key:value pair`},
		{`{"a": -}`, 7, `invalid character '}' in numeric literal`},
		{`{"a": 1.}`, 8, `invalid character '}' after decimal point in numeric literal`},
		{`{"a": 1e}`, 8, `invalid character '}' in exponent of numeric literal`},
		{`{"a": trve}`, 8, `invalid character 'v' in literal true (expecting 'u')`},
		{"{\"a\": \"x\ty\"}", 8, `invalid character '\t' in string literal`},
		{`{"a": "\x"}`, 8, `invalid character 'x' in string escape code`},
		{`{"a": "\u12g4"}`, 11, `invalid character 'g' in \u hexadecimal character escape`},
		{"{\"a\": \"\xff\"}", 7, `invalid UTF-8 in string`},
		{"\ufeff{}", 0, `invalid character '\ufeff' looking for beginning of value`},
		{`{"a": 1} {}`, 9, "trailing data"},
		{`{"a": 1, "a": 2}`, 9, `the key "a" appears twice`},
		{`{"o": {"a": 1, "b": [{"a": 1, "a": 2}]}}`, 30, `the key "a" appears twice`},
		{`{"a": 1 /* no comments */}`, 8, `invalid character '/' after object key:value pair`},
		{`'a'`, 0, `invalid character '\'' looking for beginning of value`},
	}
	for _, tc := range tests {
		_, err := strictjson.Parse([]byte(tc.src))
		var se *strictjson.Error
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a *strictjson.Error", tc.src, err)
			continue
		}
		if se.Offset != tc.off || !strings.Contains(se.Err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %q at %d, want %q at %d", tc.src, se.Err, se.Offset, tc.want, tc.off)
		}
	}
	if _, err := strictjson.Parse([]byte(`{"a": 1} x`)); !errors.Is(err, strictjson.ErrTrailingData) {
		t.Errorf("trailing data: %v, want ErrTrailingData", err)
	}
	if _, err := strictjson.Parse([]byte(`[`)); !errors.Is(err, strictjson.ErrUnexpectedEnd) {
		t.Errorf("unexpected end: %v, want ErrUnexpectedEnd", err)
	}
}

// TestManyKeys: repeats are found among many keys too (past the few
// compared each with each), and in every one of many objects.
func TestManyKeys(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("{")
	for i := range 100 {
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `": 1, `)
	}
	ok := b.String() + `"end": 1}`
	if _, err := strictjson.Parse([]byte(ok)); err != nil {
		t.Fatalf("100 distinct keys: %v", err)
	}
	dup := b.String() + `"kzz": 1, "kxc": 2}`
	_, err := strictjson.Parse([]byte(dup))
	var se *strictjson.Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `the key "kxc" appears twice`) || se.Offset != len(b.String())+len(`"kzz": 1, `) {
		t.Errorf("a repeat among 100 keys: %v", err)
	}
}

func TestDepth(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", strictjson.MaxDepth) + strings.Repeat("]", strictjson.MaxDepth)
	if _, err := strictjson.Parse([]byte(deep)); err != nil {
		t.Errorf("MaxDepth lists: %v", err)
	}
	tooDeep := strings.Repeat(`{"a":`, strictjson.MaxDepth+1)
	_, err := strictjson.Parse([]byte(tooDeep))
	var se *strictjson.Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("too deep: %v", err)
	}
}

// FuzzParse: what strictjson reads, encoding/json reads to the same values;
// what encoding/json refuses, strictjson refuses. strictjson may refuse
// more, but only repeated keys and invalid UTF-8.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a": [1, "x\u00e9", null, true, {"b": -1.5e3}]}`, `{"a": 1, "a": 2}`, "\"\xff\"", `[1,]`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		v, err := strictjson.Parse(src)
		want, werr := stdlib(src)
		if err == nil {
			if werr != nil {
				t.Fatalf("strictjson reads what encoding/json refuses (%v): %q", werr, src)
			}
			if diff := gocmp.Diff(want, plain(v)); diff != "" {
				t.Fatalf("values differ for %q (-encoding/json +strictjson):\n%s", src, diff)
			}
			return
		}
		var se *strictjson.Error
		if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(src) {
			t.Fatalf("error %v is not a *strictjson.Error within the input", err)
		}
		if werr == nil && !strings.Contains(err.Error(), "appears twice") && !strings.Contains(err.Error(), "invalid UTF-8") {
			t.Fatalf("strictjson refuses what encoding/json reads: %v: %q", err, src)
		}
	})
}
