package injection_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/injection"
)

var verbose = flag.Bool("corpus.v", false, "print every misjudged sample of the labelled corpus")

// sample is one entry of testdata/corpus/corpus.json.
type sample struct {
	File   string `json:"file"`
	Label  string `json:"label"` // benign | injected
	Kind   string `json:"kind"`
	Class  string `json:"class,omitempty"`
	Source string `json:"source"`
	// Payload is the byte range of the injected text in the file.
	Payload []int `json:"payload,omitempty"`
}

func loadCorpus(t testing.TB) []sample {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "corpus", "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list []sample
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	return list
}

// The pinned error counts on the labelled corpus: the test fails when the
// scanner does worse, and asks for the pin to be lowered when it does
// better, so the figures in docs/injection.md stay true.
const (
	pinFalsePositives = 0 // benign samples flagged
	pinFalseNegatives = 4 // injected samples with nothing found over the payload
	pinClassMisses    = 0 // injected samples whose own class was not found over the payload
)

// TestCorpusRates measures the false-positive and false-negative rates on
// the labelled corpus (testdata/corpus: benign text from real sources,
// injected text of every class) and pins them.
func TestCorpusRates(t *testing.T) {
	t.Parallel()
	list := loadCorpus(t)
	var benign, injected, fp, fn, miss int
	perClass := map[string][2]int{} // class -> found, total
	var report []string
	for _, s := range list {
		text, err := os.ReadFile(filepath.Join("testdata", "corpus", s.File))
		if err != nil {
			t.Fatal(err)
		}
		if s.Source == "" {
			t.Errorf("%s: no source recorded", s.File)
		}
		r := injection.Scan(text)
		switch s.Label {
		case "benign":
			benign++
			if r.Flagged() {
				fp++
				report = append(report, fmt.Sprintf("false positive %s: %s", s.File, spans(text, r)))
			}
		case "injected":
			injected++
			if len(s.Payload) != 2 || !slices.Contains(injection.AllClasses(), injection.Class(s.Class)) {
				t.Fatalf("%s: payload range or class missing", s.File)
			}
			any, own := false, false
			for _, sp := range r.Spans {
				if sp.Start < s.Payload[1] && sp.End > s.Payload[0] {
					any = true
					own = own || string(sp.Class) == s.Class
				}
			}
			c := perClass[s.Class]
			c[1]++
			if own {
				c[0]++
			}
			perClass[s.Class] = c
			if !any {
				fn++
				report = append(report, fmt.Sprintf("false negative %s (%s): %q", s.File, s.Class, text[s.Payload[0]:s.Payload[1]]))
			} else if !own {
				miss++
				report = append(report, fmt.Sprintf("class missed %s (%s): %s", s.File, s.Class, spans(text, r)))
			}
		default:
			t.Fatalf("%s: label %q", s.File, s.Label)
		}
	}
	if benign < 100 || injected < 100 {
		t.Fatalf("the corpus has %d benign and %d injected samples; it needs at least 100 of each", benign, injected)
	}
	for _, c := range injection.AllClasses() {
		if perClass[string(c)][1] == 0 {
			t.Errorf("no injected sample of class %s", c)
		}
	}
	t.Logf("corpus: %d benign, %d injected", benign, injected)
	t.Logf("false positives: %d/%d (%.1f%%); false negatives: %d/%d (%.1f%%); own class missed: %d",
		fp, benign, 100*float64(fp)/float64(benign), fn, injected, 100*float64(fn)/float64(injected), miss)
	for _, c := range injection.AllClasses() {
		k := perClass[string(c)]
		t.Logf("  %-22s %d/%d found", c, k[0], k[1])
	}
	if *verbose || fp > pinFalsePositives || fn > pinFalseNegatives || miss > pinClassMisses {
		for _, l := range report {
			t.Log(l)
		}
	}
	check := func(what string, got, pin int) {
		switch {
		case got > pin:
			t.Errorf("%s: %d, worse than the pinned %d", what, got, pin)
		case got < pin:
			t.Errorf("%s: %d, better than the pinned %d: lower the pin (and the figures in docs/injection.md)", what, got, pin)
		}
	}
	check("false positives", fp, pinFalsePositives)
	check("false negatives", fn, pinFalseNegatives)
	check("own class missed", miss, pinClassMisses)
}

func spans(text []byte, r injection.Result) string {
	var b strings.Builder
	for i, sp := range r.Spans {
		if i == 4 {
			fmt.Fprintf(&b, " …(%d more)", len(r.Spans)-4)
			break
		}
		fmt.Fprintf(&b, " %s %q", sp.Class, text[sp.Start:sp.End])
	}
	return b.String()
}
