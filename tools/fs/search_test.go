package fs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSearchText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, ignoreTree)
	makeTree(t, dir, map[string]string{
		"src/util.go":  "package main\n\nfunc Util() {}\r\n// TODO: more\n",
		"src/logo.png": "\x89PNG\x00package main\n",
		"long.txt":     strings.Repeat("x", 300) + "NEEDLE" + strings.Repeat("y", 300) + "\n",
	})
	tests := []struct {
		name     string
		searcher SearchText
		args     map[string]any
		want     string
		wantErr  string
	}{
		{name: "ripgrep format, gitignore honoured, binary skipped", args: map[string]any{"pattern": "^package"},
			want: "a.go:1:package a\nsrc/main.go:1:package main\nsrc/util.go:1:package main\n"},
		{name: "case-insensitive flag, crlf stripped", args: map[string]any{"pattern": `(?i)func util\(\) \{\}$`},
			want: "src/util.go:3:func Util() {}\n"},
		{name: "path and glob", args: map[string]any{"pattern": "TODO|package", "path": "src", "glob": "u*.go"},
			want: "src/util.go:1:package main\nsrc/util.go:4:// TODO: more\n"},
		{name: "one file named alone ignores .gitignore", args: map[string]any{"pattern": "ignored", "path": "b.log"},
			want: "b.log:1:ignored\n"},
		{name: "a binary file named alone", args: map[string]any{"pattern": "package", "path": "src/logo.png"},
			want: "[no matches: src/logo.png is a binary file, which search_text does not search]\n"},
		{name: "long line shown around the match", searcher: SearchText{MaxLineBytes: 40}, args: map[string]any{"pattern": "NEEDLE", "path": "long.txt"},
			want: "long.txt:1:…xxxxxxxxxxNEEDLEyyyyyyyyyyyyyyyyyyyyyyyy…\n"},
		{name: "capped", searcher: SearchText{MaxMatches: 2}, args: map[string]any{"pattern": "package"},
			want: "a.go:1:package a\nsrc/main.go:1:package main\n[stopped at 2 matching lines; narrow the search with path, glob or a more specific pattern]\n"},
		{name: "no matches", args: map[string]any{"pattern": "nothing-like-this", "path": "src"},
			want: "[no matches in 6 files searched]\n"},
		{name: "invalid regex", args: map[string]any{"pattern": "func (a"},
			wantErr: "pattern \"func (a\" is not a valid Go regular expression (RE2 syntax): missing closing ) in \"func (a\"; escape regex characters such as ( [ { . * + ? with \\ to match them literally"},
		{name: "perl-only syntax", args: map[string]any{"pattern": `(?<=a)b`},
			wantErr: "pattern \"(?<=a)b\" is not a valid Go regular expression (RE2 syntax): invalid named capture in \"(?<=a)b\"; escape regex characters such as ( [ { . * + ? with \\ to match them literally"},
		{name: "bad glob", args: map[string]any{"pattern": "x", "glob": "{a"},
			wantErr: `glob "{a" is malformed (an unclosed [ or {, or a trailing \); globs use *, **, ?, [abc] and {a,b}`},
		{name: "missing path", args: map[string]any{"pattern": "x", "path": "nope"},
			wantErr: "nope does not exist; check the name with list_files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := run(t, &tc.searcher, dir, tc.args)
			if diff := cmp.Diff(tc.wantErr, errText(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSearchTextSkipsSymlinks(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	makeTree(t, outside, map[string]string{"secret.txt": "password\n"})
	makeTree(t, dir, map[string]string{"a.txt": "password\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	got, _, err := run(t, &SearchText{}, dir, map[string]any{"pattern": "password"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("a.txt:1:password\n", got); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func TestSearchTextUnreadableFile(t *testing.T) {
	t.Parallel()
	skipIfRoot(t)
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{"a.txt": "x\n", "b.txt": "x\n"})
	if err := os.Chmod(filepath.Join(dir, "a.txt"), 0); err != nil {
		t.Fatal(err)
	}
	got, _, err := run(t, &SearchText{}, dir, map[string]any{"pattern": "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := "b.txt:1:x\n[could not read 1 file (permission denied or removed): a.txt]\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		line string
		n    int
		at   int
		max  int
		want string
	}{
		{"fits", "hello", 5, 0, 10, "hello"},
		{"cut at the end", "hello world", 11, 0, 5, "hello…"},
		{"window around a late match", "aaaaaaaaaaMATCHbbbbbbbbbb", 25, 10, 8, "…aaMATCHb…"},
		{"never splits a rune", "ééééé", 10, 4, 5, "…éé…"},
		{"line cut for scanning", "abc", 100, 0, 10, "abc…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, excerpt([]byte(tc.line), tc.n, tc.at, tc.max)); diff != "" {
				t.Errorf("excerpt (-want +got):\n%s", diff)
			}
		})
	}
}
