package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/custom-agent/custom-agent/permission"
)

// Version is the only policy file version this package reads and writes.
const Version = 1

// File is the JSON shape of a policy file:
//
//	{"version": 1, "rules": [{"id": "npm-test", "tool": "shell", "command": "npm test", "decision": "allow"}]}
//
// A rule's level and file are where the loader found it, never fields of
// the file.
type File struct {
	Version int    `json:"version"`
	Rules   []Rule `json:"rules"`
}

// Rule is one rule as a policy file holds it: permission.Rule's matching
// fields plus a comment and examples, which only people and `policy test`
// read. Field order is the order written to files.
type Rule struct {
	ID       string             `json:"id"`
	Tool     string             `json:"tool"`
	Command  string             `json:"command,omitempty"`
	Path     string             `json:"path,omitempty"`
	URL      string             `json:"url,omitempty"`
	Args     map[string]string  `json:"args,omitempty"`
	Decision permission.Verdict `json:"decision"`
	Comment  string             `json:"comment,omitempty"`
	Examples *Examples          `json:"examples,omitempty"`
}

// Examples are calls, given as the arguments of the rule's tool, that the
// rule must apply to (Match) and must not apply to (NotMatch). They are
// checked whenever the file is loaded.
type Examples struct {
	Match    []map[string]any `json:"match,omitempty"`
	NotMatch []map[string]any `json:"notMatch,omitempty"`
}

// Permission returns the rule as the engine matches it, at level from file.
func (r *Rule) Permission(level permission.RuleLevel, file string) permission.Rule {
	return permission.Rule{
		ID: r.ID, Level: level, Source: file, Tool: r.Tool, Command: r.Command,
		Path: r.Path, URL: r.URL, Args: r.Args, Decision: r.Decision,
	}
}

// FromPermission returns the file form of an engine rule (no comment, no
// examples).
func FromPermission(r permission.Rule) Rule {
	return Rule{ID: r.ID, Tool: r.Tool, Command: r.Command, Path: r.Path, URL: r.URL, Args: r.Args, Decision: r.Decision}
}

// sameMatch reports whether two rules match the same calls the same way
// (their ids, comments and examples aside).
func sameMatch(a, b *Rule) bool {
	if a.Tool != b.Tool || a.Command != b.Command || a.Path != b.Path || a.URL != b.URL ||
		a.Decision != b.Decision || len(a.Args) != len(b.Args) {
		return false
	}
	for k, v := range a.Args {
		if w, ok := b.Args[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Error reports a policy file, or one rule in it, that cannot be used. The
// position is of the fault when known (Line 0 when not); RuleID names the
// rule at fault, if one is.
type Error struct {
	Path   string
	Line   int // 1-based
	Col    int // 1-based, in characters
	RuleID string
	Field  string // JSON field at fault, e.g. "decision" or "examples.match[0]"
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col))
	}
	if e.RuleID != "" {
		b.WriteString(": rule " + strconv.Quote(e.RuleID))
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// parsed is a policy file read strictly: its rules, where each starts, and
// the rules compiled.
type parsed struct {
	path string
	src  []byte
	// level is the level the file's rules are at; it decides what set
	// holds.
	level permission.RuleLevel
	// ents holds the rules, each as the entry it becomes (entries fills
	// in the rest), so that a rule is not copied from a list of rules
	// into a list of entries.
	ents []Entry
	// offs[i] is the byte offset of ents[i] in src.
	offs []int
	// set is rules compiled as the engine sees them when nothing in the
	// file is untrusted (Entry.Effective of p.entries), once check
	// passed.
	set *permission.RuleSet
}

// errorAt returns an Error at byte offset off of the file.
func (p *parsed) errorAt(off int, id, field string, err error) *Error {
	e := &Error{Path: p.path, RuleID: id, Field: field, Err: err}
	e.Line, e.Col = position(p.src, off)
	return e
}

// ruleError returns an Error for rule i, placed at the rule's field when
// it can be found, else at the rule.
func (p *parsed) ruleError(i int, field string, err error) *Error {
	off := p.offs[i]
	if field != "" {
		key := field
		if k, _, ok := strings.Cut(field, "."); ok {
			key = k
		}
		if k, _, ok := strings.Cut(key, "["); ok {
			key = k
		}
		if o, ok := findKey(p.src, off, key); ok {
			off = o
		}
	}
	return p.errorAt(off, p.ents[i].Rule.ID, field, err)
}

// parse reads a policy file of rules at level strictly: JSON syntax, the
// version, unknown fields, and each rule's id (present and unique) and
// matchers (compiled). Examples are not run here; see check.
func parse(path string, src []byte, level permission.RuleLevel) (*parsed, error) {
	if p, ok := parseFast(path, src); ok {
		p.level = level
		if err := p.check(); err == nil {
			return p, nil
		}
		// Every error is reported by the strict pass, where it is.
	}
	p := &parsed{path: path, src: src, level: level}
	if err := p.read(); err != nil {
		return nil, err
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// read decodes the file strictly, with every error placed at its line and
// column: JSON syntax, unknown fields, the version.
func (p *parsed) read() error {
	src := p.src
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := expectDelim(dec, '{'); err != nil {
		return p.jsonError(dec, err, 0)
	}
	var version *int
	seen := map[string]bool{}
	for dec.More() {
		keyOff := skipSpace(src, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return p.jsonError(dec, err, 0)
		}
		key, _ := tok.(string)
		if seen[key] {
			return p.errorAt(keyOff, "", "", fmt.Errorf("the key %q appears twice", key))
		}
		seen[key] = true
		switch key {
		case "version":
			var v int
			if err := dec.Decode(&v); err != nil {
				return p.jsonError(dec, err, 0)
			}
			version = &v
		case "rules":
			if err := p.parseRules(dec); err != nil {
				return err
			}
		default:
			return p.errorAt(keyOff, "", "", fmt.Errorf("unknown field %q (a policy file has \"version\" and \"rules\")", key))
		}
	}
	if _, err := dec.Token(); err != nil {
		return p.jsonError(dec, err, 0)
	}
	if _, err := dec.Token(); err != io.EOF {
		return p.errorAt(int(dec.InputOffset()), "", "", errors.New("trailing data after the policy object"))
	}
	switch {
	case version == nil:
		return p.errorAt(0, "", "version", fmt.Errorf("missing; write \"version\": %d", Version))
	case *version != Version:
		return p.errorAt(findKeyOr(src, 0, "version"), "", "version", fmt.Errorf("%d is not supported (this custom-agent reads version %d)", *version, Version))
	}
	return nil
}

// check checks each rule's id (present and unique) and matchers, which it
// compiles into p.set.
func (p *parsed) check() error {
	src, path := p.src, p.path
	ids := make(map[string]int, len(p.ents))
	for i := range p.ents {
		r := &p.ents[i].Rule
		if r.ID == "" {
			return p.errorAt(p.offs[i], "", "id", fmt.Errorf("rule %d has no id; give every rule a unique \"id\"", i+1))
		}
		if err := checkID(r.ID); err != nil {
			return p.ruleError(i, "id", err)
		}
		if strings.HasPrefix(r.ID, BuiltinPrefix) && path != BuiltinFile {
			return p.ruleError(i, "id", fmt.Errorf("ids starting with %q are kept for the built-in rules", BuiltinPrefix))
		}
		if j, dup := ids[r.ID]; dup {
			l, _ := position(src, p.offs[j])
			return p.ruleError(i, "id", fmt.Errorf("duplicate id: line %d has a rule with the same id", l))
		}
		ids[r.ID] = i
		if r.Examples != nil && len(r.Examples.Match)+len(r.Examples.NotMatch) == 0 {
			return p.ruleError(i, "examples", errors.New("empty; give \"match\" or \"notMatch\" calls, or drop it"))
		}
	}
	// The file's rules are compiled once, here, as the engine sees them;
	// Store.Policy joins the sets of the levels. The error says which
	// rule is at fault.
	source := path
	if p.level == permission.LevelBuiltin {
		source = permission.BuiltinSource
	}
	set, err := permission.CompileSet(len(p.ents), func(yield func(permission.Rule) bool) {
		for i := range p.ents {
			if !yield(p.ents[i].Rule.Permission(p.level, source)) {
				return
			}
		}
	})
	if err != nil {
		var re *permission.RuleError
		if errors.As(err, &re) && re.Index >= 0 && re.Index < len(p.ents) {
			return p.ruleError(re.Index, re.Field, re.Err)
		}
		return &Error{Path: path, Err: err}
	}
	p.set = set
	return nil
}

// parseRules reads the "rules" array, one rule at a time so that every
// rule's position is known.
func (p *parsed) parseRules(dec *json.Decoder) error {
	if err := expectDelim(dec, '['); err != nil {
		return p.jsonError(dec, err, 0)
	}
	for dec.More() {
		off := skipSpace(p.src, int(dec.InputOffset()))
		p.ents = append(p.ents, Entry{})
		if err := dec.Decode(&p.ents[len(p.ents)-1].Rule); err != nil {
			return p.jsonError(dec, err, off)
		}
		p.offs = append(p.offs, off)
	}
	_, err := dec.Token()
	if err != nil {
		return p.jsonError(dec, err, 0)
	}
	return nil
}

// jsonError places a decoding error: a syntax or type error at its offset,
// an unknown field at its key within the value starting at from.
func (p *parsed) jsonError(dec *json.Decoder, err error, from int) *Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		// A Decoder reports offsets within the value it was decoding; the
		// whole document, scanned again, gives the offset in the file.
		var v any
		if err2 := json.Unmarshal(p.src, &v); errors.As(err2, &se) {
			err = err2
		}
		return p.errorAt(int(se.Offset)-1, "", "", err)
	case errors.As(err, &te):
		// The offset is within the rule decoded, which starts at from.
		e := p.errorAt(from+int(te.Offset)-1, ruleIDNear(p.src, from), te.Field,
			fmt.Errorf("%s is not a %s", te.Value, jsonType(te.Type.Kind().String())))
		e.Field = strings.TrimPrefix(te.Field, "rules.")
		return e
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return p.errorAt(len(p.src), "", "", errors.New("unexpected end of file"))
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		key, _ := strconv.Unquote(name)
		off := from
		if o, ok := findKey(p.src, from, key); ok {
			off = o
		}
		return p.errorAt(off, ruleIDNear(p.src, from), "", fmt.Errorf("unknown field %s (fields: id, tool, command, path, url, args, decision, comment, examples)", name))
	}
	return p.errorAt(int(dec.InputOffset()), "", "", err)
}

func jsonType(kind string) string {
	switch kind {
	case "int", "int64", "float64":
		return "number"
	case "map", "struct":
		return "object"
	case "slice":
		return "list"
	}
	return kind
}

// ruleIDNear returns the id of the rule object starting at off, if it can
// be read, so that an error inside a rule names it.
func ruleIDNear(src []byte, off int) string {
	if off <= 0 || off >= len(src) || src[off] != '{' {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(src[off:]))
	var r struct {
		ID json.RawMessage `json:"id"`
	}
	if dec.Decode(&r) != nil {
		// The rule itself is malformed: look for "id": "…" textually.
		ko, ok := findKey(src, off, "id")
		if !ok {
			return ""
		}
		d := json.NewDecoder(bytes.NewReader(src[ko:]))
		if _, err := d.Token(); err != nil {
			return ""
		}
		t, err := d.Token()
		if err != nil {
			return ""
		}
		s, _ := t.(string)
		return s
	}
	var s string
	_ = json.Unmarshal(r.ID, &s)
	return s
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("expected %q, found %v", string(d), t)
	}
	return nil
}

// checkID rejects ids a person could not type or tell apart.
func checkID(id string) error {
	if len(id) > 128 {
		return errors.New("longer than 128 bytes")
	}
	if strings.TrimSpace(id) != id {
		return errors.New("starts or ends with a space")
	}
	if !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) {
		return errors.New("holds control characters")
	}
	return nil
}

// skipSpace returns the offset of the first byte at or after off that is
// neither JSON white space nor a comma.
func skipSpace(src []byte, off int) int {
	for off < len(src) {
		switch src[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// findKey returns the offset of the object key "key" in the JSON value
// starting at off, searching only that value's top level.
func findKey(src []byte, off int, key string) (int, bool) {
	depth := 0
	for i := off; i < len(src); i++ {
		switch src[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return 0, false
			}
		case '"':
			end := stringEnd(src, i)
			if depth == 1 && bytes.Equal(src[i+1:end], []byte(key)) && isKey(src, end+1) {
				return i, true
			}
			i = end
		}
	}
	return 0, false
}

func findKeyOr(src []byte, off int, key string) int {
	if o, ok := findKey(src, off, key); ok {
		return o
	}
	return off
}

// stringEnd returns the offset of the closing quote of the string opening
// at i.
func stringEnd(src []byte, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(src) - 1
}

func isKey(src []byte, i int) bool {
	for ; i < len(src); i++ {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

// position returns the 1-based line and column (in characters) of byte
// offset off.
func position(src []byte, off int) (line, col int) {
	off = max(0, min(off, len(src)))
	line = bytes.Count(src[:off], []byte("\n")) + 1
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, utf8.RuneCount(src[start:off]) + 1
}

// encode writes f as a policy file: keys in a fixed order (struct order,
// map keys sorted), two-space indent, no HTML escaping, a final newline.
func encode(f *File) ([]byte, error) {
	if f.Rules == nil {
		f.Rules = []Rule{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
