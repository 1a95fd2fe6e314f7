package contextbuild

import (
	"strings"
	"unicode/utf8"
)

// Neutralise rewrites what in a tool's text could pass for custom-agent's
// own words: an opening or closing delimiter of a tool output
// (`<tool-output …`, `</tool-output …`) and the start of a note from
// custom-agent (`[custom-agent:`). It does not try to tell a forgery from a
// quotation; it rewrites every look-alike, so that no text inside a
// section reads as its end or as a note, whatever the scanner makes of it:
//
//	</tool-output nonce="…">   →  [escaped tag: /tool-output] nonce="…">
//	[custom-agent: …           →  [escaped note: custom-agent] …
//
// A look-alike is read through what a reader would not tell apart: upper
// or lower case, full-width forms (＜), Cyrillic and Greek letters that
// look Latin (т, о), any dash or none between the words (‐, −, _), spaces,
// soft hyphens and zero-width characters, and `<` written as an HTML
// entity (&lt; &#60; &#x3c;) or an escape (\u003c, \x3c, %3c). Text with
// none is returned as it is.
func Neutralise(text string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); {
		if end, ok := openerAt(text, i); ok {
			if nameEnd, slash, ok := tagName(text, end); ok {
				b.Grow(len(text) + 32)
				b.WriteString(text[last:i])
				b.WriteString("[escaped tag: ")
				if slash {
					b.WriteString("/")
				}
				b.WriteString("tool-output]")
				last, i = nameEnd, nameEnd
				continue
			}
		}
		if c, n := fold(text, i); c == '[' {
			if nameEnd, ok := noteName(text, i+n); ok {
				b.Grow(len(text) + 32)
				b.WriteString(text[last:i])
				b.WriteString("[escaped note: custom-agent]")
				last, i = nameEnd, nameEnd
				continue
			}
		}
		_, n := utf8.DecodeRuneInString(text[i:])
		i += n
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// openerAt reports whether text at i spells `<` in any of the forms a
// reader takes for it, and where it ends.
func openerAt(text string, i int) (int, bool) {
	if c, n := fold(text, i); c == '<' {
		return i + n, true
	}
	rest := text[i:]
	for _, form := range [...]string{"&lt;", "&lt", "&#60;", "&#060;", "&#x3c;", "&#x003c;", "\\u003c", "\\x3c", "%3c"} {
		if len(rest) >= len(form) && strings.EqualFold(rest[:len(form)], form) {
			return i + len(form), true
		}
	}
	return 0, false
}

// tagName reads, from i, optional spaces and a slash, then "tool", any
// separators, "output"; it returns where the name ends and whether it is
// a closing tag.
func tagName(text string, i int) (end int, slash, ok bool) {
	i = skipSep(text, i)
	if c, n := fold(text, i); c == '/' {
		slash = true
		i = skipSep(text, i+n)
	}
	i, ok = word(text, i, "tool")
	if !ok {
		return 0, false, false
	}
	i, ok = word(text, skipSep(text, i), "output")
	return i, slash, ok
}

// noteName reads, from i (after a `[`), optional spaces, "custom", any
// separators, "agent", optional spaces and a colon.
func noteName(text string, i int) (int, bool) {
	i, ok := word(text, skipSep(text, i), "custom")
	if !ok {
		return 0, false
	}
	i, ok = word(text, skipSep(text, i), "agent")
	if !ok {
		return 0, false
	}
	i = skipSep(text, i)
	if c, n := fold(text, i); c == ':' {
		return i + n, true
	}
	return 0, false
}

// word reads w (lower-case ASCII) at i, letter by folded letter, with
// invisible characters between letters skipped.
func word(text string, i int, w string) (int, bool) {
	for k := 0; k < len(w); k++ {
		if k > 0 {
			i = skipInvisible(text, i)
		}
		c, n := fold(text, i)
		if n == 0 || c != w[k] {
			return 0, false
		}
		i += n
	}
	return i, true
}

// skipSep skips what may stand between the words of a look-alike: spaces,
// dashes, underscores and invisible characters.
func skipSep(text string, i int) int {
	for i < len(text) {
		c, n := fold(text, i)
		if c != ' ' && c != '-' && c != '_' && c != 0 {
			return i
		}
		i += n
	}
	return i
}

// skipInvisible skips soft hyphens and zero-width characters.
func skipInvisible(text string, i int) int {
	for i < len(text) {
		c, n := fold(text, i)
		if c != 0 || n == 0 {
			return i
		}
		i += n
	}
	return i
}

// fold returns the ASCII character a reader takes the rune at i for, in
// lower case: 0 for an invisible one, ' ' for any space, '-' for any dash,
// 0xff for one that looks like no ASCII character; n is its length (0 at
// the end).
func fold(text string, i int) (byte, int) {
	if i >= len(text) {
		return 0xff, 0
	}
	r, n := utf8.DecodeRuneInString(text[i:])
	switch {
	case r < utf8.RuneSelf:
		c := byte(r)
		switch {
		case c >= 'A' && c <= 'Z':
			return c + 'a' - 'A', n
		case c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			return ' ', n
		}
		return c, n
	case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
		c, _ := fold(string(r-0xFEE0), 0)
		return c, n
	}
	switch r {
	case 0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E:
		return 0, n
	case 0x00A0, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x202F, 0x205F, 0x3000:
		return ' ', n
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212, 0xFE58, 0xFE63, 0x2043, 0x2027, 0x30FC:
		return '-', n
	case 0x2039, 0x2329, 0x27E8, 0x3008, 0xFE64, 0x276E, 0x02C2:
		return '<', n
	case 0x2044, 0x2215, 0x29F8:
		return '/', n
	case 0xFF1A, 0xFE55, 0x2236:
		return ':', n
	case 0xFF3B, 0x27E6, 0x3010:
		return '[', n
	}
	if c, ok := confusable[r]; ok {
		return c, n
	}
	return 0xff, n
}

// confusable maps Cyrillic and Greek letters that look like the Latin ones
// of "tool", "output", "custom" and "agent" (and their capitals).
var confusable = map[rune]byte{
	'а': 'a', 'А': 'a', 'е': 'e', 'Е': 'e', 'о': 'o', 'О': 'o', 'р': 'p', 'Р': 'p',
	'с': 'c', 'С': 'c', 'т': 't', 'Т': 't', 'у': 'y', 'х': 'x', 'Х': 'x', 'і': 'i',
	'І': 'i', 'ѕ': 's', 'Ѕ': 's', 'к': 'k', 'К': 'k', 'м': 'm', 'М': 'm', 'н': 'h',
	'Н': 'h', 'ս': 'u', 'υ': 'u', 'ο': 'o', 'Ο': 'o', 'τ': 't', 'Τ': 't', 'ρ': 'p',
	'Ρ': 'p', 'α': 'a', 'Α': 'a', 'ε': 'e', 'Ε': 'e', 'ν': 'v', 'Ν': 'n', 'η': 'n',
	'ɡ': 'g', 'ց': 'g', 'ℓ': 'l', 'ӏ': 'l', 'Ӏ': 'l', 'Ι': 'i', 'ι': 'i', 'Μ': 'm',
	'Κ': 'k',
}
