package injection_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/injection"
)

// TestBroadFalsePositives scans every README, .md, .txt and HTML file
// beneath the directories INJECTION_SCAN_ROOTS names (colon-separated,
// e.g. "$(go env GOMODCACHE):/usr/share/doc"), which are taken to hold no
// injection, and fails when more than 0.1 % of them are flagged; each
// flagged file is logged. It measures what docs/injection.md reports on
// the machine's own docs; without the variable it skips, the corpus test
// (TestCorpusRates) being the pinned measure.
func TestBroadFalsePositives(t *testing.T) {
	roots := os.Getenv("INJECTION_SCAN_ROOTS")
	if roots == "" {
		t.Skip("set INJECTION_SCAN_ROOTS to directories of docs to measure the false-positive rate on them")
	}
	var files, flagged int
	for _, root := range strings.Split(roots, ":") {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			name := strings.ToLower(d.Name())
			if !strings.HasSuffix(name, ".md") && !strings.HasSuffix(name, ".html") && !strings.HasSuffix(name, ".txt") && !strings.HasPrefix(name, "readme") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil || len(b) > 2<<20 {
				return nil
			}
			files++
			if r := injection.Scan(b); r.Flagged() {
				flagged++
				t.Logf("%s:%s", p, spans(b, r))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files == 0 {
		t.Fatalf("no files beneath %s", roots)
	}
	t.Logf("%d files, %d flagged (%.2f%%)", files, flagged, 100*float64(flagged)/float64(files))
	if flagged*1000 > files {
		t.Errorf("more than 0.1%% of the files were flagged")
	}
}
