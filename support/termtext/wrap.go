package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// Width is how many terminal columns s takes: two for an East Asian wide
// or fullwidth character, none for a combining mark or a format character,
// one for any other. s is text as printed: escape sequences (colours) in
// it are counted as the characters they are made of.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case r == utf8.RuneError:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// minRoom is the fewest columns a wrapped line keeps for its words after
// the indent; a narrower indent is dropped.
const minRoom = 16

// Wrap breaks one line into lines at most cols columns wide (Width), at
// the spaces between words: the first line keeps the line's own leading
// spaces, and every further line starts with indent. Within a line the
// spaces between words are kept as they are (columns stay aligned); the
// spaces where a line breaks are dropped. A word wider than a whole line
// is cut to fit and ends in "…", so no line is wider than cols; no other
// word is split. An indent or leading spaces that would leave fewer than
// minRoom columns are dropped. cols <= 0 means no limit: Wrap returns the
// line as it is. line must not hold a newline.
func Wrap(line string, cols int, indent string) []string {
	if cols <= 0 || Width(line) <= cols {
		return []string{line}
	}
	if Width(indent)+minRoom > cols {
		indent = ""
	}
	rest := strings.TrimLeft(line, " ")
	lead := line[:len(line)-len(rest)]
	if Width(lead)+minRoom > cols {
		lead = indent
	}
	var out []string
	var b strings.Builder
	b.WriteString(lead)
	used, empty := Width(lead), true
	for rest != "" {
		gapEnd := len(rest) - len(strings.TrimLeft(rest, " \t"))
		gap := strings.ReplaceAll(rest[:gapEnd], "\t", " ")
		rest = rest[gapEnd:]
		end := strings.IndexAny(rest, " \t")
		if end < 0 {
			end = len(rest)
		}
		word := rest[:end]
		rest = rest[end:]
		if word == "" {
			break // trailing spaces
		}
		w := Width(word)
		if !empty && used+len(gap)+w > cols {
			out = append(out, b.String())
			b.Reset()
			b.WriteString(indent)
			used, empty, gap = Width(indent), true, ""
		}
		if empty {
			gap = ""
		}
		if used+len(gap)+w > cols {
			word, w = cut(word, cols-used-len(gap)), cols-used-len(gap)
		}
		b.WriteString(gap)
		b.WriteString(word)
		used += len(gap) + w
		empty = false
	}
	return append(out, b.String())
}

// cut is the longest start of word at most n-1 columns wide, then "…".
func cut(word string, n int) string {
	if n <= 0 {
		return ""
	}
	used := 0
	for i, r := range word {
		if used+runeWidth(r) > n-1 {
			return word[:i] + "…"
		}
		used += runeWidth(r)
	}
	return word
}

// WrapText is Wrap for every line of s (lines end in "\n"); what it
// returns ends in "\n" when s does.
func WrapText(s string, cols int, indent string) string {
	if cols <= 0 {
		return s
	}
	var b strings.Builder
	for line := range strings.Lines(s) {
		body := strings.TrimSuffix(line, "\n")
		for i, l := range Wrap(body, cols, indent) {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(l)
		}
		if len(body) < len(line) {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
