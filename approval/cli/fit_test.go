package cli

import "testing"

func TestFitCells(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"  30s left · press a key", 40, "  30s left · press a key"},
		{"  30s left · press a key", 10, "  30s lef…"},
		// Colour sequences take no columns, are kept whole, and the cut
		// resets the colour.
		{"  \x1b[2m30s left\x1b[0m · press a key", 24, "  \x1b[2m30s left\x1b[0m · press a key"},
		{"  \x1b[31m30s left\x1b[0m · press a key", 6, "  \x1b[31m30s\x1b[0m…"},
		// A wide rune takes two columns and is not split.
		{"理由理由", 5, "理由…"},
		{"abc", 0, "…"},
	} {
		if got := fitCells(tc.in, tc.max); got != tc.want {
			t.Errorf("fitCells(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if got := fitCells(tc.in, tc.max); tc.max > 0 && visibleCells(got) > tc.max {
			t.Errorf("fitCells(%q, %d) is %d columns wide", tc.in, tc.max, visibleCells(got))
		}
	}
}
