// Package ruleimport translates the permission rules of Claude Code
// (permissions.allow, ask and deny) and Gemini CLI (tools.allowed and
// tools.exclude) into custom-agent policy rules.
//
// The translation never widens an allow: an allow rule that custom-agent
// cannot express exactly or more narrowly is left out, and every rule left
// out is listed with why. A deny or ask rule that can only be expressed
// more broadly is translated broadly (it refuses or asks about more, never
// less) and carries a note saying so. The package does no I/O.
package ruleimport

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

// Result is a translation.
type Result struct {
	Rules []Translated `json:"rules"`
	// Skipped are the rules that were not translated.
	Skipped []Skipped `json:"skipped"`
}

// Translated is one of the agent's rules as a custom-agent rule.
type Translated struct {
	From string      `json:"from"` // the agent's rule, with its list: "allow Bash(npm test)"
	Rule policy.Rule `json:"rule"`
	// Note says how the rule differs from the original when it is not
	// exact: a deny or ask that covers more, an allow that covers less.
	Note string `json:"note,omitempty"`
}

// Skipped is one of the agent's rules left out, and why.
type Skipped struct {
	From string `json:"from"`
	Why  string `json:"why"`
}

// Options say where the rules come from.
type Options struct {
	// SettingsDir is the directory of the settings file: Claude Code reads
	// a path "/p" relative to the project that holds it (the directory
	// above .claude).
	SettingsDir string
}

// Translate reads the agent's settings (a settings.json) and translates
// its permission rules.
func Translate(a hook.Agent, settings []byte, o Options) (*Result, error) {
	res := &Result{Rules: []Translated{}, Skipped: []Skipped{}}
	switch a {
	case hook.ClaudeCode:
		var s struct {
			Permissions struct {
				Allow, Ask, Deny []string
			} `json:"permissions"`
		}
		if err := json.Unmarshal(settings, &s); err != nil {
			return nil, fmt.Errorf("reading Claude Code's settings: %w", err)
		}
		t := claude{root: filepath.Dir(o.SettingsDir), res: res}
		for _, l := range []struct {
			v     permission.Verdict
			rules []string
		}{{permission.Deny, s.Permissions.Deny}, {permission.Ask, s.Permissions.Ask}, {permission.Allow, s.Permissions.Allow}} {
			for _, r := range l.rules {
				t.rule(l.v, r)
			}
		}
	case hook.GeminiCLI:
		var s struct {
			Tools struct {
				Allowed []string `json:"allowed"`
				Exclude []string `json:"exclude"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(settings, &s); err != nil {
			return nil, fmt.Errorf("reading Gemini CLI's settings: %w", err)
		}
		for _, r := range s.Tools.Exclude {
			gemini(res, permission.Deny, r)
		}
		for _, r := range s.Tools.Allowed {
			gemini(res, permission.Allow, r)
		}
	default:
		return nil, fmt.Errorf("unknown agent %q", a)
	}
	return res, nil
}

// Merge adds o's rules (those not already in r) and what o left out.
func (r *Result) Merge(o *Result) {
	if r.Rules == nil {
		r.Rules, r.Skipped = []Translated{}, []Skipped{}
	}
	for _, t := range o.Rules {
		if !slices.ContainsFunc(r.Rules, func(x Translated) bool { return x.Rule.ID == t.Rule.ID }) {
			r.Rules = append(r.Rules, t)
		}
	}
	r.Skipped = append(r.Skipped, o.Skipped...)
}

func (r *Result) add(a hook.Agent, v permission.Verdict, from string, rule policy.Rule, note string) {
	r.addAs(a, v, from, from, rule, note)
}

// addAs adds a rule shown as from whose id is made from key: what it
// matches, not where it was found, so that importing an edited file again
// finds the rules already there.
func (r *Result) addAs(a hook.Agent, v permission.Verdict, from, key string, rule policy.Rule, note string) {
	rule.Decision = v
	rule.ID = ruleID(a, v, key)
	for _, t := range r.Rules {
		if t.Rule.ID == rule.ID {
			return // the same rule from another of the agent's rules
		}
	}
	rule.Comment = "imported from " + string(a) + ": " + from
	r.Rules = append(r.Rules, Translated{From: string(v) + " " + from, Rule: rule, Note: note})
}

func (r *Result) skip(v permission.Verdict, from, why string) {
	r.Skipped = append(r.Skipped, Skipped{From: string(v) + " " + from, Why: why})
}

// ruleID names an imported rule by its agent, list and text, so that
// importing again finds the rule already there.
func ruleID(a hook.Agent, v permission.Verdict, from string) string {
	id := string(a) + " " + string(v) + " " + from
	if len(id) <= 100 && !strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return id
	}
	sum := sha256.Sum256([]byte(from))
	return string(a) + " " + string(v) + " " + hex.EncodeToString(sum[:8])
}

// Our tools for each kind of the agents' rules.
const (
	readTools  = "{read_file,list_files,search_text}"
	writeTools = "{write_file,apply_patch}"
)

// claudeRule is Tool or Tool(specifier).
var claudeRule = regexp.MustCompile(`^([A-Za-z0-9_.*-]+)(?:\((.*)\))?$`)

type claude struct {
	root string
	res  *Result
}

func (c claude) rule(v permission.Verdict, from string) {
	m := claudeRule.FindStringSubmatch(strings.TrimSpace(from))
	if m == nil {
		c.res.skip(v, from, "not a rule Claude Code reads (Tool or Tool(specifier))")
		return
	}
	tool, spec, hasSpec := m[1], m[2], strings.HasSuffix(strings.TrimSpace(from), ")")
	if hasSpec && (spec == "*" || spec == "") {
		hasSpec = false // Bash(*) is Bash
	}
	add := func(r policy.Rule, note string) { c.res.add(hook.ClaudeCode, v, from, r, note) }
	switch {
	case strings.HasPrefix(tool, "mcp__"):
		if hasSpec {
			c.res.skip(v, from, "an MCP tool takes no specifier")
			return
		}
		if strings.Count(tool, "__") == 1 { // mcp__server: every tool of the server
			tool += "__*"
		}
		if strings.ContainsAny(strings.TrimSuffix(tool, "*"), "*?[]{}") {
			c.res.skip(v, from, "a wildcard other than a final * in an MCP tool name")
			return
		}
		add(policy.Rule{Tool: tool}, "")
	case tool == "Bash":
		if !hasSpec {
			add(policy.Rule{Tool: "shell"}, "")
			return
		}
		c.bash(v, from, spec)
	case tool == "Read" || tool == "Edit" || tool == "Write" || tool == "MultiEdit" || tool == "NotebookEdit":
		tools := writeTools
		if tool == "Read" {
			tools = readTools
		}
		if !hasSpec {
			add(policy.Rule{Tool: tools}, "")
			return
		}
		p, why := c.path(spec)
		if why != "" {
			c.res.skip(v, from, why)
			return
		}
		note := ""
		if tool == "Read" && v != permission.Allow {
			note = "custom-agent's " + string(v) + " also covers a search or listing that may reach " + p
		}
		add(policy.Rule{Tool: tools, Path: p}, note)
	case tool == "WebFetch":
		if !hasSpec {
			add(policy.Rule{Tool: "http_get"}, "")
			return
		}
		d, ok := strings.CutPrefix(spec, "domain:")
		if !ok || d == "" || strings.ContainsAny(d, "/:@ ?#[]{}") || strings.Contains(d, "*") && !strings.HasPrefix(d, "*.") {
			c.res.skip(v, from, "WebFetch takes domain:HOST here; anything else has no counterpart")
			return
		}
		add(policy.Rule{Tool: "http_get", URL: d}, "")
	case tool == "WebSearch" && !hasSpec:
		add(policy.Rule{Tool: "web_search"}, "")
	case (tool == "Glob" || tool == "Grep" || tool == "LS") && !hasSpec:
		t := map[string]string{"Glob": "list_files", "LS": "list_files", "Grep": "search_text"}[tool]
		switch {
		case tool == "Grep":
			add(policy.Rule{Tool: t}, "")
		case v == permission.Allow:
			c.res.skip(v, from, "custom-agent judges Glob and LS both as list_files, so allowing one would allow the other")
		default:
			add(policy.Rule{Tool: t}, "custom-agent judges Glob and LS both as list_files, so this "+string(v)+" covers both")
		}
	default:
		c.res.skip(v, from, "custom-agent has no tool that "+tool+" maps onto, or cannot match this specifier")
	}
}

// bash translates Bash(specifier): "cmd:*" and "cmd *" are a prefix of
// whole words, as our command matcher is; "cmd" alone is that command
// exactly.
func (c claude) bash(v permission.Verdict, from, spec string) {
	add := func(r policy.Rule, note string) { c.res.add(hook.ClaudeCode, v, from, r, note) }
	prefix, open := strings.CutSuffix(spec, ":*")
	if !open {
		prefix, open = strings.CutSuffix(spec, " *")
	}
	prefix = strings.TrimSpace(prefix)
	if prefix == "" {
		c.res.skip(v, from, "an empty command")
		return
	}
	if i := strings.IndexAny(prefix, "*?"); i >= 0 {
		// A wildcard inside the command.
		words := strings.Fields(prefix[:i])
		if !strings.HasSuffix(prefix[:i], " ") && len(words) > 0 {
			words = words[:len(words)-1] // the word the wildcard is in
		}
		if v == permission.Allow || len(words) == 0 {
			c.res.skip(v, from, "a wildcard inside a command has no exact counterpart, and an allow is never widened")
			return
		}
		add(policy.Rule{Tool: "shell", Command: strings.Join(words, " ")},
			"a wildcard inside the command: this "+string(v)+" covers every command that starts with "+code(strings.Join(words, " ")))
		return
	}
	if open {
		add(policy.Rule{Tool: "shell", Command: prefix}, "")
		return
	}
	// The command exactly: a prefix and the whole command string.
	add(policy.Rule{Tool: "shell", Command: prefix, Args: map[string]string{"command": globEscape(prefix)}}, "")
}

func code(s string) string { return "`" + s + "`" }

// path translates a gitignore-style path of Read and Edit rules:
// "//abs" is /abs, "~/p" is under the home, "/p" is under the project
// (root), "p" and "./p" are under the working directory.
func (c claude) path(spec string) (string, string) {
	p := spec
	switch {
	case strings.HasPrefix(p, "!"):
		return "", "a negated pattern has no counterpart"
	case strings.HasPrefix(p, "//"):
		p = p[1:]
	case strings.HasPrefix(p, "~/"):
	case strings.HasPrefix(p, "/"):
		if c.root == "" || c.root == "." {
			return "", "a path relative to the settings file, whose place is not known"
		}
		p = filepath.Join(c.root, p)
	case strings.HasPrefix(p, "~"):
		return "", "another user's home"
	default:
		p = strings.TrimPrefix(p, "./")
		if p == "" || p == "." {
			p = "**"
		}
	}
	if strings.HasSuffix(p, "/") {
		p += "**"
	}
	if strings.ContainsRune(p, 0) {
		return "", "a NUL byte"
	}
	return p, ""
}

// globEscape escapes a command for an args glob that matches it exactly.
func globEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// geminiTools are Gemini CLI's tools and ours; broader is set where ours
// covers more than the one tool (a deny of it denies the others too).
var geminiTools = map[string]struct {
	tool    string
	broader string
}{
	"run_shell_command":   {"shell", ""},
	"read_file":           {"read_file", ""},
	"write_file":          {"write_file", "Gemini CLI's replace is judged as write_file too"},
	"replace":             {"write_file", "Gemini CLI's write_file is judged as write_file too"},
	"glob":                {"list_files", "Gemini CLI's list_directory is judged as list_files too"},
	"list_directory":      {"list_files", "Gemini CLI's glob is judged as list_files too"},
	"search_file_content": {"search_text", "Gemini CLI's read_many_files is judged as search_text too"},
	"read_many_files":     {"search_text", "Gemini CLI's search_file_content is judged as search_text too"},
	"web_fetch":           {"{http_get,web_fetch}", "custom-agent judges the URLs web_fetch names as http_get, its own tool, which this covers too"},
	"google_web_search":   {"web_search", ""},
}

var geminiRule = regexp.MustCompile(`^([A-Za-z0-9_.-]+)(?:\((.*)\))?$`)

func gemini(res *Result, v permission.Verdict, from string) {
	m := geminiRule.FindStringSubmatch(strings.TrimSpace(from))
	if m == nil {
		res.skip(v, from, "not a tool name or run_shell_command(prefix)")
		return
	}
	name, spec, hasSpec := m[1], strings.TrimSpace(m[2]), strings.HasSuffix(strings.TrimSpace(from), ")")
	if name == "ShellTool" {
		name = "run_shell_command"
	}
	add := func(r policy.Rule, note string) { res.add(hook.GeminiCLI, v, from, r, note) }
	if strings.HasPrefix(name, "mcp__") && !hasSpec {
		add(policy.Rule{Tool: name}, "")
		return
	}
	t, ok := geminiTools[name]
	if !ok {
		res.skip(v, from, "custom-agent has no tool that "+name+" maps onto")
		return
	}
	switch {
	case hasSpec && name == "run_shell_command" && spec != "":
		if strings.ContainsAny(spec, "*?") {
			res.skip(v, from, "a wildcard in a command prefix has no counterpart")
			return
		}
		note := ""
		if v == permission.Allow {
			note = "custom-agent's prefix is whole words (`" + spec + "` does not cover `" + spec + "x`), and every command of a compound command must match"
		}
		add(policy.Rule{Tool: "shell", Command: spec}, note)
	case hasSpec:
		res.skip(v, from, "only run_shell_command takes a specifier here")
	case v == permission.Allow && t.broader != "":
		res.skip(v, from, "custom-agent judges "+name+" as "+t.tool+", which would allow more: "+t.broader)
	default:
		add(policy.Rule{Tool: t.tool}, t.broader)
	}
}
