package permission_test

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

func TestPatchPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, patch string
		want        []permission.PatchPath
	}{
		{"git form", "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n",
			[]permission.PatchPath{{Path: "x.go", Span: risk.Span{Start: 13, End: 17}}}},
		{"plain form keeps names", "--- old/x.go\t2024-01-01\n+++ new/x.go\t2024-01-02\n",
			[]permission.PatchPath{{Path: "old/x.go", Span: risk.Span{Start: 4, End: 12}}, {Path: "new/x.go", Span: risk.Span{Start: 28, End: 36}}}},
		{"new file", "--- /dev/null\n+++ b/.git/hooks/pre-commit\n",
			[]permission.PatchPath{{Path: ".git/hooks/pre-commit", Span: risk.Span{Start: 20, End: 41}}}},
		{"deleted file", "--- a/gone.txt\n+++ /dev/null\n",
			[]permission.PatchPath{{Path: "gone.txt", Span: risk.Span{Start: 6, End: 14}, Delete: true}}},
		{"quoted name", "--- \"a/sp ace.txt\"\n+++ \"b/sp ace.txt\"\n",
			[]permission.PatchPath{{Path: "sp ace.txt", Span: risk.Span{Start: 6, End: 16}}}},
		{"rename", "diff --git a/a b/b\nrename from a\nrename to ../../.ssh/authorized_keys\n",
			[]permission.PatchPath{{Path: "a", Span: risk.Span{Start: 13, End: 14}, Delete: true, Renamed: true}, {Path: "b", Span: risk.Span{Start: 17, End: 18}}, {Path: "../../.ssh/authorized_keys", Span: risk.Span{Start: 43, End: 69}}}},
		{"codex form", "*** Begin Patch\n*** Add File: ~/.bashrc\n+x\n*** End Patch\n",
			[]permission.PatchPath{{Path: "~/.bashrc", Span: risk.Span{Start: 30, End: 39}}}},
		{"crlf", "--- a/x\r\n+++ b/x\r\n", []permission.PatchPath{{Path: "x", Span: risk.Span{Start: 6, End: 7}}}},
		{"binary git patch", "diff --git a/h b/.git/hooks/post-merge\nnew file mode 100755\nGIT binary patch\n",
			[]permission.PatchPath{{Path: "h", Span: risk.Span{Start: 13, End: 14}}, {Path: ".git/hooks/post-merge", Span: risk.Span{Start: 17, End: 38}}}},
		{"git names with spaces", "diff --git a/x b/y b/x b/y\n",
			[]permission.PatchPath{{Path: "x b/y", Span: risk.Span{Start: 13, End: 18}}}},
		{"nothing", "hello\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := permission.PatchPaths(tc.patch)
			if diff := gocmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PatchPaths (-want +got):\n%s", diff)
			}
			for _, p := range got {
				if p.Span.End <= len(tc.patch) && tc.patch[p.Span.Start:p.Span.End] != p.Path && tc.name != "quoted name" {
					t.Errorf("span %v of %q holds %q", p.Span, p.Path, tc.patch[p.Span.Start:p.Span.End])
				}
			}
		})
	}
}

func FuzzPatchPaths(f *testing.F) {
	f.Add("--- a/x\n+++ b/x\n")
	f.Add("rename from a\nrename to b\n*** Add File: c\n")
	f.Fuzz(func(t *testing.T, patch string) {
		for _, p := range permission.PatchPaths(patch) {
			if p.Path == "" || p.Span.Start < 0 || p.Span.End > len(patch) || p.Span.Start > p.Span.End {
				t.Fatalf("bad path %+v", p)
			}
		}
	})
}
