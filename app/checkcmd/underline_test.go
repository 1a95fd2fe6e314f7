package checkcmd

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
)

func TestUnderline(t *testing.T) {
	long := strings.Repeat("a", 150) + " rm -rf x " + strings.Repeat("b", 150)
	tests := []struct {
		v          string
		span       [2]int
		line, mark string
	}{
		{"rm -rf x", [2]int{0, 8}, "rm -rf x", "^^^^^^^^"},
		{"a\tb", [2]int{2, 3}, "a\tb", "  ^"},
		{"x\x1by", [2]int{2, 3}, `x\x1by`, "     ^"}, // under the y, after the escaped ESC
		{"abc", [2]int{3, 3}, "abc", "   ^"},
		{long, [2]int{151, 159}, "…" + strings.Repeat("a", 44) + " rm -rf x " + strings.Repeat("b", 44) + "…", strings.Repeat(" ", 46) + "^^^^^^^^"},
	}
	for _, tc := range tests {
		line, mark, ok := underline(tc.v, risk.Span{Start: tc.span[0], End: tc.span[1]})
		if !ok || line != tc.line || mark != tc.mark {
			t.Errorf("underline(%q, %v) =\n%q\n%q\nwant\n%q\n%q", tc.v, tc.span, line, mark, tc.line, tc.mark)
		}
	}
	if _, _, ok := underline("abc", risk.Span{Start: 2, End: 9}); ok {
		t.Error("a span past the end was underlined")
	}
}
