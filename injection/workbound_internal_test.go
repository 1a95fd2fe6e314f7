package injection

import (
	"strings"
	"testing"
)

// adversarial are texts made of one trigger repeated: each makes the
// scanner look ahead (for a "-->", a "](", a URL's end, a tag's '>', a
// CJK object) or back (for an open quotation or inline code) at every
// occurrence. From review finding 8: 1 MiB of `![a](` took 6–8 s, of
// `<!--` 2 s, of 忽略 0.5–1.9 s.
var adversarial = []string{
	"![a](", "![", "<!--", "<!-- x ", `<div style="display:none">`, `<a style="color:white">`, "<a ",
	"[", "忽略", "忽略指令", "AI agents must ", "ignore ", "send ", "\"ignore ", "“", "`", "<|", "</tool-output ",
	"<tool_result ", "SYSTEM ", "#", "# ", "!", "https://", "without ", "do not ",
	"![a][1]\n[1]: https://e.example/QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw\n",
	"&#73;gnore ", "Ig-nore ", "I*gnore* ", "Ign\u043er\u0435 ", "%49%67%6e%6f%72%65%20%61%6c%6c ",
	// Runs tried again from after each '-', '_', '/', '+' or '=' (gluedRuns):
	// separators everywhere, and text that decodes as text at every one.
	"a/", "-Ab", "Ab_", "id_dGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw/",
	"x/" + strings.Repeat("QUJD", 12) + " ",
}

// TestLookAheadWorkBounded: on every adversarial text the bytes the
// look-aheads and look-backs read (scanner.work) grow linearly with the
// text and stay within a small multiple of it: counted, not timed.
func TestLookAheadWorkBounded(t *testing.T) {
	const perByte = 24 // the CJK window: 180 bytes around each 6-byte trigger
	for _, unit := range adversarial {
		var ratios []float64
		for _, n := range []int{16 << 10, 128 << 10} {
			text := []byte(strings.Repeat(unit, n/len(unit)+1)[:n])
			decode, regions := maxDecodeTotal, maxRegionTotal
			s := scanner{t: text, decodeBudget: &decode, regionBudget: &regions}
			s.run()
			s.finishHidden()
			r := float64(s.work) / float64(n)
			ratios = append(ratios, r)
			if s.work > perByte*n {
				t.Errorf("%q × %d KiB: the look-aheads read %d bytes, %.1f per byte of text (bound %d)", unit, n>>10, s.work, r, perByte)
			}
		}
		if ratios[1] > 2*ratios[0]+1 {
			t.Errorf("%q: the work per byte grows with the text: %.1f at 16 KiB, %.1f at 128 KiB", unit, ratios[0], ratios[1])
		}
	}
}
