package fs

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// sniffLen is how much of a file is looked at to tell text from binary.
const sniffLen = 8 << 10

// binaryReason returns why the first bytes of a file (at most sniffLen of
// them; full says the file continues past them) look binary, or "" for text:
// a NUL byte, or bytes that are not UTF-8. A rune cut by the end of the
// sample is not held against the file.
func binaryReason(head []byte, full bool) string {
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return fmt.Sprintf("a NUL byte at offset %d", i)
	}
	if full {
		head = trimPartialRune(head)
	}
	if !utf8.Valid(head) {
		for i := 0; i < len(head); {
			r, n := utf8.DecodeRune(head[i:])
			if r == utf8.RuneError && n <= 1 {
				return fmt.Sprintf("bytes that are not UTF-8 at offset %d", i)
			}
			i += n
		}
	}
	return ""
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// cutUTF8 returns the longest prefix of b of at most n bytes that does not
// end inside a rune.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return trimPartialRune(b[:n])
}

// printable returns b as a string with invalid UTF-8 replaced by U+FFFD, so
// that what the model sees is always text.
func printable(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}
