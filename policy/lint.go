package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/skill/toolinfo"
)

// Severity says whether a finding of Test fails it.
type Severity string

const (
	// SevError is a file that does not load or an example that fails.
	SevError Severity = "error"
	// SevWarning is a lint: the rule loads but likely does not do what its
	// author meant.
	SevWarning Severity = "warning"
)

// Finding is one result of Test.
type Finding struct {
	Severity Severity             `json:"severity"`
	Level    permission.RuleLevel `json:"level,omitempty"`
	File     string               `json:"file,omitempty"`
	Line     int                  `json:"line,omitempty"`
	Col      int                  `json:"col,omitempty"`
	RuleID   string               `json:"rule,omitempty"`
	Message  string               `json:"message"`
}

func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(string(f.Severity) + ": ")
	if f.File != "" {
		b.WriteString(f.File)
		if f.Line > 0 {
			b.WriteString(":" + strconv.Itoa(f.Line))
			if f.Col > 0 {
				b.WriteString(":" + strconv.Itoa(f.Col))
			}
		}
		b.WriteString(": ")
	}
	if f.RuleID != "" {
		b.WriteString("rule " + strconv.Quote(f.RuleID) + ": ")
	}
	b.WriteString(f.Message)
	return b.String()
}

// Test loads the same files Open does, but leniently: it runs every rule's
// examples and reports each failure, and lints the rules: shadowed rules
// (another rule that decides first matches every call they match), allow
// rules made dead by a stricter rule, rules that can never match, and rules
// of an untrusted project that do not count as written. A file that does
// not parse is reported and its rules skipped. Findings of SevError are
// failures; the rest are warnings.
func Test(o Options) ([]Finding, error) {
	if !filepath.IsAbs(o.ConfigHome) {
		return nil, fmt.Errorf("the config home %q is not an absolute path", o.ConfigHome)
	}
	proj, err := FindProject(o.Cwd)
	if err != nil {
		return nil, err
	}
	cwd, err := canonicalDir(o.Cwd)
	if err != nil {
		return nil, err
	}
	s := &Store{env: Env{Cwd: cwd, Home: o.Home, ConfigHome: o.ConfigHome}, configHome: o.ConfigHome, project: proj}
	var out []Finding
	if s.trust, err = readTrust(trustPath(o.ConfigHome)); err != nil {
		out = append(out, errorFinding("", err))
		s.trust = &trustList{}
	}
	load := func(path string, level permission.RuleLevel, env Env, must bool) []Entry {
		src, err := os.ReadFile(path)
		if err != nil {
			if !must && errors.Is(err, os.ErrNotExist) {
				return nil
			}
			out = append(out, Finding{Severity: SevError, Level: level, File: path, Message: err.Error()})
			return nil
		}
		p, err := parse(path, src, level)
		if err != nil {
			out = append(out, errorFinding(level, err))
			return nil
		}
		for i := range p.ents {
			for _, ee := range checkExamples(&p.ents[i].Rule, level, env) {
				out = append(out, errorFinding(level, p.ruleError(i, ee.Field, ee)))
			}
		}
		return p.entries(level)
	}
	s.user = load(UserFile(o.ConfigHome), permission.LevelUser, s.env, false)
	if proj.Exists {
		s.proj = load(proj.File, permission.LevelProject, s.projectEnv(), true)
		s.markTrust()
	}
	for _, f := range o.Files {
		s.flag = append(s.flag, load(f, permission.LevelFlag, s.env, true)...)
	}
	return append(out, Lint(s.Entries(""))...), nil
}

func errorFinding(level permission.RuleLevel, err error) Finding {
	f := Finding{Severity: SevError, Level: level, Message: err.Error()}
	var pe *Error
	if errors.As(err, &pe) {
		f.File, f.Line, f.Col, f.RuleID = pe.Path, pe.Line, pe.Col, pe.RuleID
		f.Message = pe.Err.Error()
		if pe.Field != "" {
			f.Message = pe.Field + ": " + f.Message
		}
	}
	return f
}

// Lint returns warnings about rules, given in the order the engine is
// given them (Store.Entries).
func Lint(entries []Entry) []Finding {
	var out []Finding
	warn := func(e *Entry, format string, args ...any) {
		out = append(out, Finding{Severity: SevWarning, Level: e.Level, File: e.File, Line: e.Line, RuleID: e.Rule.ID,
			Message: fmt.Sprintf(format, args...)})
	}
	for i := range entries {
		e := &entries[i]
		if msg := neverMatches(&e.Rule); msg != "" {
			warn(e, "%s", msg)
		}
		if e.Untrusted {
			switch e.Rule.Decision {
			case permission.Allow:
				warn(e, "this allow rule does not count: the project is not trusted (run `custom-agent trust` in it if you trust its policy)")
			case permission.Ask:
				warn(e, "this ask rule only tightens: the project is not trusted, so it cannot turn a deny into a question (run `custom-agent trust` in it if you trust its policy)")
			}
		}
	}
	// Shadowing is judged on the rules as written, as if every project
	// were trusted: it is about what the author meant.
	for i := range entries {
		b := &entries[i]
		rb := b.Rule.Permission(b.Level, b.File)
		for k := range entries {
			a := &entries[k]
			ra := a.Rule.Permission(a.Level, a.File)
			if k == i {
				continue
			}
			sa, sb := strictness(ra.Decision), strictness(rb.Decision)
			if sa < sb || sa == sb && k > i {
				continue
			}
			if ra.Decision == permission.Allow && !sameMatch(&a.Rule, &b.Rule) {
				// An allow rule may be unfit for a call a narrower allow
				// rule covers, so only an identical one shadows.
				continue
			}
			if !subsumes(&ra, &rb) {
				continue
			}
			where := string(a.Level)
			if a.File != "" {
				where += ", " + a.File
				if a.Line > 0 {
					where += ":" + strconv.Itoa(a.Line)
				}
			}
			if sa > sb && rb.Decision == permission.Allow {
				warn(b, "this allow rule is dead: rule %q (%s, %s) matches every call it matches and is stricter", ra.ID, ra.Decision, where)
			} else {
				warn(b, "this rule is shadowed: rule %q (%s, %s) matches every call it matches and decides first", ra.ID, ra.Decision, where)
			}
			break
		}
	}
	return out
}

func strictness(v permission.Verdict) int {
	switch v {
	case permission.Allow:
		return 1
	case permission.Ask:
		return 2
	case permission.Deny:
		return 3
	}
	return 0
}

// subsumes reports, conservatively, whether rule a matches every call rule
// b matches: false when unsure.
func subsumes(a, b *permission.Rule) bool {
	if !globCovers(a.Tool, b.Tool) {
		return false
	}
	if a.Command != "" {
		aw, bw := strings.Fields(a.Command), strings.Fields(b.Command)
		if len(bw) < len(aw) {
			return false
		}
		for i := range aw {
			if aw[i] != bw[i] && !(a.Decision != permission.Allow && strings.EqualFold(aw[i], bw[i])) {
				return false
			}
		}
	}
	if a.Path != "" && a.Path != b.Path {
		root, ok := strings.CutSuffix(a.Path, "/**")
		if !ok || strings.ContainsAny(root, `*?[]{}\`) || !strings.HasPrefix(b.Path, root+"/") {
			return false
		}
	}
	if a.URL != "" && a.URL != b.URL {
		return false
	}
	for k, v := range a.Args {
		if v == "*" || v == "**" {
			if _, ok := b.Args[k]; ok {
				continue
			}
			return false
		}
		if b.Args[k] != v {
			return false
		}
	}
	return true
}

// globCovers reports whether every name tool glob b matches, glob a
// matches too.
func globCovers(a, b string) bool {
	if a == b || a == "*" || a == "**" {
		return true
	}
	if strings.ContainsAny(b, `*?[]{}\`) {
		return false
	}
	ok, _ := doublestar.Match(a, b)
	return ok
}

// neverMatches says why a rule can never match any call, or "".
func neverMatches(r *Rule) string {
	if r.Tool == toolinfo.Name {
		// use_skill (docs/skills.md) is no built-in, but offered whenever
		// there are skills; its one argument is "name".
		if r.Command != "" || r.Path != "" || r.URL != "" {
			return fmt.Sprintf("%s takes only a skill's name: \"command\", \"path\" and \"url\" never match it (use \"args\": {\"name\": …})", toolinfo.Name)
		}
		return ""
	}
	if _, ok := permission.Builtin(r.Tool); !ok && !strings.ContainsAny(r.Tool, `*?[]{}\`) {
		switch {
		case !strings.HasPrefix(r.Tool, "mcp__"):
			return fmt.Sprintf("no built-in tool is named %q (MCP tools are named mcp__<server>__<tool>)", r.Tool)
		case r.Command != "" || r.Path != "" || r.URL != "":
			return "an MCP tool's arguments are matched only by \"args\"; \"command\", \"path\" and \"url\" never match it"
		}
		return ""
	}
	tools, err := exampleTools(r.Tool)
	if err != nil {
		if strings.HasPrefix(r.Tool, "mcp__") {
			return ""
		}
		return fmt.Sprintf("the tool glob %q matches no built-in tool (MCP tools are named mcp__<server>__<tool>)", r.Tool)
	}
	var why string
	for _, t := range tools {
		w := toolCannot(r, &t)
		if w == "" {
			return ""
		}
		why = w
	}
	return why
}

// toolCannot says why the rule's matchers can never match a call of t.
func toolCannot(r *Rule, t *permission.ToolInfo) string {
	switch {
	case r.Command != "" && t.CommandArg == "":
		return fmt.Sprintf("\"command\" matches shell commands, and %s runs none", t.Name)
	case r.Path != "" && len(t.PathArgs) == 0 && t.PatchArg == "" && t.CommandArg == "":
		return fmt.Sprintf("\"path\" matches file paths, and %s takes none", t.Name)
	case r.Path != "" && r.Command == "" && t.CommandArg != "" && r.Decision == permission.Allow:
		return "an allow rule with \"path\" but no \"command\" never matches a shell call: a path says nothing about what the command runs"
	case len(r.Args) > 0 && r.Command == "" && t.CommandArg != "" && r.Decision == permission.Allow:
		return "an allow rule with \"args\" but no \"command\" never matches a shell call"
	case r.URL != "" && t.URLArg == "":
		return fmt.Sprintf("\"url\" matches URLs, and %s takes none", t.Name)
	}
	if props := schemaProps(t.Schema); props != nil {
		for k := range r.Args {
			if !props[k] {
				return fmt.Sprintf("%s has no argument %q", t.Name, k)
			}
		}
	}
	return ""
}

// schemaProps returns the property names of a JSON Schema, or nil.
func schemaProps(schema string) map[string]bool {
	if schema == "" {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal([]byte(schema), &s) != nil || s.Properties == nil {
		return nil
	}
	out := make(map[string]bool, len(s.Properties))
	for k := range s.Properties {
		out[k] = true
	}
	return out
}
