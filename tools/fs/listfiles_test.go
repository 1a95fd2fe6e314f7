package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ignoreTree is a tree whose .gitignore files exercise gitignore(5).
var ignoreTree = map[string]string{
	".gitignore":        "# comment\n*.log\n!keep.log\nbuild/\n/only-root.txt\ndocs/*.tmp\n\\#hash\n",
	"a.go":              "package a\n",
	"b.log":             "ignored\n",
	"keep.log":          "negated back in\n",
	"#hash":             "escaped pattern\n",
	"a-b.go":            "sorts before a/ in byte order of names\n",
	"build/x.o":         "ignored directory\n",
	"only-root.txt":     "anchored, ignored\n",
	"src/only-root.txt": "anchored pattern does not reach here\n",
	"src/build":         "a file named build: build/ matches directories only\n",
	"src/b.log":         "re-included by src/.gitignore\n",
	"src/.gitignore":    "!b.log\ngen/\n",
	"src/gen/g.go":      "ignored by the nested .gitignore\n",
	"src/main.go":       "package main\n",
	"docs/a.tmp":        "ignored: pattern with a slash is anchored to its .gitignore\n",
	"docs/deep/b.tmp":   "not ignored: docs/*.tmp does not reach deeper\n",
	".git/HEAD":         "ref: refs/heads/main\n",
	"empty/":            "",
}

func TestListFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, ignoreTree)
	tests := []struct {
		name    string
		lister  ListFiles
		args    map[string]any
		want    string
		wantErr string
	}{
		{name: "gitignore honoured", args: map[string]any{},
			want: ".gitignore\na-b.go\na.go\ndocs/\ndocs/deep/\ndocs/deep/b.tmp\nempty/\nkeep.log\n" +
				"src/\nsrc/.gitignore\nsrc/b.log\nsrc/build\nsrc/main.go\nsrc/only-root.txt\n"},
		{name: "sub directory keeps the parent's rules", args: map[string]any{"path": "src"},
			want: "src/.gitignore\nsrc/b.log\nsrc/build\nsrc/main.go\nsrc/only-root.txt\n"},
		{name: "trailing slash on path", args: map[string]any{"path": "src/", "glob": "*.go"},
			want: "src/main.go\n"},
		{name: "glob by base name at any depth", args: map[string]any{"glob": "*.go"},
			want: "a-b.go\na.go\nsrc/main.go\n"},
		{name: "glob with a slash matches the relative path", args: map[string]any{"glob": "docs/**"},
			want: "docs/\ndocs/deep/\ndocs/deep/b.tmp\n"},
		{name: "brace glob", args: map[string]any{"glob": "*.{log,tmp}"},
			want: "docs/deep/b.tmp\nkeep.log\nsrc/b.log\n"},
		{name: "capped", lister: ListFiles{MaxEntries: 3}, args: map[string]any{},
			want: ".gitignore\na-b.go\na.go\n[listing stopped at 3 entries; narrow it with path or glob]\n"},
		{name: "glob matches nothing", args: map[string]any{"glob": "*.rs"},
			want: "[no entries match the glob \"*.rs\"]\n"},
		{name: "empty directory", args: map[string]any{"path": "empty"},
			want: "[the directory is empty, or everything in it is ignored by .gitignore]\n"},
		{name: "malformed glob", args: map[string]any{"glob": "[a"},
			wantErr: `glob "[a" is malformed (an unclosed [ or {, or a trailing \); globs use *, **, ?, [abc] and {a,b}`},
		{name: "glob leaving the directory", args: map[string]any{"glob": "../*"},
			wantErr: `glob "../*" must be relative to path, without ..: choose the directory with path and the names with glob (e.g. path "src", glob "**/*.go")`},
		{name: "absolute glob", args: map[string]any{"glob": "/etc/*"},
			wantErr: `glob "/etc/*" must be relative to path, without ..: choose the directory with path and the names with glob (e.g. path "src", glob "**/*.go")`},
		{name: "a file", args: map[string]any{"path": "a.go"},
			wantErr: "a.go is a file, not a directory; use read_file to read it"},
		{name: "missing", args: map[string]any{"path": "nope"},
			wantErr: "nope does not exist; check the name with list_files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := run(t, &tc.lister, dir, tc.args)
			if diff := cmp.Diff(tc.wantErr, errText(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListFilesWorkTreeAbove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{
		".git/info/exclude": "*.secret\n",
		".gitignore":        "*.tmp\nsub/deep/skip/\n",
		"sub/.gitignore":    "*.bak\n",
		"sub/deep/a.txt":    "",
		"sub/deep/a.tmp":    "",
		"sub/deep/a.bak":    "",
		"sub/deep/a.secret": "",
		"sub/deep/skip/x":   "",
	})
	got, _, err := run(t, &ListFiles{}, filepath.Join(dir, "sub"), map[string]any{"path": "deep"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("deep/a.txt\n", got); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func TestListFilesSymlinkNotFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	makeTree(t, outside, map[string]string{"secret.txt": ""})
	makeTree(t, dir, map[string]string{"a.txt": ""})
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	got, _, err := run(t, &ListFiles{}, dir, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("a.txt\nlink\n", got); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func TestListFilesUnreadableDirectory(t *testing.T) {
	t.Parallel()
	skipIfRoot(t)
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{"closed/x": "", "open/y": ""})
	if err := os.Chmod(filepath.Join(dir, "closed"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "closed"), 0o755) })
	got, _, err := run(t, &ListFiles{}, dir, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	want := "closed/\nopen/\nopen/y\n[could not read 1 directory (permission denied or removed): closed/]\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}
