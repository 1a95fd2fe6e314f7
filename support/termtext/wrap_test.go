package termtext_test

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/support/termtext"
)

func TestWidth(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		"":            0,
		"abc":         3,
		"日本":          4,
		"ｆｕｌｌ":        8,
		"e\u0301":     1, // e and a combining acute
		"a\u200bb":    2, // zero-width space
		"│ reason   ": 11,
		"…":           1,
	} {
		if got := termtext.Width(s); got != want {
			t.Errorf("Width(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestWrap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		line   string
		cols   int
		indent string
		want   []string
	}{
		{"fits", "a short line", 40, "  ", []string{"a short line"}},
		{"no limit", strings.Repeat("word ", 30), 0, "  ", []string{strings.Repeat("word ", 30)}},
		{"at words, with the indent", "  allowed by the built-in rule · Read-only command inside the project", 30, "    ",
			[]string{"  allowed by the built-in rule", "    · Read-only command inside", "    the project"}},
		{"columns kept within a line", "/permissions [revoke ID]  the rules in force by level", 30, "    ",
			[]string{"/permissions [revoke ID]  the", "    rules in force by level"}},
		{"a word wider than a line is cut", "see " + strings.Repeat("x", 50) + " then", 20, "  ",
			[]string{"see", "  xxxxxxxxxxxxxxxxx…", "  then"}},
		{"wide characters count twice", "日本語 日本語 日本語 日本語", 16, "",
			[]string{"日本語 日本語", "日本語 日本語"}},
		{"an indent too wide is dropped", "alpha beta gamma delta epsilon", 20, strings.Repeat(" ", 10),
			[]string{"alpha beta gamma", "delta epsilon"}},
		{"trailing spaces", "alpha beta gamma delta   ", 12, "",
			[]string{"alpha beta", "gamma delta"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := termtext.Wrap(tc.line, tc.cols, tc.indent)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Wrap(%q, %d)\n got %q\nwant %q", tc.line, tc.cols, got, tc.want)
			}
		})
	}
}

// TestWrapKeepsWords: at any width from 16 columns, no wrapped line is
// wider than the width, and the words come out whole and in order (only
// a word wider than a line is cut, and then ends in "…").
func TestWrapKeepsWords(t *testing.T) {
	t.Parallel()
	texts := []string{
		"shell: `rm -rf node_modules` rm -r deletes `node_modules` and everything below, which cannot be undone; destructive calls are asked every time.",
		"    7  2026-12-01T21:45:33.000Z  permission.resolved        policy  allow shell {\"command\":\"go test ./...\"} Read-only command inside the project",
		"  read-only commands, allowed in their read-only form (built-in): cat, cd, diff, echo, find, git-blame, … (custom-agent policy list --level builtin lists them)",
		"名前 の ある ファイル を 読む だけ です、 それ は 許されて います",
		"a " + strings.Repeat("b", 70) + " c",
	}
	for _, text := range texts {
		for cols := 16; cols <= 100; cols++ {
			lines := termtext.Wrap(text, cols, "    ")
			var words []string
			for _, l := range lines {
				if w := termtext.Width(l); w > cols {
					t.Fatalf("cols %d: line %q is %d wide", cols, l, w)
				}
				words = append(words, strings.Fields(l)...)
			}
			want := strings.Fields(text)
			if len(words) != len(want) {
				t.Fatalf("cols %d: %d words, want %d: %q", cols, len(words), len(want), lines)
			}
			for i := range want {
				if words[i] != want[i] && !(strings.HasSuffix(words[i], "…") && strings.HasPrefix(want[i], strings.TrimSuffix(words[i], "…")) && termtext.Width(want[i]) > cols-4) {
					t.Fatalf("cols %d: word %d is %q, want %q", cols, i, words[i], want[i])
				}
			}
		}
	}
}

func TestWrapText(t *testing.T) {
	t.Parallel()
	got := termtext.WrapText("alpha beta gamma delta epsilon\nshort\n", 20, "  ")
	if want := "alpha beta gamma\n  delta epsilon\nshort\n"; got != want {
		t.Errorf("WrapText = %q, want %q", got, want)
	}
}
