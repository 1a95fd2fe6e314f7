package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/strictjson"
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
	// offs[i] is the byte offset of ents[i] in src, and objs[i] the
	// rule as read, to place an error at the field it is about.
	offs []int
	objs []*strictjson.Value
	// set is rules compiled as the engine sees them when nothing in the
	// file is untrusted (Entry.Effective of p.entries), once check
	// passed.
	set *permission.RuleSet
}

// errorAt returns an Error at byte offset off of the file.
func (p *parsed) errorAt(off int, id, field string, err error) *Error {
	e := &Error{Path: p.path, RuleID: id, Field: field, Err: err}
	e.Line, e.Col = strictjson.Position(p.src, off)
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
		if m, ok := p.objs[i].Get(key); ok {
			off = m.KeyOff
		}
	}
	return p.errorAt(off, p.ents[i].Rule.ID, field, err)
}

// parse reads a policy file of rules at level strictly: JSON syntax, the
// version, unknown fields, and each rule's id (present and unique) and
// matchers (compiled). Examples are not run here; see check.
func parse(path string, src []byte, level permission.RuleLevel) (*parsed, error) {
	p := &parsed{path: path, src: src, level: level}
	if err := p.read(); err != nil {
		return nil, err
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
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
			l, _ := strictjson.Position(src, p.offs[j])
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
	set, err := compileEntries(p.ents, p.level, source)
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

// compileEntries compiles the rules of es, at level from source, as the
// engine sees them when none of them is untrusted.
func compileEntries(es []Entry, level permission.RuleLevel, source string) (*permission.RuleSet, error) {
	return permission.CompileSet(len(es), func(yield func(permission.Rule) bool) {
		for i := range es {
			if !yield(es[i].Rule.Permission(level, source)) {
				return
			}
		}
	})
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
