package permission_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// deleteDiff is a unified diff deleting each file.
func deleteDiff(files ...string) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "diff --git a/%s b/%s\ndeleted file mode 100644\n--- a/%s\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", f, f, f)
	}
	return b.String()
}

// deleteCodex is a Codex-style patch deleting each file.
func deleteCodex(files ...string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, f := range files {
		b.WriteString("*** Delete File: " + f + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

func editDiff(files ...string) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-x\n+y\n", f, f)
	}
	return b.String()
}

// TestPatchBulkDelete: a patch deleting more than BulkDeleteThreshold
// files, or a module manifest, is destructive in both formats; one
// ordinary file deleted, or many edited, stays a write.
func TestPatchBulkDelete(t *testing.T) {
	t.Parallel()
	four := []string{"a.go", "b.go", "c.go", "d.go"}
	three := four[:permission.BulkDeleteThreshold]
	tests := []struct {
		name  string
		patch string
		want  risk.Level
	}{
		{"four deleted", deleteDiff(four...), risk.Destructive},
		{"four deleted codex", deleteCodex(four...), risk.Destructive},
		{"three deleted", deleteDiff(three...), risk.Write},
		{"three deleted codex", deleteCodex(three...), risk.Write},
		{"one deleted", deleteDiff("old.go"), risk.Write},
		{"go.mod deleted", deleteDiff("go.mod"), risk.Destructive},
		{"nested package.json deleted", deleteCodex("web/package.json"), risk.Destructive},
		{"plain form manifest", "--- Cargo.toml\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", risk.Destructive},
		{"five edited", editDiff("a.go", "b.go", "c.go", "d.go", "e.go"), risk.Write},
		{"go.mod edited", editDiff("go.mod"), risk.Write},
		{"renames are no deletion", "diff --git a/a b/a2\nrename from a\nrename to a2\ndiff --git a/b b/b2\nrename from b\nrename to b2\n" +
			"diff --git a/c b/c2\nrename from c\nrename to c2\ndiff --git a/d b/d2\nrename from d\nrename to d2\n", risk.Write},
		{"go.mod renamed", "diff --git a/go.mod b/go.mod.bak\nrename from go.mod\nrename to go.mod.bak\n", risk.Write},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := permission.Engine{}.Check(newReq(t, "apply_patch", map[string]any{"patch": tc.patch}))
			if d.RiskAtDecision != tc.want {
				t.Errorf("risk %v, want %v\nfindings: %+v", d.RiskAtDecision, tc.want, d.Findings)
			}
			if tc.want == risk.Destructive && d.Decision == permission.Allow {
				t.Errorf("a destructive patch was allowed")
			}
			for _, f := range d.Findings {
				if f.Span.End > len(tc.patch) || f.Span.Start > f.Span.End {
					t.Errorf("finding span %+v out of the patch", f.Span)
				}
			}
		})
	}
}
