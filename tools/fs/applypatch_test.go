package fs

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// patchTree is the tree every apply_patch case starts from.
var patchTree = map[string]string{
	"a.txt":     "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
	"b.txt":     "alpha\nbeta\ngamma\n",
	"nonl.txt":  "x\ny",
	"gone.txt":  "bye\nnow\n",
	"empty.txt": "",
	"dir/":      "",
}

type patchCase struct {
	name  string
	patch string
	want  string
	// changed lists the files the patch changes: path -> "mode content",
	// or "" for a file that is gone. Nothing else may change.
	changed map[string]string
	// wantErr is a part of the error; the whole text is in the golden file.
	wantErr string
}

var patchCases = []patchCase{
	{name: "git form", patch: "diff --git a/a.txt b/a.txt\nindex 3b18e51..a8a940b 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n",
		want:    "patched a.txt: 1 hunk, +1 -1 lines\n",
		changed: map[string]string{"a.txt": "-rw-r--r-- one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\n"}},
	{name: "two files, two hunks, plain names", patch: "--- a.txt\n+++ a.txt\n@@ -1,2 +1,3 @@\n one\n+one and a half\n two\n@@ -9,2 +10,1 @@\n nine\n-ten\n--- b.txt\n+++ b.txt\n@@ -3 +3 @@\n-gamma\n+delta\n",
		want: "patched a.txt: 2 hunks, +1 -1 lines\npatched b.txt: 1 hunk, +1 -1 lines\n",
		changed: map[string]string{"a.txt": "-rw-r--r-- one\none and a half\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n",
			"b.txt": "-rw-r--r-- alpha\nbeta\ndelta\n"}},
	{name: "diff -u with timestamps", patch: "--- a.txt\t2024-01-01 10:00:00.000000000 +0000\n+++ a.txt\t2024-01-02 10:00:00.000000000 +0000\n@@ -1 +1 @@\n-one\n+ONE\n",
		want:    "patched a.txt: 1 hunk, +1 -1 lines\n",
		changed: map[string]string{"a.txt": "-rw-r--r-- ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"}},
	{name: "creates a file and its directories", patch: "--- /dev/null\n+++ b/new/deep/n.txt\n@@ -0,0 +1,2 @@\n+hi\n+there\n",
		want:    "created new/deep/n.txt: +2 lines\n",
		changed: map[string]string{"new/": "drwxr-xr-x", "new/deep/": "drwxr-xr-x", "new/deep/n.txt": "-rw-r--r-- hi\nthere\n"}},
	{name: "deletes a file", patch: "--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-bye\n-now\n",
		want: "deleted gone.txt: -2 lines\n", changed: map[string]string{"gone.txt": ""}},
	{name: "git: new empty executable file", patch: "diff --git a/e.sh b/e.sh\nnew file mode 100755\nindex 0000000..e69de29\n",
		want: "created e.sh: +0 lines\n", changed: map[string]string{"e.sh": "-rwxr-xr-x "}},
	{name: "git: new file with content and mode", patch: "diff --git a/run.sh b/run.sh\nnew file mode 100755\nindex 0000000..1111111\n--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1 @@\n+#!/bin/sh\n",
		want: "created run.sh: +1 lines\n", changed: map[string]string{"run.sh": "-rwxr-xr-x #!/bin/sh\n"}},
	{name: "git: deletes an empty file", patch: "diff --git a/empty.txt b/empty.txt\ndeleted file mode 100644\nindex e69de29..0000000\n",
		want: "deleted empty.txt: -0 lines\n", changed: map[string]string{"empty.txt": ""}},
	{name: "no newline at the end, before and after", patch: "--- a/nonl.txt\n+++ b/nonl.txt\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n",
		want: "patched nonl.txt: 1 hunk, +1 -1 lines\n", changed: map[string]string{"nonl.txt": "-rw-r--r-- x\nz\n"}},
	{name: "removes the last newline", patch: "--- a/b.txt\n+++ b/b.txt\n@@ -3 +3 @@\n-gamma\n+gamma\n\\ No newline at end of file\n",
		want: "patched b.txt: 1 hunk, +1 -1 lines\n", changed: map[string]string{"b.txt": "-rw-r--r-- alpha\nbeta\ngamma"}},
	{name: "hunk away from its header's line", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -6,3 +6,3 @@\n two\n-three\n+3\n four\n",
		want:    "patched a.txt: 1 hunk, +1 -1 lines (hunk 1 matched at line 2, 4 lines before where its header says)\n",
		changed: map[string]string{"a.txt": "-rw-r--r-- one\ntwo\n3\nfour\nfive\nsix\nseven\neight\nnine\nten\n"}},
	{name: "empty context line whose space was lost", patch: "--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n",
		want: "patched b.txt: 1 hunk, +1 -1 lines\n", changed: map[string]string{"b.txt": "-rw-r--r-- alpha\nBETA\ngamma\n"}},
	{name: "mail around the diff", patch: "From: someone\nSubject: [PATCH] fix\n\n---\n b.txt | 2 +-\n\ndiff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n-- \n2.43.0\n",
		want: "patched b.txt: 1 hunk, +1 -1 lines\n", changed: map[string]string{"b.txt": "-rw-r--r-- ALPHA\nbeta\ngamma\n"}},
	{name: "insertion without context", patch: "--- a/b.txt\n+++ b/b.txt\n@@ -3,0 +4 @@\n+omega\n",
		want: "patched b.txt: 1 hunk, +1 -0 lines\n", changed: map[string]string{"b.txt": "-rw-r--r-- alpha\nbeta\ngamma\nomega\n"}},

	// Each of these fails; no file may change.
	{name: "second file does not apply", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n alpha\n-BETA\n+beta2\n gamma\n",
		wantErr: `b.txt, hunk 1 (@@ -1,3 +1,3 @@) does not apply: at line 2 the file has "beta" where the hunk expects "BETA"`},
	{name: "whitespace differs", patch: "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n alpha \n-beta\n+b\n",
		wantErr: `at line 1 the file has "alpha" where the hunk expects "alpha "`},
	{name: "context past the end", patch: "--- a/b.txt\n+++ b/b.txt\n@@ -3,2 +3,2 @@\n gamma\n-delta\n+x\n",
		wantErr: `the file ends at line 3, where the hunk still expects "delta"`},
	{name: "missing no-newline marker", patch: "--- a/nonl.txt\n+++ b/nonl.txt\n@@ -2 +2 @@\n-y\n+z\n",
		wantErr: "line 2 (\"y\") is the file's last and has no newline at its end; put `\\ No newline at end of file` after it in the hunk"},
	{name: "creates a file that exists", patch: "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+x\n",
		wantErr: "b.txt already exists, but the patch creates it (--- /dev/null)"},
	{name: "deletes only part of a file", patch: "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n",
		wantErr: "the patch deletes gone.txt (+++ /dev/null) but does not remove all of it (1 line would be left)"},
	{name: "patches a missing file", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-x\n+y\n",
		wantErr: "nope.txt does not exist; a patch that creates a file has `--- /dev/null` as its old name"},
	{name: "patches a directory", patch: "--- a/dir\n+++ b/dir\n@@ -1 +1 @@\n-x\n+y\n",
		wantErr: "dir is a directory; give the path of a file"},
	{name: "git rename", patch: "diff --git a/a.txt b/c.txt\nsimilarity index 100%\nrename from a.txt\nrename to c.txt\n",
		wantErr: "is a rename (delete the old file with `+++ /dev/null` and create the new one with `--- /dev/null`), which apply_patch does not do"},
	{name: "mode change", patch: "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n",
		wantErr: "is a mode change (use shell chmod)"},
	{name: "binary", patch: "diff --git a/x.png b/x.png\nindex 1..2 100644\nGIT binary patch\nliteral 5\n",
		wantErr: "is a binary change (use shell)"},
	{name: "old and new names differ", patch: "--- a.txt.orig\n+++ a.txt\n@@ -1 +1 @@\n-one\n+1\n",
		wantErr: "names a.txt.orig on its --- line but a.txt on its +++ line"},
	{name: "both names /dev/null", patch: "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+x\n",
		wantErr: "has /dev/null as both its old and new name"},
	{name: "codex form", patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n",
		wantErr: "this is a Codex-style patch (*** Begin Patch)"},
	{name: "not a diff", patch: "please change line 3\n", wantErr: "the patch has no file headers"},
	{name: "hunk before a header", patch: "@@ -1 +1 @@\n-one\n+1\n", wantErr: "line 1 of the patch: a hunk (@@) comes before any file header"},
	{name: "malformed hunk header", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -x +y @@\n-one\n+1\n", wantErr: "\"@@ -x +y @@\" is not a hunk header"},
	{name: "counts too big", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-one\n+1\n two\n",
		wantErr: "the patch ends while the hunk still needs 1 old and 1 new lines"},
	{name: "counts too small", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n-two\n+2\n",
		wantErr: "line 6 of the patch (\"-two\") looks like part of the hunk, but the header's counts end the hunk before it"},
	{name: "stray line inside a hunk", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n*two\n",
		wantErr: "line 6 of the patch (\"*two\") should start with ' ', '-' or '+'"},
	{name: "new file with context", patch: "--- /dev/null\n+++ b/n.txt\n@@ -1 +1,2 @@\n+x\n y\n",
		wantErr: "a new file (--- /dev/null) can only have added lines (+)"},
	{name: "same file twice", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n--- a/./a.txt\n+++ b/./a.txt\n@@ -2 +2 @@\n-two\n+2\n",
		wantErr: "a.txt and ./a.txt are the same file"},
	{name: "new file under a file", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n--- /dev/null\n+++ b/b.txt/n.txt\n@@ -0,0 +1 @@\n+x\n",
		wantErr: "cannot create b.txt/n.txt: a directory in its path is a file"},
	{name: "header-like lines inside a hunk", patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n--- x\n+++ y\n",
		wantErr: "the permission check read this patch as changing a.txt, x, y, but its file parts change a.txt"},
}

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	for _, tc := range patchCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, dir, patchTree)
			before := tree(t, dir)
			got, _, err := run(t, &ApplyPatch{}, dir, map[string]any{"patch": tc.patch})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %q, want one containing %q", errText(err), tc.wantErr)
				}
				if got != "" {
					t.Errorf("stdout %q on failure", got)
				}
			} else if err != nil {
				t.Fatalf("error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			want := before
			for name, v := range tc.changed {
				if v == "" {
					delete(want, name)
				} else {
					want[name] = v
				}
			}
			if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyPatchErrorsGolden keeps the whole text of every error in one
// file, to read them as the model will.
func TestApplyPatchErrorsGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, patchTree)
	var b strings.Builder
	for _, tc := range patchCases {
		if tc.wantErr == "" {
			continue
		}
		_, _, err := run(t, &ApplyPatch{}, dir, map[string]any{"patch": tc.patch})
		fmt.Fprintf(&b, "# %s\n%s\n\n", tc.name, errText(err))
	}
	golden(t, filepath.Join("testdata", "apply_patch_errors.golden"), b.String())
}

// TestPatchPathsAgree shows that the files apply_patch writes are the
// files permission.PatchPaths reports, for every case it accepts.
func TestPatchPathsAgree(t *testing.T) {
	t.Parallel()
	for _, tc := range patchCases {
		files, err := parsePatch(tc.patch)
		if err != nil {
			continue
		}
		if err := sameFiles(tc.patch, files); err != nil && tc.name != "header-like lines inside a hunk" {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestApplyPatchRestoresOnCommitFailure(t *testing.T) {
	t.Parallel()
	for fail := range 3 {
		t.Run(fmt.Sprint("failing change ", fail), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, dir, patchTree)
			chmod(t, filepath.Join(dir, "a.txt"), 0o750)
			before := tree(t, dir)
			patch := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n" +
				"--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-bye\n-now\n" +
				"--- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1 @@\n+x\n"
			ap := &ApplyPatch{failCommit: func(i int) error {
				if i == fail {
					return errors.New("disk on fire")
				}
				return nil
			}}
			_, _, err := run(t, ap, dir, map[string]any{"patch": patch})
			if err == nil || !strings.Contains(err.Error(), "(disk on fire); the files changed before it were restored, so no file was changed") {
				t.Fatalf("error %v", err)
			}
			if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyPatchPermissionDenied(t *testing.T) {
	t.Parallel()
	skipIfRoot(t)
	dir := t.TempDir()
	makeTree(t, dir, patchTree)
	makeTree(t, dir, map[string]string{"ro/c.txt": "c\n"})
	chmod(t, filepath.Join(dir, "ro"), 0o555)
	t.Cleanup(func() { chmod(t, filepath.Join(dir, "ro"), 0o755) })
	before := tree(t, dir)
	patch := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n--- a/ro/c.txt\n+++ b/ro/c.txt\n@@ -1 +1 @@\n-c\n+C\n"
	_, _, err := run(t, &ApplyPatch{}, dir, map[string]any{"patch": patch})
	if diff := cmp.Diff("cannot write ro/c.txt: permission denied; no file was changed", errText(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

// golden compares got with the file name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}
