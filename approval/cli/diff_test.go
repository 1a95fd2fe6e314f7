package cli

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/custom-agent/custom-agent/secrets"
)

func texts(ls []diffLine) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.text + "\n")
	}
	return b.String()
}

func TestHunks(t *testing.T) {
	t.Parallel()
	lines := func(s string) []string { return splitLines(s) }
	tests := []struct {
		name, a, b, want string
	}{
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"append", "a\n", "a\nb\n", "@@ -1 +1,2 @@\n a\n+b\n"},
		{"from empty", "", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"to empty", "x\n", "", "@@ -1 +0,0 @@\n-x\n"},
		{"two hunks far apart", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n",
			"@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+Y\n 12\n"},
		{"two changes close together make one hunk", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\nX\n3\n4\n5\n6\nY\n8\n",
			"@@ -1,8 +1,8 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n-7\n+Y\n 8\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, texts(hunks(diffOps(lines(tt.a), lines(tt.b))))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The edit script turns a into b, and is as short as a longest common
// subsequence allows.
func TestDiffOpsProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		gen := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "c", "d"}), 0, 30)
		a, b := gen.Draw(t, "a"), gen.Draw(t, "b")
		var gotA, gotB []string
		edits := 0
		for _, o := range diffOps(a, b) {
			if o.kind != '+' {
				gotA = append(gotA, o.text)
			}
			if o.kind != '-' {
				gotB = append(gotB, o.text)
			}
			if o.kind != ' ' {
				edits++
			}
		}
		if !slicesEqual(gotA, a) || !slicesEqual(gotB, b) {
			t.Fatalf("script does not turn %q into %q: %q, %q", a, b, gotA, gotB)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("%d edits from %q to %q, want %d", edits, a, b, want)
		}
	})
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestEditFor(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"/repo/main.go":  "package main\n\nfunc main() {}\n",
		"/repo/.env":     "TOKEN=ghp_Z8xQ2mN4vB6nM1kL9pO3iU7yT5rE0wQaSdFg\nA=1\n",
		"/repo/huge.bin": strings.Repeat("x", maxEditFile+1),
	}
	read := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		if name == "/repo/locked" {
			return nil, fs.ErrPermission
		}
		return nil, fs.ErrNotExist
	}
	args := func(kv ...string) json.RawMessage {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		b, _ := json.Marshal(m)
		return b
	}
	tests := []struct {
		name, tool string
		args       json.RawMessage
		dir        string
		summary    string
		lines      string
	}{
		{"write changes a file", "write_file", args("path", "main.go", "content", "package main\n\nfunc main() { run() }\n"), "/repo",
			"changes 1 of 3 lines: +1 -1",
			"--- main.go\n+++ main.go\n@@ -1,3 +1,3 @@\n package main\n \n-func main() {}\n+func main() { run() }\n"},
		{"write a new file", "write_file", args("path", "new.txt", "content", "one\ntwo\n"), "/repo", "new file, 2 lines", "+one\n+two\n"},
		{"write an absolute path without a dir", "write_file", args("path", "/repo/main.go", "content", "package main\n"), "",
			"changes 2 of 3 lines: +0 -2", "--- /repo/main.go\n+++ /repo/main.go\n@@ -1,3 +1 @@\n package main\n-\n-func main() {}\n"},
		{"write a relative path without a dir", "write_file", args("path", "main.go", "content", "x\n"), "",
			"1 new line; the current file was not compared (the session's directory is not known here)", "+x\n"},
		{"write the same content", "write_file", args("path", "main.go", "content", files["/repo/main.go"]), "/repo",
			"no change: the file already holds this content (3 lines)", ""},
		{"unreadable file", "write_file", args("path", "locked", "content", "x\n"), "/repo",
			"1 new line; the current file could not be read: permission denied", "+x\n"},
		{"huge file", "write_file", args("path", "huge.bin", "content", "x\n"), "/repo",
			"1 new line replace a file of 1048577 bytes, too big to compare here", "+x\n"},
		// The current content is masked as the args are: the secret in
		// the file is neither shown nor taken for a change.
		{"secret in the current file", "write_file", args("path", ".env", "content", strings.Replace(secrets.Mask(files["/repo/.env"]), "A=1", "A=2", 1)), "/repo",
			"changes 1 of 2 lines: +1 -1", "--- .env\n+++ .env\n@@ -1,2 +1,2 @@\n"},
		{"patch", "apply_patch", args("patch", "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n--- old\n+new\n"), "",
			"patch: 2 files, +2 -2 lines", "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n--- old\n+new\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, ok := editFor(tt.tool, tt.args, tt.dir, read)
			if !ok {
				t.Fatal("not an edit")
			}
			if e.summary != tt.summary {
				t.Errorf("summary %q, want %q", e.summary, tt.summary)
			}
			got := texts(e.lines)
			if tt.name == "secret in the current file" {
				if strings.Contains(got, "ghp_") {
					t.Errorf("the diff shows the secret:\n%s", got)
				}
				got = got[:strings.Index(got, "@@ -1,2 +1,2 @@\n")+len("@@ -1,2 +1,2 @@\n")]
			}
			if diff := cmp.Diff(tt.lines, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
	if _, ok := editFor("shell", args("command", "ls"), "", read); ok {
		t.Error("shell is an edit")
	}
	if _, ok := editFor("write_file", json.RawMessage(`{"path": 3}`), "", func(string) ([]byte, error) { return nil, errors.New("x") }); ok {
		t.Error("malformed args make an edit")
	}
}
