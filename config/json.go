package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/custom-agent/custom-agent/support/strictjson"
)

// reader checks one configuration file, read by strictjson into a tree of
// values that know their offsets, so that every error names the line and
// column of what is wrong.
type reader struct {
	path string
	src  []byte
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
	e.Line, e.Col = strictjson.Position(r.src, off)
	return e
}

// parse reads the file into a tree; a syntax error names its position.
func (r *reader) parse() (*strictjson.Value, error) {
	v, err := strictjson.Parse(r.src)
	var se *strictjson.Error
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, strictjson.ErrTrailingData) && errors.As(err, &se):
		return nil, r.errAt(se.Offset, "", errors.New("trailing data after the configuration object"))
	case errors.As(err, &se):
		return nil, r.errAt(se.Offset, "", se.Err)
	}
	return nil, &Error{Path: r.path, Err: err}
}

func (r *reader) typeErr(v *strictjson.Value, key, want string) error {
	return r.errAt(v.Off, key, fmt.Errorf("%s is not %s", v.Kind, want))
}

func (r *reader) object(v *strictjson.Value, key string) error {
	if v.Kind != strictjson.Object {
		return r.typeErr(v, key, "an object")
	}
	return nil
}

func (r *reader) str(v *strictjson.Value, key string) (string, error) {
	if v.Kind != strictjson.String {
		return "", r.typeErr(v, key, "a string")
	}
	return v.Str, nil
}

func (r *reader) int(v *strictjson.Value, key string) (int, error) {
	if v.Kind != strictjson.Number {
		return 0, r.typeErr(v, key, "a number")
	}
	i, err := strconv.Atoi(v.Str)
	if err != nil {
		return 0, r.errAt(v.Off, key, fmt.Errorf("%s is not a whole number", v.Str))
	}
	return i, nil
}

func (r *reader) strings(v *strictjson.Value, key string) ([]string, error) {
	if v.Kind != strictjson.List {
		return nil, r.typeErr(v, key, "a list of strings")
	}
	out := []string{}
	for i := range v.Items {
		s, err := r.str(&v.Items[i].Value, key+"["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (r *reader) stringMap(v *strictjson.Value, key string) (map[string]string, error) {
	if err := r.object(v, key); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := range v.Items {
		m := &v.Items[i]
		s, err := r.str(&m.Value, key+"."+m.Key)
		if err != nil {
			return nil, err
		}
		out[m.Key] = s
	}
	return out, nil
}
