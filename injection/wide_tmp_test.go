package injection_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/injection"
)

func TestWideTmp(t *testing.T) {
	roots := strings.Split(os.Getenv("WIDE_ROOTS"), ":")
	var n, flagged int
	byClass := map[injection.Class]int{}
	var examples []string
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			name := strings.ToLower(d.Name())
			if !(strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".html") || strings.HasPrefix(name, "readme") || strings.HasSuffix(name, ".txt")) {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil || len(b) > 2<<20 {
				return nil
			}
			n++
			r := injection.Scan(b)
			if r.Flagged() {
				flagged++
				for _, c := range r.Classes() {
					byClass[c]++
				}
				examples = append(examples, p+":"+spans(b, r))
			}
			return nil
		})
	}
	sort.Strings(examples)
	t.Logf("%d files, %d flagged (%.2f%%) %v", n, flagged, 100*float64(flagged)/float64(n), byClass)
	for _, e := range examples {
		if len(e) > 300 {
			e = e[:300]
		}
		t.Log(e)
	}
}
