package injection_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/injection"
)

// TestRepositoryDocsNotFlagged: this repository's own docs, which an agent
// working on it reads, are not flagged, docs/injection.md (full of attack
// examples, all quoted or in code) included.
func TestRepositoryDocsNotFlagged(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("..", "docs", "reference", "*.md"))
	files = append(append(files, more...), filepath.Join("..", "README.md"))
	if len(files) < 5 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if r := injection.Scan(b); r.Flagged() {
			t.Errorf("%s is flagged:%s", f, spans(b, r))
		}
	}
}
