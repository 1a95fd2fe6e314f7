package resolve

import (
	"bytes"
	"errors"
	"strings"
)

// The syntax of git's configuration files, read as git's own parser
// (config.c, git_parse_source) reads them, so that what the gate judges is
// what git will run: a leading UTF-8 byte order mark is skipped, CR LF is
// LF, a section header is [name] or [name "subsection"] with backslash
// escapes in the subsection, a key may follow its header on the same
// line, a value may be quoted in parts, and a backslash at the end of a
// line continues the value on the next. A file git would refuse is an
// error: git then stops before running anything, and the gate asks. So is
// one holding a NUL byte.

// errGitConfig: a configuration git's parser refuses.
var errGitConfig = errors.New("git config: bad syntax")

// gitConfigVar is one variable a configuration file sets: its section
// (lower-cased, up to the first dot; "" for a key before any header,
// which no lookup finds), subsection (as written; "" when none), key
// (lower-cased) and value. hasValue is false for a key with no
// "=" (a boolean true).
type gitConfigVar struct {
	section, subsection, key, value string
	hasValue                        bool
}

// parseGitConfig calls fn for each variable of the configuration text b,
// in order, and returns errGitConfig when git would not read b whole.
func parseGitConfig(b []byte, fn func(gitConfigVar)) error {
	if bytes.IndexByte(b, 0) >= 0 {
		// git reads names and values as C strings, cut at a NUL: what
		// follows one is not worth modelling, and the gate asks.
		return errGitConfig
	}
	p := gitConfigParser{b: b}
	if strings.HasPrefix(string(b), "\xef\xbb\xbf") {
		p.i = 3
	} else if len(b) > 0 && b[0] == 0xef {
		return errGitConfig // a partial byte order mark
	}
	var section, subsection string
	comment := false
	for {
		c, eof := p.next()
		if c == '\n' {
			if eof {
				return nil
			}
			comment = false
			continue
		}
		switch {
		case comment, isGitSpace(c):
			continue
		case c == '#' || c == ';':
			comment = true
			continue
		case c == '[':
			var ok bool
			section, subsection, ok = p.header()
			if !ok {
				return errGitConfig
			}
			continue
		case !isAlpha(c):
			return errGitConfig
		}
		v, ok := p.variable(c)
		if !ok {
			return errGitConfig
		}
		v.section, v.subsection = section, subsection
		if i := strings.IndexByte(section, '.'); i >= 0 {
			// [section.sub], the old form: lower-cased, and the
			// subsection is what follows the first dot.
			v.section, v.subsection = section[:i], section[i+1:]
		}
		fn(v)
	}
}

type gitConfigParser struct {
	b []byte
	i int
}

// next returns the next byte, CR LF read as LF, and LF with eof set at the
// end of the text (git's get_next_char).
func (p *gitConfigParser) next() (c byte, eof bool) {
	if p.i >= len(p.b) {
		return '\n', true
	}
	c = p.b[p.i]
	p.i++
	if c == '\r' && p.i < len(p.b) && p.b[p.i] == '\n' {
		p.i++
		c = '\n'
	}
	return c, false
}

// header reads a section header after its "[" (get_base_var and
// get_extended_base_var): the name lower-cased, with dots, and the quoted
// subsection.
func (p *gitConfigParser) header() (name, sub string, ok bool) {
	var nb strings.Builder
	for {
		c, eof := p.next()
		switch {
		case eof:
			return "", "", false
		case c == ']':
			return nb.String(), "", nb.Len() > 0
		case isGitSpace(c):
			s, ok := p.subsection(c)
			return nb.String(), s, ok && nb.Len() > 0
		case !isKeyChar(c) && c != '.':
			return "", "", false
		}
		nb.WriteByte(lower(c))
	}
}

// subsection reads ` "subsection"]` after the name; c is the first blank.
func (p *gitConfigParser) subsection(c byte) (string, bool) {
	for isGitSpace(c) {
		if c == '\n' {
			return "", false
		}
		c, _ = p.next()
	}
	if c != '"' {
		return "", false
	}
	var sb strings.Builder
	for {
		c, _ := p.next()
		switch c {
		case '\n':
			return "", false
		case '"':
			if end, _ := p.next(); end != ']' {
				return "", false
			}
			return sb.String(), true
		case '\\':
			if c, _ = p.next(); c == '\n' {
				return "", false
			}
		}
		sb.WriteByte(c)
	}
}

// variable reads a key whose first letter is c, and its value (get_value,
// parse_value).
func (p *gitConfigParser) variable(c byte) (gitConfigVar, bool) {
	var kb strings.Builder
	kb.WriteByte(lower(c))
	var eof bool
	for {
		c, eof = p.next()
		if eof || !isKeyChar(c) {
			break
		}
		kb.WriteByte(lower(c))
	}
	for c == ' ' || c == '\t' {
		c, _ = p.next()
	}
	v := gitConfigVar{key: kb.String()}
	if c == '\n' {
		return v, true
	}
	if c != '=' {
		return v, false
	}
	v.hasValue = true
	var vb strings.Builder
	quote, comment, space := false, false, 0
	for {
		c, _ := p.next()
		if c == '\n' {
			if quote {
				return v, false
			}
			v.value = vb.String()
			return v, true
		}
		if comment {
			continue
		}
		if isGitSpace(c) && !quote {
			if vb.Len() > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			vb.WriteByte(' ')
		}
		switch c {
		case '\\':
			c, _ = p.next()
			switch c {
			case '\n':
				continue // the value goes on on the next line
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return v, false
			}
		case '"':
			quote = !quote
			continue
		}
		vb.WriteByte(c)
	}
}

// isGitSpace is git's own isspace (git-compat-util.h, sane_ctype): space,
// tab, LF and CR, not C's vertical tab or form feed.
func isGitSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isKeyChar is git's iskeychar: a letter, a digit or "-".
func isKeyChar(c byte) bool { return isAlpha(c) || '0' <= c && c <= '9' || c == '-' }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
