// Package strictjson reads one JSON document strictly into a tree that
// keeps the byte offset of every value and object key, so that whoever
// checks the tree can name the line and column of what is wrong.
//
// It is the one reader of the files a person or a repository writes:
// configuration files and policy files. Strict means: RFC 8259 syntax and
// nothing more (no comments, no trailing commas, no byte order mark), one
// value and nothing after it, strings of valid UTF-8, no object key twice
// (a hostile file cannot hide a second "decision" behind the first), and a
// bounded depth. Which keys an object may have, and the types of their
// values, is the caller's to check on the tree.
//
// It is pure: no I/O, no state.
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds of JSON values.
const (
	Null Kind = iota
	Bool
	Number
	String
	Object
	List
)

// String names the kind as error messages do: "null", "boolean",
// "number", "string", "object", "list".
func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Object:
		return "object"
	case List:
		return "list"
	}
	return "kind " + strconv.Itoa(int(k))
}

// Value is one JSON value and where it starts.
type Value struct {
	// Off is the byte offset of the value's first byte in the document.
	Off  int
	Kind Kind
	// Str is a String's decoded text, or a Number's literal as written
	// (valid JSON number syntax, e.g. "1", "-0.5e3").
	Str  string
	Bool bool
	// Members are an Object's keys and values, in the order written.
	Members []Member
	// Elems are a List's elements.
	Elems []Value
}

// Member is one key of an object and its value.
type Member struct {
	Key    string
	KeyOff int // byte offset of the key's opening quote
	Value  Value
}

// Get returns the member of an Object with the given key.
func (v *Value) Get(key string) (*Member, bool) {
	for i := range v.Members {
		if v.Members[i].Key == key {
			return &v.Members[i], true
		}
	}
	return nil, false
}

// Error is a document that is not strict JSON, at byte offset Offset. Err
// is ErrUnexpectedEnd, ErrTrailingData, or a description of the fault.
type Error struct {
	Offset int
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() + " at offset " + strconv.Itoa(e.Offset) }
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrUnexpectedEnd is a document that stops inside a value.
	ErrUnexpectedEnd = errors.New("unexpected end of file")
	// ErrTrailingData is anything but white space after the value;
	// callers say after what ("after the policy object").
	ErrTrailingData = errors.New("trailing data after the top-level value")
)

// MaxDepth bounds how deeply lists and objects may nest, as encoding/json
// does, so that a hostile file cannot run the reader out of stack.
const MaxDepth = 10000

// Parse reads src, which must hold exactly one JSON value (white space
// around it aside). Every error is an *Error.
func Parse(src []byte) (*Value, error) {
	p := &parser{src: src}
	v := new(Value)
	i, err := p.value(p.ws(0), v, 0)
	if err != nil {
		return nil, err
	}
	if i = p.ws(i); i < len(src) {
		return nil, &Error{Offset: i, Err: ErrTrailingData}
	}
	return v, nil
}

// Position returns the 1-based line and column (in characters) of byte
// offset off of src, as an editor shows them.
func Position(src []byte, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	line = bytes.Count(src[:off], []byte("\n")) + 1
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, utf8.RuneCount(src[start:off]) + 1
}

type parser struct {
	src []byte
	// members and elems are stacks of the objects and lists being read;
	// a finished one is copied out to an arena, so that the tree is built
	// from few allocations whatever its shape.
	members []Member
	elems   []Value
	marena  []Member
	earena  []Value
	// keys holds each distinct key once, so that a thousand rules do not
	// allocate "id" a thousand times.
	keys map[string]string
}

// ws returns the offset of the first byte at or after i that is not JSON
// white space.
func (p *parser) ws(i int) int {
	for i < len(p.src) {
		switch p.src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (p *parser) syntax(i int, context string) error {
	if i >= len(p.src) {
		return &Error{Offset: len(p.src), Err: ErrUnexpectedEnd}
	}
	return &Error{Offset: i, Err: fmt.Errorf("invalid character %s %s", quoteChar(p.src[i:]), context)}
}

// quoteChar shows the character starting at b, as encoding/json's errors
// do ('x', '"', '\n').
func quoteChar(b []byte) string {
	r, _ := utf8.DecodeRune(b)
	switch r {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.QuoteRune(r)
	return "'" + s[1:len(s)-1] + "'"
}

// value reads the value starting at i (past white space) into v and
// returns the offset just past it.
func (p *parser) value(i int, v *Value, depth int) (int, error) {
	src := p.src
	if i >= len(src) {
		return i, p.syntax(i, "")
	}
	v.Off = i
	switch c := src[i]; {
	case c == '{':
		return p.object(i, v, depth+1)
	case c == '[':
		return p.list(i, v, depth+1)
	case c == '"':
		v.Kind = String
		s, j, err := p.str(i)
		v.Str = s
		return j, err
	case c == '-' || (c >= '0' && c <= '9'):
		v.Kind = Number
		j, err := p.number(i)
		if err != nil {
			return j, err
		}
		v.Str = string(src[i:j])
		return j, nil
	case c == 't':
		v.Kind, v.Bool = Bool, true
		return p.literal(i, "true")
	case c == 'f':
		v.Kind = Bool
		return p.literal(i, "false")
	case c == 'n':
		v.Kind = Null
		return p.literal(i, "null")
	}
	return i, p.syntax(i, "looking for beginning of value")
}

func (p *parser) literal(i int, lit string) (int, error) {
	for k := 1; k < len(lit); k++ {
		j := i + k
		if j >= len(p.src) {
			return j, p.syntax(j, "")
		}
		if p.src[j] != lit[k] {
			return j, p.syntax(j, fmt.Sprintf("in literal %s (expecting %s)", lit, quoteChar([]byte{lit[k]})))
		}
	}
	return i + len(lit), nil
}

func (p *parser) object(i int, v *Value, depth int) (int, error) {
	if depth > MaxDepth {
		return i, &Error{Offset: i, Err: fmt.Errorf("nested more than %d deep", MaxDepth)}
	}
	v.Kind = Object
	base := len(p.members)
	defer func() { p.members = p.members[:base] }()
	i = p.ws(i + 1)
	if i < len(p.src) && p.src[i] == '}' {
		return i + 1, nil
	}
	var seen map[string]bool
	for {
		if i >= len(p.src) || p.src[i] != '"' {
			return i, p.syntax(i, "looking for beginning of object key string")
		}
		koff := i
		key, j, err := p.key(i)
		if err != nil {
			return j, err
		}
		if seen != nil {
			if seen[key] {
				return koff, dupKey(koff, key)
			}
			seen[key] = true
		} else {
			for k := base; k < len(p.members); k++ {
				if p.members[k].Key == key {
					return koff, dupKey(koff, key)
				}
			}
			if len(p.members)-base == linearKeys {
				// Past a few keys, a set: an object of many keys is
				// checked in linear time, not quadratic.
				seen = make(map[string]bool, 2*linearKeys)
				for _, m := range p.members[base:] {
					seen[m.Key] = true
				}
				seen[key] = true
			}
		}
		if i = p.ws(j); i >= len(p.src) || p.src[i] != ':' {
			return i, p.syntax(i, "after object key")
		}
		p.members = append(p.members, Member{Key: key, KeyOff: koff})
		n := len(p.members) - 1
		var val Value
		if i, err = p.value(p.ws(i+1), &val, depth); err != nil {
			return i, err
		}
		p.members[n].Value = val
		if i = p.ws(i); i < len(p.src) && p.src[i] == ',' {
			i = p.ws(i + 1)
			continue
		}
		if i < len(p.src) && p.src[i] == '}' {
			v.Members = p.outMembers(p.members[base:])
			return i + 1, nil
		}
		return i, p.syntax(i, "after object key:value pair")
	}
}

func (p *parser) list(i int, v *Value, depth int) (int, error) {
	if depth > MaxDepth {
		return i, &Error{Offset: i, Err: fmt.Errorf("nested more than %d deep", MaxDepth)}
	}
	v.Kind = List
	base := len(p.elems)
	defer func() { p.elems = p.elems[:base] }()
	i = p.ws(i + 1)
	if i < len(p.src) && p.src[i] == ']' {
		return i + 1, nil
	}
	for {
		var val Value
		var err error
		if i, err = p.value(i, &val, depth); err != nil {
			return i, err
		}
		p.elems = append(p.elems, val)
		if i = p.ws(i); i < len(p.src) && p.src[i] == ',' {
			i = p.ws(i + 1)
			continue
		}
		if i < len(p.src) && p.src[i] == ']' {
			v.Elems = p.outElems(p.elems[base:])
			return i + 1, nil
		}
		return i, p.syntax(i, "after array element")
	}
}

// linearKeys is how many keys of an object are checked for repeats by
// comparing each with each.
const linearKeys = 16

func dupKey(off int, key string) error {
	return &Error{Offset: off, Err: fmt.Errorf("the key %q appears twice", key)}
}

// arenaSize is how many members (or elements) one arena allocation holds.
const arenaSize = 512

func (p *parser) outMembers(ms []Member) []Member {
	n := len(ms)
	if n > arenaSize/4 {
		return append([]Member(nil), ms...)
	}
	if cap(p.marena)-len(p.marena) < n {
		p.marena = make([]Member, 0, arenaSize)
	}
	l := len(p.marena)
	p.marena = append(p.marena, ms...)
	return p.marena[l : l+n : l+n]
}

func (p *parser) outElems(es []Value) []Value {
	n := len(es)
	if n > arenaSize/4 {
		return append([]Value(nil), es...)
	}
	if cap(p.earena)-len(p.earena) < n {
		p.earena = make([]Value, 0, arenaSize)
	}
	l := len(p.earena)
	p.earena = append(p.earena, es...)
	return p.earena[l : l+n : l+n]
}

// key reads an object key, keeping one copy of each distinct key.
func (p *parser) key(i int) (string, int, error) {
	j, plain := p.strEnd(i)
	if !plain || j >= len(p.src) {
		return p.str(i)
	}
	b := p.src[i+1 : j]
	if s, ok := p.keys[string(b)]; ok {
		return s, j + 1, nil
	}
	if p.keys == nil {
		p.keys = make(map[string]string)
	}
	s := string(b)
	p.keys[s] = s
	return s, j + 1, nil
}

// strEnd returns the offset of the closing quote of the string opening at
// i when the string is plain: printable ASCII without escapes. Otherwise
// it returns where it stopped and false.
func (p *parser) strEnd(i int) (int, bool) {
	src := p.src
	for j := i + 1; j < len(src); j++ {
		c := src[j]
		if c == '"' {
			return j, true
		}
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return j, false
		}
	}
	return len(src), false
}

// str reads the string opening at i and returns its text and the offset
// just past its closing quote.
func (p *parser) str(i int) (string, int, error) {
	j, plain := p.strEnd(i)
	if plain {
		return string(p.src[i+1 : j]), j + 1, nil
	}
	src := p.src
	buf := make([]byte, 0, j-i+16)
	buf = append(buf, src[i+1:j]...)
	for j < len(src) {
		c := src[j]
		switch {
		case c == '"':
			return string(buf), j + 1, nil
		case c < 0x20:
			return "", j, p.syntax(j, "in string literal")
		case c == '\\':
			if j+1 >= len(src) {
				return "", j + 1, p.syntax(j+1, "")
			}
			switch e := src[j+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, k, err := p.hex4(j + 2)
				if err != nil {
					return "", k, err
				}
				j = k
				if utf16.IsSurrogate(r) {
					// A pair makes one character; a lone half is
					// shown as U+FFFD, as encoding/json does.
					if j+1 < len(src) && src[j] == '\\' && src[j+1] == 'u' {
						if r2, k2, err := p.hex4(j + 2); err == nil {
							if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
								buf = utf8.AppendRune(buf, d)
								j = k2
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
				continue
			default:
				return "", j + 1, p.syntax(j+1, "in string escape code")
			}
			j += 2
		case c < 0x80:
			buf = append(buf, c)
			j++
		default:
			r, size := utf8.DecodeRune(src[j:])
			if r == utf8.RuneError && size <= 1 {
				return "", j, &Error{Offset: j, Err: errors.New("invalid UTF-8 in string")}
			}
			buf = append(buf, src[j:j+size]...)
			j += size
		}
	}
	return "", len(src), p.syntax(len(src), "")
}

// hex4 reads the four hex digits of a \u escape starting at i.
func (p *parser) hex4(i int) (rune, int, error) {
	var r rune
	for k := i; k < i+4; k++ {
		if k >= len(p.src) {
			return 0, k, p.syntax(k, "")
		}
		c := p.src[k]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, k, p.syntax(k, "in \\u hexadecimal character escape")
		}
		r = r<<4 | rune(c)
	}
	return r, i + 4, nil
}

// number checks the number starting at i and returns the offset just past
// it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number(i int) (int, error) {
	src := p.src
	digits := func(j int) int {
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
		return j
	}
	if src[i] == '-' {
		i++
	}
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case i < len(src) && src[i] >= '1' && src[i] <= '9':
		i = digits(i + 1)
	default:
		return i, p.syntax(i, "in numeric literal")
	}
	if i < len(src) && src[i] == '.' {
		if i+1 >= len(src) || src[i+1] < '0' || src[i+1] > '9' {
			return i + 1, p.syntax(i+1, "after decimal point in numeric literal")
		}
		i = digits(i + 1)
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) || src[i] < '0' || src[i] > '9' {
			return i, p.syntax(i, "in exponent of numeric literal")
		}
		i = digits(i)
	}
	return i, nil
}
