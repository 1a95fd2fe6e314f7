package injection_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/injection"
)

// corpusText returns n bytes of the corpus's samples with the label,
// repeated.
func corpusText(t testing.TB, label string, n int) []byte {
	var text []byte
	for len(text) < n {
		for _, s := range loadCorpus(t) {
			if s.Label != label {
				continue
			}
			raw, err := os.ReadFile(filepath.Join("testdata", "corpus", s.File))
			if err != nil {
				t.Fatal(err)
			}
			text = append(text, raw...)
			text = append(text, '\n')
		}
	}
	return text[:n]
}

// TestAllocsDoNotGrowWithInput: a scan of benign text allocates about the
// same at 256 KiB and at 2 MiB (buffers are made once and reused; slices
// that collect places grow by doubling), and few times in all. Counted,
// not timed. The scanner before this bound made 347 allocations on 1 MiB,
// two per stretch of text it folded.
func TestAllocsDoNotGrowWithInput(t *testing.T) {
	small := corpusText(t, "benign", 256<<10)
	large := corpusText(t, "benign", 2<<20)
	a := testing.AllocsPerRun(3, func() { injection.Scan(small) })
	b := testing.AllocsPerRun(3, func() { injection.Scan(large) })
	t.Logf("allocations: %.0f on 256 KiB, %.0f on 2 MiB", a, b)
	if b > a+12 || b > 64 {
		t.Errorf("allocations grow with the input: %.0f on 256 KiB, %.0f on 2 MiB (bound: +12, at most 64)", a, b)
	}
}
