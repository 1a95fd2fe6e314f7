package fs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/tool"
)

// run calls t's Run with args in cwd and returns its stdout.
func run(t *testing.T, tl tool.Tool, cwd string, args map[string]any) (string, tool.Result, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	res, err := tl.Run(context.Background(), tool.Call{ID: "call-1", Args: args, Cwd: cwd},
		tool.Output{Stdout: &stdout, Stderr: &stderr})
	if stderr.Len() > 0 {
		t.Errorf("stderr: %q", stderr.String())
	}
	return stdout.String(), res, err
}

// makeTree creates files under dir: a name ending in / is a directory, any
// other name a file with that content.
func makeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// errText returns err's text, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// skipIfRoot skips a permission-denied case: root ignores file modes.
func skipIfRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skip("running as root, which ignores file modes, so permission denied cannot happen")
	}
}
