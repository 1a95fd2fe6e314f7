package injection_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/injection"
)

// mixed returns 1 MiB of the corpus, benign and injected samples in turn
// (docs, logs, HTML, Go source, 7 % injected text), repeated.
func mixed(b *testing.B) []byte {
	list := loadCorpus(b)
	var text []byte
	for len(text) < 1<<20 {
		for _, s := range list {
			raw, err := os.ReadFile(filepath.Join("testdata", "corpus", s.File))
			if err != nil {
				b.Fatal(err)
			}
			text = append(text, raw...)
			text = append(text, '\n')
		}
	}
	return text[:1<<20]
}

// BenchmarkScan1MiB: the target is at most 5 ms per MiB, with allocations
// bounded by what is found (the spans), not by the input's length.
func BenchmarkScan1MiB(b *testing.B) {
	text := mixed(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(injection.Scan(text).Spans)
	}
	b.ReportMetric(float64(n), "spans")
}

// BenchmarkScanBenign1MiB is the common case: nothing to find.
func BenchmarkScanBenign1MiB(b *testing.B) {
	list := loadCorpus(b)
	var text []byte
	for len(text) < 1<<20 {
		for _, s := range list {
			if s.Label != "benign" {
				continue
			}
			raw, err := os.ReadFile(filepath.Join("testdata", "corpus", s.File))
			if err != nil {
				b.Fatal(err)
			}
			text = append(text, raw...)
			text = append(text, '\n')
		}
	}
	text = text[:1<<20]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		injection.Scan(text)
	}
}

var sink int

// BenchmarkBaselineLoop is the floor the scanner is measured against on
// the same machine: one pass over the same MiB comparing every byte twice
// and doing nothing else.
func BenchmarkBaselineLoop(b *testing.B) {
	text := mixed(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		n := 0
		for _, c := range text {
			if c == ' ' || c == '<' {
				n++
			}
		}
		sink = n
	}
}

// BenchmarkScanAdversarial: 64 KiB of one trigger repeated, each making
// the scanner look ahead or back at every occurrence (review finding 8).
// The work is bounded by counting in TestLookAheadWorkBounded; this shows
// the time, which should stay within a small multiple of BenchmarkScan1MiB
// per byte.
func BenchmarkScanAdversarial(b *testing.B) {
	for _, unit := range []string{"![a](", "<!--", "<!-- x ", `<div style="display:none">`, "<a ", "忽略", "忽略指令", "AI agents must ", "<|",
		"a/", "x/" + strings.Repeat("QUJD", 12) + " "} {
		text := []byte(strings.Repeat(unit, (64<<10)/len(unit)+1)[:64<<10])
		b.Run(strings.NewReplacer(" ", "_", "\"", "", "=", "", ":", "", "/", "_").Replace(unit), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				injection.Scan(text)
			}
		})
	}
}
