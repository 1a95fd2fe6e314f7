package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/artifact"
)

func TestArtifactCat(t *testing.T) {
	dir := t.TempDir()
	s, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	d, err := s.Put([]byte("PASS  packages/storage\nok\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "--data-dir", dir, "artifact", "cat", d)
	if err != nil || out != "PASS  packages/storage\nok\n" {
		t.Fatalf("artifact cat = %q, %v", out, err)
	}
	if _, _, err := runCLI(t, "--data-dir", dir, "artifact", "cat", "sha256:"+strings.Repeat("0", 64)); exitCode(err) != 1 {
		t.Fatalf("missing artifact: %v, want exit 1", err)
	}
	if _, _, err := runCLI(t, "--data-dir", dir, "artifact", "cat", "nope"); err == nil || !strings.Contains(err.Error(), "not an artifact digest") {
		t.Fatalf("bad digest: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "none")
	runCLI(t, "--data-dir", empty, "artifact", "cat", d)
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatal("artifact cat created the data dir")
	}
}
