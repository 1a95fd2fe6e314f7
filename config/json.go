package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// node is a JSON value with the byte offset it starts at, so that every
// error names the line and column of what is wrong.
type node struct {
	off  int
	kind string // "object", "list", "string", "number", "boolean", "null"
	str  string
	num  json.Number
	b    bool
	keys []string
	koff []int
	vals []*node // object values (same order as keys) or list elements
}

// get returns the value of key in an object node.
func (n *node) get(key string) (*node, int, bool) {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i], n.koff[i], true
		}
	}
	return nil, 0, false
}

type reader struct {
	path string
	src  []byte
	dec  *json.Decoder
}

// Error is a configuration file that cannot be used, at the position of the
// fault (Line 0 when unknown).
type Error struct {
	Path string
	Line int // 1-based
	Col  int // 1-based, in characters
	Key  string
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col))
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// errAt returns an Error at byte offset off.
func (r *reader) errAt(off int, key string, err error) *Error {
	e := &Error{Path: r.path, Key: key, Err: err}
	e.Line, e.Col = position(r.src, off)
	return e
}

// parseJSON reads src into a node tree; a syntax error names its position.
func parseJSON(path string, src []byte) (*node, error) {
	r := &reader{path: path, src: src, dec: json.NewDecoder(bytes.NewReader(src))}
	r.dec.UseNumber()
	n, err := r.value()
	if err != nil {
		return nil, err
	}
	off := r.next()
	if _, err := r.dec.Token(); err != io.EOF {
		return nil, r.errAt(off, "", errors.New("trailing data after the configuration object"))
	}
	return n, nil
}

// next is the offset of the next token: past spaces, ':' and ','.
func (r *reader) next() int {
	off := int(r.dec.InputOffset())
	for off < len(r.src) {
		switch r.src[off] {
		case ' ', '\t', '\n', '\r', ':', ',':
			off++
			continue
		}
		break
	}
	return off
}

func (r *reader) token() (json.Token, int, error) {
	off := r.next()
	t, err := r.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			var v any
			if err2 := json.Unmarshal(r.src, &v); errors.As(err2, &se) {
				err = err2
			}
			return nil, 0, r.errAt(int(se.Offset)-1, "", err)
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, 0, r.errAt(len(r.src), "", errors.New("unexpected end of file"))
		}
		return nil, 0, r.errAt(off, "", err)
	}
	return t, off, nil
}

func (r *reader) value() (*node, error) {
	t, off, err := r.token()
	if err != nil {
		return nil, err
	}
	n := &node{off: off}
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			n.kind = "object"
			for r.dec.More() {
				kt, koff, err := r.token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				if _, _, dup := n.get(k); dup {
					return nil, r.errAt(koff, "", fmt.Errorf("the key %q appears twice", k))
				}
				val, err := r.value()
				if err != nil {
					return nil, err
				}
				n.keys, n.koff, n.vals = append(n.keys, k), append(n.koff, koff), append(n.vals, val)
			}
		case '[':
			n.kind = "list"
			for r.dec.More() {
				val, err := r.value()
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, val)
			}
		}
		if _, _, err := r.token(); err != nil { // the closing delimiter
			return nil, err
		}
	case string:
		n.kind, n.str = "string", v
	case json.Number:
		n.kind, n.num = "number", v
	case bool:
		n.kind, n.b = "boolean", v
	case nil:
		n.kind = "null"
	}
	return n, nil
}

// position returns the 1-based line and column (in characters) of byte off.
func position(src []byte, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	line = bytes.Count(src[:off], []byte("\n")) + 1
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, utf8.RuneCount(src[start:off]) + 1
}
