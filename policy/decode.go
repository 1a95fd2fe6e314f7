package policy

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/custom-agent/custom-agent/support/strictjson"
)

// ruleFields lists a rule's fields, for error messages.
const ruleFields = "id, tool, command, path, url, args, decision, comment, examples"

// read decodes the file strictly, with every error placed at its line and
// column: JSON syntax (support/strictjson: no key twice, valid UTF-8),
// unknown fields, value types, the version. A policy file from a
// repository may be hostile; this is the only reader of it.
func (p *parsed) read() error {
	root, err := parseJSON(p.path, p.src, "policy object")
	if err != nil {
		return err
	}
	if root.Kind != strictjson.Object {
		return p.errorAt(root.Off, "", "", fmt.Errorf("a policy file is a JSON object, not a %s", root.Kind))
	}
	var version *strictjson.Member
	for i := range root.Items {
		m := &root.Items[i]
		switch m.Key {
		case "version":
			version = m
		case "rules":
			if err := p.readRules(&m.Value); err != nil {
				return err
			}
		default:
			return p.errorAt(m.KeyOff, "", "", fmt.Errorf("unknown field %q (a policy file has \"version\" and \"rules\")", m.Key))
		}
	}
	if version == nil {
		return p.errorAt(0, "", "version", fmt.Errorf("missing; write \"version\": %d", Version))
	}
	v, err := wholeNumber(&version.Value)
	if err != nil {
		return p.errorAt(version.Value.Off, "", "version", err)
	}
	if v != Version {
		return p.errorAt(version.KeyOff, "", "version", fmt.Errorf("%s is not supported (this custom-agent reads version %d)", version.Value.Str, Version))
	}
	return nil
}

// parseJSON reads src with support/strictjson, a syntax error as an
// *Error at its position; what is the document's name in the message
// about trailing data ("policy object").
func parseJSON(path string, src []byte, what string) (*strictjson.Value, error) {
	v, err := strictjson.Parse(src)
	if err == nil {
		return v, nil
	}
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return nil, &Error{Path: path, Err: err}
	}
	e := &Error{Path: path, Err: se.Err}
	if errors.Is(err, strictjson.ErrTrailingData) {
		e.Err = errors.New("trailing data after the " + what)
	}
	e.Line, e.Col = strictjson.Position(src, se.Offset)
	return nil, e
}

// wholeNumber returns v as an int, or an error saying what v is instead.
func wholeNumber(v *strictjson.Value) (int, error) {
	if v.Kind != strictjson.Number {
		return 0, fmt.Errorf("%s is not a number", v.Kind)
	}
	n, err := strconv.Atoi(v.Str)
	if err != nil {
		return 0, fmt.Errorf("%s is not a whole number", v.Str)
	}
	return n, nil
}

// readRules decodes the "rules" list, keeping each rule's offset and
// object.
func (p *parsed) readRules(v *strictjson.Value) error {
	if v.Kind != strictjson.List {
		return p.errorAt(v.Off, "", "rules", fmt.Errorf("%s is not a list", v.Kind))
	}
	n := len(v.Items)
	p.ents, p.offs, p.objs = make([]Entry, n), make([]int, n), make([]*strictjson.Value, n)
	for i := range v.Items {
		o := &v.Items[i].Value
		if o.Kind != strictjson.Object {
			return p.errorAt(o.Off, "", "rules["+strconv.Itoa(i)+"]", fmt.Errorf("%s is not an object (a rule)", o.Kind))
		}
		p.offs[i], p.objs[i] = o.Off, o
		if err := decodeRule(&p.ents[i].Rule, o); err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				return p.errorAt(fe.off, ruleID(o), fe.field, fe.err)
			}
			return err
		}
	}
	return nil
}

// fieldError is a fault in one field of a rule, at byte offset off; field
// is empty for an unknown field (named in err).
type fieldError struct {
	off   int
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }

func notA(v *strictjson.Value, field, want string) error {
	return &fieldError{v.Off, field, fmt.Errorf("%s is not %s", v.Kind, want)}
}

// ruleID is the rule's id if it has a string one, so that an error in a
// rule names it.
func ruleID(o *strictjson.Value) string {
	if m, ok := o.Get("id"); ok && m.Value.Kind == strictjson.String {
		return m.Value.Str
	}
	return ""
}

// decodeRule sets *r, which must be zero, to the rule object o. A null
// value is a field left out, as encoding/json reads it.
func decodeRule(r *Rule, o *strictjson.Value) error {
	for i := range o.Items {
		m := &o.Items[i]
		v := &m.Value
		var s *string
		switch m.Key {
		case "id":
			s = &r.ID
		case "tool":
			s = &r.Tool
		case "command":
			s = &r.Command
		case "path":
			s = &r.Path
		case "url":
			s = &r.URL
		case "comment":
			s = &r.Comment
		case "decision":
			s = (*string)(&r.Decision)
		case "args":
			args, err := decodeArgs(v)
			if err != nil {
				return err
			}
			r.Args = args
			continue
		case "examples":
			ex, err := decodeExamples(v)
			if err != nil {
				return err
			}
			r.Examples = ex
			continue
		default:
			return &fieldError{m.KeyOff, "", fmt.Errorf("unknown field %q (fields: %s)", m.Key, ruleFields)}
		}
		switch v.Kind {
		case strictjson.String:
			*s = v.Str
		case strictjson.Null:
		default:
			return notA(v, m.Key, "a string")
		}
	}
	return nil
}

func decodeArgs(v *strictjson.Value) (map[string]string, error) {
	switch v.Kind {
	case strictjson.Null:
		return nil, nil
	case strictjson.Object:
	default:
		return nil, notA(v, "args", "an object")
	}
	args := make(map[string]string, len(v.Items))
	for i := range v.Items {
		m := &v.Items[i]
		if m.Value.Kind != strictjson.String {
			return nil, notA(&m.Value, "args."+m.Key, "a string")
		}
		args[m.Key] = m.Value.Str
	}
	return args, nil
}

func decodeExamples(v *strictjson.Value) (*Examples, error) {
	switch v.Kind {
	case strictjson.Null:
		return nil, nil
	case strictjson.Object:
	default:
		return nil, notA(v, "examples", "an object")
	}
	ex := &Examples{}
	for i := range v.Items {
		m := &v.Items[i]
		var calls *[]map[string]any
		switch m.Key {
		case "match":
			calls = &ex.Match
		case "notMatch":
			calls = &ex.NotMatch
		default:
			return nil, &fieldError{m.KeyOff, "", fmt.Errorf("unknown field %q in examples (examples have match and notMatch)", m.Key)}
		}
		field := "examples." + m.Key
		switch m.Value.Kind {
		case strictjson.Null:
			continue
		case strictjson.List:
		default:
			return nil, notA(&m.Value, field, "a list of calls")
		}
		*calls = make([]map[string]any, len(m.Value.Items))
		for j := range m.Value.Items {
			c := &m.Value.Items[j].Value
			at := field + "[" + strconv.Itoa(j) + "]"
			switch c.Kind {
			case strictjson.Null:
				continue
			case strictjson.Object:
			default:
				return nil, notA(c, at, "an object (a call's arguments)")
			}
			a, err := plain(c, at)
			if err != nil {
				return nil, err
			}
			(*calls)[j] = a.(map[string]any)
		}
	}
	return ex, nil
}

// plain returns v as encoding/json decodes JSON into an any: nil, bool,
// float64, string, []any, map[string]any.
func plain(v *strictjson.Value, at string) (any, error) {
	switch v.Kind {
	case strictjson.Null:
		return nil, nil
	case strictjson.Bool:
		return v.Bool, nil
	case strictjson.Number:
		f, err := strconv.ParseFloat(v.Str, 64)
		if err != nil {
			return nil, &fieldError{v.Off, at, fmt.Errorf("%s is out of the range of numbers", v.Str)}
		}
		return f, nil
	case strictjson.String:
		return v.Str, nil
	case strictjson.List:
		out := make([]any, len(v.Items))
		for i := range v.Items {
			e, err := plain(&v.Items[i].Value, at)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	out := make(map[string]any, len(v.Items))
	for i := range v.Items {
		e, err := plain(&v.Items[i].Value, at)
		if err != nil {
			return nil, err
		}
		out[v.Items[i].Key] = e
	}
	return out, nil
}
