package injection

import (
	"bytes"
	"unicode/utf8"
)

// fold writes what a reader sees in t, where it differs from the bytes,
// so that a word disguised for the scanner but not for a reader is found:
//
//   - full-width ASCII (Ｉｇｎｏｒｅ) as ASCII;
//   - Cyrillic and Greek letters that look Latin (о, е, а, р, с, і) as the
//     Latin ones, inside a word that has Latin letters too;
//   - soft hyphens, zero-width characters and word joiners inside a word
//     dropped, and so is a hyphen between two letters of one word when the
//     halves are not words on their own (Ig-nore);
//   - HTML character references (&#73; &#x49; &amp; …) decoded;
//   - an HTML tag between two letters (Ig</b>nore) and markdown emphasis
//     inside a word (I*gnore*) dropped;
//   - a run of eight or more %XX or \xNN escapes decoded.
//
// (An underscore inside a word is not emphasis to a markdown reader, and
// named character references other than &lt; &gt; hide no letters.)
//
// off maps each byte of the folded text to the offset of the byte it came
// from, with off[len(folded)] == len(t), so a span found in it is a span
// of t. changed is false when nothing was folded. The folded text is
// written into buf and the offsets into offBuf, from their starts: the
// folded text is never longer than t, so buffers of len(t) and len(t)+1
// bytes of capacity are never grown.
func fold(t, buf []byte, offBuf []int32) (folded []byte, off []int32, changed bool) {
	// A cheap first look: nothing to fold in pure ASCII text without '&',
	// '%', '\\', '<', '*', '_' or '-' between letters.
	if !mayFold(t) {
		return nil, nil, false
	}
	folded = buf[:0]
	off = offBuf[:0]
	emit := func(b byte, from int) {
		folded = append(folded, b)
		off = append(off, int32(from))
	}
	for i := 0; i < len(t); {
		c := t[i]
		if c < utf8.RuneSelf {
			switch c {
			case '&':
				if r, n := charRef(t[i:]); n > 0 && r < utf8.RuneSelf {
					emit(byte(r), i)
					i += n
					changed = true
					continue
				}
			case '%', '\\':
				if n := escapeRun(t[i:]); n > 0 {
					for k := i; k < i+n; {
						b, m := escapeAt(t[k:])
						if m == 0 {
							b, m = t[k], 1
						}
						emit(b, k)
						k += m
					}
					i += n
					changed = true
					continue
				}
			case '<':
				if e := innerTag(t, i); e > i {
					i = e
					changed = true
					continue
				}
			case '*':
				if j := innerMark(t, i); j > i {
					// Both marks of emphasis inside a word: the letters
					// between them are the word's.
					for k := i + 1; k < j; k++ {
						emit(t[k], k)
					}
					i = j + 1
					changed = true
					continue
				}
			case '-':
				if splitWord(t, i) {
					i++
					changed = true
					continue
				}
			}
			emit(c, i)
			i++
			continue
		}
		r, n := utf8.DecodeRune(t[i:])
		switch {
		case r >= 0xFF10 && r <= 0xFF19 || r >= 0xFF21 && r <= 0xFF3A || r >= 0xFF41 && r <= 0xFF5A:
			// Full-width letters and digits (not the full-width
			// punctuation of CJK text).
			emit(byte(r-0xFEE0), i)
			changed = true
		case invisibleInWord(r) && i > 0 && letterBefore(t, i) && i+n < len(t) && isASCIILetter(t[i+n]):
			changed = true
		case confusables[r] != 0 && (letterBefore(t, i) || i+n < len(t) && isASCIILetter(t[i+n])):
			emit(confusables[r], i)
			changed = true
		default:
			for k := 0; k < n; k++ {
				emit(t[i+k], i)
			}
		}
		i += n
	}
	off = append(off, int32(len(t)))
	return folded, off, changed
}

func mayFold(t []byte) bool {
	for _, c := range t {
		switch {
		case c >= utf8.RuneSelf, c == '&', c == '%' || c == '\\':
			return true
		case c == '<' || c == '*' || c == '_' || c == '-':
			return true
		}
	}
	return false
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func letterBefore(t []byte, i int) bool {
	return i > 0 && isASCIILetter(t[i-1])
}

func invisibleInWord(r rune) bool {
	switch r {
	case 0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E:
		return true
	}
	return false
}

// confusables are Cyrillic and Greek letters a reader takes for Latin ones.
var confusables = map[rune]byte{
	'а': 'a', 'А': 'A', 'е': 'e', 'Е': 'E', 'о': 'o', 'О': 'O', 'р': 'p', 'Р': 'P',
	'с': 'c', 'С': 'C', 'у': 'y', 'х': 'x', 'Х': 'X', 'і': 'i', 'І': 'I', 'ѕ': 's',
	'Ѕ': 'S', 'ј': 'j', 'Ј': 'J', 'к': 'k', 'К': 'K', 'М': 'M', 'Н': 'H', 'Т': 'T',
	'В': 'B', 'ԁ': 'd', 'ɡ': 'g', 'ο': 'o', 'Ο': 'O', 'α': 'a', 'Α': 'A', 'ε': 'e',
	'Ε': 'E', 'ρ': 'p', 'Ρ': 'P', 'ν': 'v', 'Ν': 'N', 'τ': 't', 'Τ': 'T', 'Ι': 'I',
	'ι': 'i', 'Κ': 'K', 'Μ': 'M',
}

// charRef reads an HTML character reference at the start of b: &#NN;,
// &#xHH; or a few named ones; n is 0 when there is none.
func charRef(b []byte) (rune, int) {
	if len(b) < 3 || b[0] != '&' {
		return 0, 0
	}
	for _, e := range [...]struct {
		name string
		r    rune
	}{{"&lt;", '<'}, {"&gt;", '>'}} {
		if len(b) >= len(e.name) && string(b[:len(e.name)]) == e.name {
			return e.r, len(e.name)
		}
	}
	if b[1] != '#' {
		return 0, 0
	}
	k, base := 2, 10
	if k < len(b) && (b[k] == 'x' || b[k] == 'X') {
		k, base = 3, 16
	}
	var r rune
	start := k
	for k < len(b) && k-start < 7 {
		d := hexVal(b[k])
		if d < 0 || d >= base {
			break
		}
		r = r*rune(base) + rune(d)
		k++
	}
	if k == start || k >= len(b) || b[k] != ';' && !(k < len(b) && isASCIILetter(b[k])) {
		return 0, 0
	}
	if b[k] == ';' {
		k++
	}
	return r, k
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}

// escapeAt reads one %XX or \xNN escape at the start of b.
func escapeAt(b []byte) (byte, int) {
	switch {
	case len(b) >= 3 && b[0] == '%' && hexVal(b[1]) >= 0 && hexVal(b[2]) >= 0:
		return byte(hexVal(b[1])<<4 | hexVal(b[2])), 3
	case len(b) >= 4 && b[0] == '\\' && b[1] == 'x' && hexVal(b[2]) >= 0 && hexVal(b[3]) >= 0:
		return byte(hexVal(b[2])<<4 | hexVal(b[3])), 4
	}
	return 0, 0
}

// escapeRun returns the length of a run at the start of b that holds
// eight or more escapes of printable ASCII, with plain letters and digits
// between them, or 0.
func escapeRun(b []byte) int {
	n, k, end := 0, 0, 0
	for k < len(b) && k < 4096 {
		if c, m := escapeAt(b[k:]); m > 0 {
			if c < ' ' || c >= 0x7f {
				break
			}
			n++
			k += m
			end = k
			continue
		}
		if kind[b[k]] == kLetter || kind[b[k]] == kDigit || b[k] == '.' || b[k] == '-' {
			k++
			continue
		}
		break
	}
	if n < 8 {
		return 0
	}
	return end
}

// innerTag returns the end of an HTML tag at i that stands between two
// letters of a word (Ig</b>nore), or i.
func innerTag(t []byte, i int) int {
	if !letterBefore(t, i) {
		return i
	}
	k := i + 1
	if k < len(t) && t[k] == '/' {
		k++
	}
	a := k
	for k < len(t) && k-a < 10 && isASCIILetter(t[k]) {
		k++
	}
	if k == a || k >= len(t) || t[k] != '>' || k+1 >= len(t) || !isASCIILetter(t[k+1]) {
		return i
	}
	return k + 1
}

// innerMark returns, for an emphasis mark '*' at i that opens emphasis
// inside a word with its closing mark in the same word (I*gnore*,
// *Ig*nore, Ig*no*re), the closing mark's offset; else i. CommonMark
// takes a '*' between letters as emphasis (Ig*no*re renders as "Ignore"),
// unlike a '_' (snake_case_words), which fold leaves alone.
func innerMark(t []byte, i int) int {
	c := t[i]
	j := i + 1
	for j < len(t) && j-i < 32 && isASCIILetter(t[j]) {
		j++
	}
	if j == i+1 || j >= len(t) || t[j] != c {
		return i
	}
	before := letterBefore(t, i)
	after := j+1 < len(t) && isASCIILetter(t[j+1])
	if !before && !after {
		// Ordinary *emphasis* of a whole word: nothing to join.
		return i
	}
	return j
}

// splitWord reports whether the hyphen at i splits a trigger word in two
// (Ig-nore, dis-regard): joined, the letters around it are one.
func splitWord(t []byte, i int) bool {
	if !letterBefore(t, i) || i+1 >= len(t) || !isASCIILetter(t[i+1]) {
		return false
	}
	// The letters either side of the hyphen stand next to each other in
	// the joined word: most pairs are in no trigger.
	if !triggerPair[t[i-1]&31][t[i+1]&31] {
		return false
	}
	a := i
	for a > 0 && i-a < 16 && isASCIILetter(t[a-1]) {
		a--
	}
	b := i + 1
	for b < len(t) && b-i < 16 && isASCIILetter(t[b]) {
		b++
	}
	if a > 0 && (t[a-1] == '-' || isASCIILetter(t[a-1])) || b < len(t) && t[b] == '-' {
		return false
	}
	// The letters around the hyphen are at most 16 on each side: n < 64.
	n := b - a - 1
	if lenMask[t[a]&31][t[b-1]&31]&(1<<n) == 0 {
		return false
	}
	var w [32]byte
	copy(w[:], t[a:i])
	copy(w[i-a:], t[i+1:b])
	word := w[:n]
	for _, tr := range triggers[lower(word[0])-'a'] {
		if len(tr.word) == n && eqFold(word, tr.word) {
			return true
		}
	}
	return false
}

// triggerPair[x&31][y&31] is set when letter y follows letter x in some
// trigger word (either case); filled with triggers.
var triggerPair [32][32]bool

// foldAt looks at t[i], a byte fold may change from (foldSkip 0), and
// returns whether fold changes the text there, and how far on the next
// such place may start (past a character reference, an escape run or a
// rune).
func foldAt(t []byte, i int) (adv int, hit bool) {
	c := t[i]
	if c < utf8.RuneSelf {
		n := 0
		switch c {
		case '&':
			if r, m := charRef(t[i:]); m > 0 && r < utf8.RuneSelf {
				n = m
			}
		case '%', '\\':
			n = escapeRun(t[i:])
		case '<':
			n = innerTag(t, i) - i
		case '*':
			n = innerMark(t, i) - i
		case '-':
			if splitWord(t, i) {
				n = 1
			}
		}
		if n > 0 {
			return n, true
		}
		return 1, false
	}
	r, n := utf8.DecodeRune(t[i:])
	switch {
	case r >= 0xFF10 && r <= 0xFF5A,
		invisibleInWord(r) && letterBefore(t, i) && i+n < len(t) && isASCIILetter(t[i+n]),
		(r >= 0x0370 && r < 0x0530 || r == 0x0261) && confusables[r] != 0 && (letterBefore(t, i) || i+n < len(t) && isASCIILetter(t[i+n])):
		return n, true
	}
	return n, false
}

// foldSegs are the stretches of a text fold is applied to: the lines
// around each place fold changes, about 512 bytes either side, merged.
// The scan's main pass adds the places in order (foldAt).
type foldSegs struct {
	segs    [][2]int
	longest int
}

func (f *foldSegs) add(t []byte, p int) {
	a := max(0, p-512)
	if nl := bytes.LastIndexByte(t[max(0, a-256):a], '\n'); nl >= 0 {
		a = max(0, a-256) + nl + 1
	}
	b := min(len(t), p+512)
	if nl := bytes.IndexByte(t[b:min(len(t), b+256)], '\n'); nl >= 0 {
		b += nl + 1
	}
	if k := len(f.segs); k > 0 && a <= f.segs[k-1][1] {
		f.segs[k-1][1] = max(f.segs[k-1][1], b)
		f.longest = max(f.longest, f.segs[k-1][1]-f.segs[k-1][0])
		return
	}
	f.segs = append(f.segs, [2]int{a, b})
	f.longest = max(f.longest, b-a)
}

// foldSkip[b] is, for a byte that starts nothing fold changes, how far to
// skip (1, or a rune's length for a lead byte of none of the runes it
// folds); 0 for a byte to look at.
var foldSkip = func() (k [256]uint8) {
	for b := 0; b < 256; b++ {
		switch {
		case b < 0x80:
			k[b] = 1
		case b < 0xC0:
			k[b] = 1 // a continuation byte (of invalid text)
		case b < 0xE0:
			k[b] = 2
		case b < 0xF0:
			k[b] = 3
		default:
			k[b] = 4
		}
	}
	for _, b := range "&%\\<*-" {
		k[b] = 0
	}
	// Lead bytes of U+00AD, U+0261, U+0370–U+052F, U+180E, U+200B–U+2060,
	// U+FEFF and U+FF10–U+FF5A.
	for _, b := range []byte{0xC2, 0xC9, 0xCD, 0xCE, 0xCF, 0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xE1, 0xE2, 0xEF} {
		k[b] = 0
	}
	return k
}()
