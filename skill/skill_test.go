package skill_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/skill"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestParseFolders parses every folder of testdata/parse and compares what
// was read (or the error) with testdata/parse.golden.
func TestParseFolders(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("testdata/parse")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, e := range entries {
		path := filepath.Join("testdata/parse", e.Name(), skill.FileName)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := skill.Parse(path, e.Name(), src)
		fmt.Fprintf(&out, "== %s\n", e.Name())
		if err != nil {
			var se *skill.Error
			if !errors.As(err, &se) || se.Path != path {
				t.Errorf("%s: error %v is not a *skill.Error naming the file", e.Name(), err)
			}
			fmt.Fprintf(&out, "error: %v\n", err)
			continue
		}
		fmt.Fprintf(&out, "name: %s\ndescription: %q\ndeclared: %q\nallowed: %q (narrows %v)\nnotes: %q\nbody: %q\n",
			s.Name, s.Description, s.Declared, s.AllowedTools, s.Narrows(), s.Notes, s.Body)
	}
	golden := "testdata/parse.golden"
	if *update {
		os.WriteFile(golden, []byte(out.String()), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if d := cmp.Diff(string(want), out.String()); d != "" {
		t.Errorf("parse results differ from %s (-want +got; go test -update rewrites it):\n%s", golden, d)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	const ok = "---\nname: x\ndescription: d\n---\nbody\n"
	tests := []struct {
		name, src string
		wantErr   string // substring; "" = parses
		wantLine  int
		wantTools []string
	}{
		{"minimal", ok, "", 0, nil},
		{"null allowed-tools narrows nothing", "---\nname: x\ndescription: d\nallowed-tools:\n---\n", "", 0, nil},
		{"empty string narrows to nothing", "---\nname: x\ndescription: d\nallowed-tools: \"\"\n---\n", "", 0, []string{}},
		{"duplicates dropped", "---\nname: x\ndescription: d\nallowed-tools: Edit, apply_patch, Write\n---\n", "", 0, []string{"apply_patch", "write_file"}},
		{"pattern keeps its tool", "---\nname: x\ndescription: d\nallowed-tools: [\"Read(./src/**)\", \"shell(go test:*)\"]\n---\n", "", 0, []string{"read_file", "shell"}},
		{"uppercase name", "---\nname: Review\ndescription: d\n---\n", "lowercase", 2, nil},
		{"double hyphen", "---\nname: a--b\ndescription: d\n---\n", "single hyphens", 2, nil},
		{"name too long", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", "at most 64", 2, nil},
		{"name not a string", "---\nname: [x]\ndescription: d\n---\n", "want a string", 2, nil},
		{"name missing", "---\ndescription: d\n---\n", "no name", 1, nil},
		{"name given twice", "---\nname: x\nname: x\ndescription: d\n---\n", "", 3, nil},
		{"description too long", "---\nname: x\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", "at most 1024", 3, nil},
		{"description with escape", "---\nname: x\ndescription: \"a\\x1b[2Jb\"\n---\n", "control character", 3, nil},
		{"description with bidi", "---\nname: x\ndescription: \"a\u202eb\"\n---\n", "control character", 3, nil},
		{"allowed-tools a number", "---\nname: x\ndescription: d\nallowed-tools: 3\n---\n", "want a list", 4, nil},
		{"allowed-tools entry a map", "---\nname: x\ndescription: d\nallowed-tools:\n  - {a: b}\n---\n", "each entry", 5, nil},
		{"alias", "---\nname: &n x\ndescription: *n\n---\n", "anchors and aliases", 2, nil},
		{"front matter a list", "---\n- a\n- b\n---\n", "mapping", 2, nil},
		{"empty front matter", "---\n---\nbody", "empty", 1, nil},
		{"no front matter", "# title\n", "must begin", 1, nil},
		{"bad yaml line", "---\nname: x\ndescription: d\nallowed-tools: [a\n---\n", "front matter", 0, nil},
		{"not utf-8", "---\nname: x\ndescription: \xff\n---\n", "UTF-8", 0, nil},
		{"too large", "---\nname: x\ndescription: d\n---\n" + strings.Repeat("x", skill.MaxFileBytes), "larger than", 0, nil},
		{"bom is skipped", "\uFEFF" + ok, "", 0, nil},
		{"disable-model-invocation not bool", "---\nname: x\ndescription: d\ndisable-model-invocation: maybe\n---\n", "true or false", 4, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := skill.Parse("/s/x/SKILL.md", "x", []byte(tt.src))
			if tt.name == "name given twice" {
				if err == nil || !strings.Contains(err.Error(), "given twice") {
					t.Fatalf("err = %v, want a duplicate key error", err)
				}
				return
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if d := cmp.Diff(tt.wantTools, s.AllowedTools); d != "" {
					t.Errorf("AllowedTools (-want +got):\n%s", d)
				}
				if (tt.wantTools == nil) == s.Narrows() {
					t.Errorf("Narrows = %v with tools %q", s.Narrows(), s.AllowedTools)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			var se *skill.Error
			if !errors.As(err, &se) {
				t.Fatalf("err %T is not a *skill.Error", err)
			}
			if tt.wantLine > 0 && se.Line != tt.wantLine {
				t.Errorf("line = %d, want %d (%v)", se.Line, tt.wantLine, err)
			}
		})
	}
}

func TestParseYAMLErrorLine(t *testing.T) {
	t.Parallel()
	// The YAML library's line is within the front matter; the file's
	// lines count the opening --- too.
	_, err := skill.Parse("p", "x", []byte("---\nname: x\n\tdescription: d\n---\n"))
	var se *skill.Error
	if !errors.As(err, &se) || se.Line != 3 || !strings.Contains(err.Error(), "p:3: front matter: found a tab") {
		t.Fatalf("err = %v; want it at line 3, the tab's", err)
	}
}

func TestMapTools(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        []string
		want      []string
		noteParts []string
	}{
		{[]string{"Read", "Grep", "Glob", "LS"}, []string{"read_file", "search_text", "list_files"}, nil},
		{[]string{"Write", "Edit", "MultiEdit"}, []string{"write_file", "apply_patch"}, nil},
		{[]string{"Bash(git diff:*)"}, []string{"shell"}, []string{`Bash(git diff:*): read as shell; the pattern "git diff:*" narrows nothing`}},
		{[]string{"WebFetch", "WebSearch"}, []string{"http_get", "WebSearch"}, []string{"WebSearch: no tool has this name"}},
		{[]string{"mcp__github__*", "use_skill", "*"}, []string{"mcp__github__*", "use_skill", "*"}, nil},
		{[]string{"read"}, []string{"read"}, []string{"read: no tool has this name"}},
		{[]string{}, []string{}, nil},
	}
	for _, tt := range tests {
		got, notes := skill.MapTools(tt.in)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("MapTools(%q) (-want +got):\n%s", tt.in, d)
		}
		if len(notes) != len(tt.noteParts) {
			t.Errorf("MapTools(%q) notes = %q, want %d", tt.in, notes, len(tt.noteParts))
			continue
		}
		for i, p := range tt.noteParts {
			if !strings.Contains(notes[i], p) {
				t.Errorf("note %q does not say %q", notes[i], p)
			}
		}
	}
}

func TestParseNotesALongBodyWithoutReadOutput(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("step\n", 3<<10) // 15 KiB
	for _, tt := range []struct {
		tools string
		note  bool
	}{
		{"allowed-tools: Read", true},
		{"allowed-tools: Read, read_output", false},
		{"", false}, // does not narrow: read_output is allowed like any read
	} {
		s, err := skill.Parse("p", "x", []byte("---\nname: x\ndescription: d\n"+tt.tools+"\n---\n"+body))
		if err != nil {
			t.Fatal(err)
		}
		got := len(s.Notes) == 1 && strings.Contains(s.Notes[0], "does not list read_output")
		if got != tt.note {
			t.Errorf("%q: notes %q, want the read_output note: %v", tt.tools, s.Notes, tt.note)
		}
	}
}
