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
	// Str is a String's decoded text, or a Number's literal as written
	// (valid JSON number syntax, e.g. "1", "-0.5e3").
	Str string
	// Items are an Object's members, in the order written, or a List's
	// elements (members without a key). One field for both keeps a
	// Value small: a policy file of a thousand rules is several
	// thousand of them.
	Items []Member
	// Off is the byte offset of the value's first byte in the document.
	Off  int
	Kind Kind
	Bool bool
}

// Member is one key of an object and its value, or one element of a list
// (Key "", KeyOff the element's offset).
type Member struct {
	Key    string
	KeyOff int // byte offset of the key's opening quote
	Value  Value
}

// Get returns the member of an Object with the given key.
func (v *Value) Get(key string) (*Member, bool) {
	if v.Kind != Object {
		return nil, false
	}
	for i := range v.Items {
		if v.Items[i].Key == key {
			return &v.Items[i], true
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
	v, i, err := p.value(p.ws(0), 0)
	if err != nil {
		return nil, err
	}
	if i = p.ws(i); i < len(src) {
		return nil, &Error{Offset: i, Err: ErrTrailingData}
	}
	return &v, nil
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
	// members are the arenas of the objects' and lists' items at each
	// depth.
	members []*[]Member
	// keys holds each distinct key once, so that a thousand rules do not
	// allocate "id" a thousand times.
	keys map[string]string
	// text is src as a string, made once: a string without escapes is
	// a substring of it, so that a document's strings cost one
	// allocation rather than one each.
	text string
}

// plain returns src[i:j] as a string sharing text.
func (p *parser) plain(i, j int) string {
	if p.text == "" {
		p.text = string(p.src)
	}
	return p.text[i:j]
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

// value reads the value starting at i (past white space) and returns it
// and the offset just past it.
func (p *parser) value(i int, depth int) (Value, int, error) {
	src := p.src
	if i >= len(src) {
		return Value{}, i, p.syntax(i, "")
	}
	v := Value{Off: i}
	var err error
	switch c := src[i]; {
	case c == '{':
		v.Kind = Object
		v.Items, i, err = p.object(i, depth+1)
	case c == '[':
		v.Kind = List
		v.Items, i, err = p.list(i, depth+1)
	case c == '"':
		v.Kind = String
		v.Str, i, err = p.str(i)
	case c == '-' || (c >= '0' && c <= '9'):
		v.Kind = Number
		j := i
		if i, err = p.number(i); err == nil {
			v.Str = p.plain(j, i)
		}
	case c == 't':
		v.Kind, v.Bool = Bool, true
		i, err = p.literal(i, "true")
	case c == 'f':
		v.Kind = Bool
		i, err = p.literal(i, "false")
	case c == 'n':
		v.Kind = Null
		i, err = p.literal(i, "null")
	default:
		err = p.syntax(i, "looking for beginning of value")
	}
	return v, i, err
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

func (p *parser) object(i int, depth int) ([]Member, int, error) {
	if depth > MaxDepth {
		return nil, i, &Error{Offset: i, Err: fmt.Errorf("nested more than %d deep", MaxDepth)}
	}
	i = p.ws(i + 1)
	if i < len(p.src) && p.src[i] == '}' {
		return nil, i + 1, nil
	}
	a := arenaAt(&p.members, depth)
	base := len(*a)
	var seen map[string]bool
	for {
		if i >= len(p.src) || p.src[i] != '"' {
			return nil, i, p.syntax(i, "looking for beginning of object key string")
		}
		koff := i
		key, j, err := p.key(i)
		if err != nil {
			return nil, j, err
		}
		if seen != nil {
			if seen[key] {
				return nil, koff, dupKey(koff, key)
			}
			seen[key] = true
		} else {
			for k := base; k < len(*a); k++ {
				if (*a)[k].Key == key {
					return nil, koff, dupKey(koff, key)
				}
			}
			if len(*a)-base == linearKeys {
				// Past a few keys, a set: an object of many keys is
				// checked in linear time, not quadratic.
				seen = make(map[string]bool, 2*linearKeys)
				for _, m := range (*a)[base:] {
					seen[m.Key] = true
				}
				seen[key] = true
			}
		}
		if i = p.ws(j); i >= len(p.src) || p.src[i] != ':' {
			return nil, i, p.syntax(i, "after object key")
		}
		var val Value
		if val, i, err = p.value(p.ws(i+1), depth); err != nil {
			return nil, i, err
		}
		base = room(a, base)
		*a = append(*a, Member{Key: key, KeyOff: koff, Value: val})
		if i = p.ws(i); i < len(p.src) && p.src[i] == ',' {
			i = p.ws(i + 1)
			continue
		}
		if i < len(p.src) && p.src[i] == '}' {
			return (*a)[base:len(*a):len(*a)], i + 1, nil
		}
		return nil, i, p.syntax(i, "after object key:value pair")
	}
}

func (p *parser) list(i int, depth int) ([]Member, int, error) {
	if depth > MaxDepth {
		return nil, i, &Error{Offset: i, Err: fmt.Errorf("nested more than %d deep", MaxDepth)}
	}
	i = p.ws(i + 1)
	if i < len(p.src) && p.src[i] == ']' {
		return nil, i + 1, nil
	}
	a := arenaAt(&p.members, depth)
	base := len(*a)
	for {
		val, j, err := p.value(i, depth)
		if err != nil {
			return nil, j, err
		}
		i = j
		base = room(a, base)
		*a = append(*a, Member{KeyOff: val.Off, Value: val})
		if i = p.ws(i); i < len(p.src) && p.src[i] == ',' {
			i = p.ws(i + 1)
			continue
		}
		if i < len(p.src) && p.src[i] == ']' {
			return (*a)[base:len(*a):len(*a)], i + 1, nil
		}
		return nil, i, p.syntax(i, "after array element")
	}
}

// linearKeys is how many keys of an object are checked for repeats by
// comparing each with each.
const linearKeys = 16

func dupKey(off int, key string) error {
	return &Error{Offset: off, Err: fmt.Errorf("the key %q appears twice", key)}
}

// The members of an object (the elements of a list) are appended to the
// arena of its depth as they are read: at each depth only one object (one
// list) is open at a time, so they lie side by side there and the tree
// takes them as they are, without copying them from a stack.

// arenaAt returns the arena of depth, adding arenas up to it.
// (Each arena is held by pointer: the list of arenas grows as deeper
// containers are read while an outer one holds its own.)
func arenaAt[T any](arenas *[]*[]T, depth int) *[]T {
	for len(*arenas) <= depth {
		*arenas = append(*arenas, new([]T))
	}
	return (*arenas)[depth]
}

// maxChunk bounds the size of one arena allocation.
const maxChunk = 1024

// room makes room in arena a for one more item of the container whose
// items start at base, and returns where they start then: a full arena is
// replaced by a larger one, to which the container's items move (those of
// containers already closed stay where they are).
func room[T any](a *[]T, base int) int {
	if len(*a) < cap(*a) {
		return base
	}
	open := (*a)[base:]
	n := min(max(2*cap(*a), 4), maxChunk) // small at first: a deep document has an arena a level
	n = max(n, 2*len(open))
	fresh := make([]T, len(open), n)
	copy(fresh, open)
	*a = fresh
	return 0
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
	s := p.plain(i+1, j)
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
		return p.plain(i+1, j), j + 1, nil
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
