// Package termtext makes text from a model, a tool or a repository safe to
// print on a terminal: every character that would act on the terminal
// instead of being shown (escape sequences that set the title, move the
// cursor or erase lines, carriage return, bell, backspace, C1 controls, and
// the Unicode bidi controls that reorder a line) is shown as an escape, so a
// person reads what is there and nothing can rewrite what they read before.
//
// It is pure: no I/O, no state.
package termtext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every unsafe character shown escaped, Go style:
// ESC as \x1b, CR as \r, BEL as \a, backspace as \b, other C0 controls and
// DEL as \xNN, C1 controls and bidi controls as \uNNNN, and a byte that is
// not UTF-8 as \xNN. Newline and tab are kept, and so is a CR right before
// a newline (it only returns to the start of a line that ends). Use Line for
// text that must stay on one line.
func Escape(s string) string { return escape(s, false) }

// Line is Escape for one-line fields (a file name, an argument, a reason):
// newline and CR LF are escaped too. Tab is kept.
func Line(s string) string { return escape(s, true) }

// Unsafe reports whether printing r would act on a terminal or reorder the
// text around it: C0 controls but tab and newline, DEL, C1 controls, the
// bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069),
// the implicit marks (U+200E, U+200F, U+061C) and the line and paragraph
// separators (U+2028, U+2029).
func Unsafe(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e || r == 0x200f || r == 0x061c, r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

// Invisible reports a character that shows as nothing, or as a blank,
// though it is not one: the format characters (zero-width space and
// joiners, word joiner, soft hyphen, BOM, Mongolian vowel separator, the
// tag characters …) and the Hangul fillers. They act on no terminal, but
// let two different strings look the same, so a one-line field (Line: a
// command, a path, a rule) shows them escaped. Free text keeps them
// (emoji are joined with U+200D).
func Invisible(r rune) bool {
	switch r {
	case 0x3164, 0x115f, 0x1160, 0xffa0:
		return true
	}
	return r >= 0x80 && unicode.Is(unicode.Cf, r)
}

func escape(s string, oneLine bool) string {
	if clean(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\n' && oneLine:
			b.WriteString(`\n`)
		case r == '\r' && !oneLine && i+1 < len(s) && s[i+1] == '\n':
			b.WriteByte('\r')
		case Unsafe(r) || oneLine && Invisible(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no escaping.
func clean(s string, oneLine bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && (c != '\n' || oneLine) || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			// The multi-byte characters need a closer look.
			return !strings.ContainsFunc(s[i:], func(r rune) bool {
				return r == utf8.RuneError || Unsafe(r) || oneLine && (r == '\n' || Invisible(r))
			}) && utf8.ValidString(s[i:])
		}
	}
	return true
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}
