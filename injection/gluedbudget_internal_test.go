package injection

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestGluedRunsSpareTheBudget: a benign base64 text (a README as an API
// returns it) has '/' and '+' all through it; decoded from its start it
// is text, so gluedRuns does not decode it again from after each of them
// (which would spend the scan's decode budget on one run and leave a
// payload after it undecoded). It is decoded once.
func TestGluedRunsSpareTheBudget(t *testing.T) {
	plain := strings.Repeat("Does it build? Run make -> then make test; see ~/docs for more. ", 60)[:3000]
	enc := base64.StdEncoding.EncodeToString([]byte(plain))
	if n := strings.Count(enc, "/") + strings.Count(enc, "+"); n < 40 {
		t.Fatalf("the text must hold many separators, has %d", n)
	}
	text := []byte(`{"content": "` + enc + `"}`)
	decode, regions := maxDecodeTotal, maxRegionTotal
	s := scanner{t: text, decodeBudget: &decode, regionBudget: &regions}
	s.run()
	if len(s.spans) != 0 {
		t.Fatalf("flagged: %v", s.spans)
	}
	if used := maxDecodeTotal - decode; used > len(plain)+probeLen {
		t.Errorf("one benign run spent %d bytes of the decode budget; its text is %d", used, len(plain))
	}
}
