// Package settings adds custom-agent's hook to the settings file of Claude
// Code (.claude/settings.json, ~/.claude/settings.json) or Gemini CLI
// (.gemini/settings.json, ~/.gemini/settings.json), and takes it out
// again. It edits the JSON text it is given and returns the new text: every
// other key keeps its value and its place, every other hook stays, and
// only hooks whose command runs custom-agent's hook for that agent are
// custom-agent's. It does no I/O.
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/custom-agent/custom-agent/hook"
)

// Scope says which settings file: the project's or the user's.
type Scope string

const (
	Project Scope = "project"
	User    Scope = "user"
)

// Path is the agent's settings file for scope: under the project root or
// the home directory.
func Path(a hook.Agent, s Scope, projectRoot, home string) string {
	dir := ".claude"
	if a == hook.GeminiCLI {
		dir = ".gemini"
	}
	root := projectRoot
	if s == User {
		root = home
	}
	return filepath.Join(root, dir, "settings.json")
}

// Timeouts of the hook entry: Claude Code counts seconds, Gemini CLI
// milliseconds. An agent that times a hook out goes on as if it had not
// answered, so the timeout is generous; the hook answers in milliseconds.
const (
	claudeTimeout = 30
	geminiTimeout = 30000
)

// IsOurs reports whether command runs custom-agent's hook for a and
// nothing else: its first word is custom-agent or custom-agent-gate (any
// directory, quoted or not, .exe allowed), then "hook" and the agent, then
// only the hook's own flags. A command that runs another program too (a
// logger before ours, a pipe, a list, a substitution) is the user's own,
// and install and uninstall leave it alone.
func IsOurs(a hook.Agent, command string) bool {
	w, ok := shellWords(command)
	if !ok || len(w) < 3 || w[1] != "hook" || w[2] != string(a) {
		return false
	}
	switch name := strings.TrimSuffix(baseName(w[0]), ".exe"); name {
	case "custom-agent", "custom-agent-gate":
	default:
		return false
	}
	for i := 3; i < len(w); i++ {
		f := w[i]
		name, _, hasValue := strings.Cut(f, "=")
		switch name {
		case "--no-record", "--no-builtin-rules":
			if hasValue {
				return false
			}
		case "--strict":
			if hasValue || a != hook.GeminiCLI {
				return false
			}
		case "--policy", "--deadline", "--data-dir":
			if !hasValue {
				i++
				if i >= len(w) || strings.HasPrefix(w[i], "-") {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// baseName is the last element of a path written with either separator.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// shellWords splits a command line into words as a POSIX shell does for a
// simple command: blanks separate, single quotes keep everything, double
// quotes keep everything but a backslash before ", \, $ or `, and a
// backslash outside quotes keeps the next byte. ok is false for anything
// a simple command of plain words does not hold: an operator (; & | < >
// ( )), a substitution or expansion ($, `), a comment, a newline, or an
// unclosed quote.
func shellWords(s string) (words []string, ok bool) {
	var cur strings.Builder
	in := false // a word is under way
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch s[i] {
				case '$', '`':
					return nil, false
				case '\\':
					if i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
						i++
					}
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			in = true
		case c == '\\':
			if i+1 >= len(s) || s[i+1] == '\n' {
				return nil, false
			}
			i++
			cur.WriteByte(s[i])
			in = true
		case strings.IndexByte(";&|<>()$`#\n\r*?[{", c) >= 0:
			// Operators, expansions, comments, globs: not a plain word.
			// (A path with a literal one of these can be quoted.)
			return nil, false
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, true
}

// Install returns settings (a JSON object; empty means none yet) with
// custom-agent's hook for a, running command, on the agent's before and
// after tool events, matching every tool. A hook of custom-agent's already
// there is replaced, so installing twice installs once.
func Install(settings []byte, a hook.Agent, command string) ([]byte, error) {
	if !IsOurs(a, command) {
		return nil, fmt.Errorf("the command %q does not run custom-agent's hook for %s", command, a)
	}
	root, hooks, err := open(settings)
	if err != nil {
		return nil, err
	}
	before, after := a.EventNames()
	for _, ev := range []string{before, after} {
		entries, err := entriesOf(hooks, ev)
		if err != nil {
			return nil, err
		}
		if entries, _, err = without(entries, a); err != nil {
			return nil, err
		}
		entries = append(entries, entry(a, command))
		hooks.set(ev, mustJSON(entries))
	}
	root.set("hooks", hooks.encode())
	return format(root.encode())
}

// Uninstall returns settings without custom-agent's hooks for a, and how
// many it took out. Entries, event lists and the hooks object left empty by
// that are taken out too; nothing else changes.
func Uninstall(settings []byte, a hook.Agent) ([]byte, int, error) {
	root, hooks, err := open(settings)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	for _, ev := range hooks.keys {
		entries, err := entriesOf(hooks, ev)
		if err != nil {
			return nil, 0, err
		}
		kept, n, err := without(entries, a)
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			continue
		}
		total += n
		if len(kept) == 0 {
			hooks.del(ev)
		} else {
			hooks.set(ev, mustJSON(kept))
		}
	}
	if total == 0 {
		return settings, 0, nil
	}
	if len(hooks.keys) == 0 {
		root.del("hooks")
	} else {
		root.set("hooks", hooks.encode())
	}
	out, err := format(root.encode())
	return out, total, err
}

// entry is custom-agent's hook entry for a.
func entry(a hook.Agent, command string) json.RawMessage {
	type cmd struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
	type ent struct {
		Matcher string `json:"matcher"`
		Hooks   []cmd  `json:"hooks"`
	}
	e := ent{Matcher: "*", Hooks: []cmd{{Type: "command", Command: command, Timeout: claudeTimeout}}}
	if a == hook.GeminiCLI {
		e.Matcher, e.Hooks[0].Timeout = ".*", geminiTimeout // Gemini CLI's matcher is a regular expression
	}
	return mustJSON(e)
}

// open parses the settings and their hooks object (new when absent).
func open(settings []byte) (root, hooks *object, err error) {
	if len(bytes.TrimSpace(settings)) == 0 {
		settings = []byte("{}")
	}
	if root, err = parseObject(settings); err != nil {
		return nil, nil, fmt.Errorf("the settings are not a JSON object (comments are not read; edit the file by hand): %w", err)
	}
	hooks = &object{vals: map[string]json.RawMessage{}}
	if raw, ok := root.vals["hooks"]; ok {
		if hooks, err = parseObject(raw); err != nil {
			return nil, nil, fmt.Errorf("the settings' \"hooks\" is not a JSON object: %w", err)
		}
	}
	return root, hooks, nil
}

func entriesOf(hooks *object, ev string) ([]json.RawMessage, error) {
	raw, ok := hooks.vals[ev]
	if !ok {
		return nil, nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("the settings' hooks.%s is not a list: %w", ev, err)
	}
	return entries, nil
}

// without takes custom-agent's hooks for a out of entries; an entry left
// with no hook is dropped. An entry that is not ours is kept byte for
// byte.
func without(entries []json.RawMessage, a hook.Agent) ([]json.RawMessage, int, error) {
	var kept []json.RawMessage
	removed := 0
	for _, raw := range entries {
		e, err := parseObject(raw)
		if err != nil {
			kept = append(kept, raw) // not ours to judge
			continue
		}
		var hs []json.RawMessage
		if err := json.Unmarshal(e.vals["hooks"], &hs); err != nil {
			kept = append(kept, raw)
			continue
		}
		var keep []json.RawMessage
		for _, h := range hs {
			var c struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			}
			if json.Unmarshal(h, &c) == nil && c.Type == "command" && IsOurs(a, c.Command) {
				removed++
				continue
			}
			keep = append(keep, h)
		}
		switch {
		case len(keep) == len(hs):
			kept = append(kept, raw)
		case len(keep) > 0:
			e.set("hooks", mustJSON(keep))
			kept = append(kept, e.encode())
		}
	}
	return kept, removed, nil
}

// object is a JSON object whose members keep their order and their bytes.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(b []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	o := &object{vals: map[string]json.RawMessage{}}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.vals[k]; dup {
			return nil, fmt.Errorf("the key %q appears twice", k)
		}
		o.keys = append(o.keys, k)
		o.vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("more than one JSON value")
	}
	return o, nil
}

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *object) encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(k))
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("settings: " + err.Error()) // strings and raw JSON only
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// format indents the settings as both agents write them: two spaces.
func format(b []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Formatted returns settings indented as Install and Uninstall write them,
// and whether that differs from settings; settings that do not parse are
// returned as they are.
func Formatted(settings []byte) ([]byte, bool) {
	if len(bytes.TrimSpace(settings)) == 0 {
		return settings, false
	}
	out, err := format(bytes.TrimSpace(settings))
	if err != nil {
		return settings, false
	}
	return out, !bytes.Equal(out, settings)
}

// Disabled returns why the agent would run no hook of the settings file,
// or "" when nothing in it says so: Claude Code's "disableAllHooks": true;
// Gemini CLI's "hooksConfig": {"enabled": false} (older versions:
// "tools": {"enableHooks": false}, "hooks": {"enabled": false}), or its
// hooksConfig.disabled naming command. Settings that do not parse say
// nothing.
func Disabled(a hook.Agent, settings []byte, command string) string {
	var s struct {
		DisableAllHooks *bool `json:"disableAllHooks"`
		HooksConfig     *struct {
			Enabled  *bool    `json:"enabled"`
			Disabled []string `json:"disabled"`
		} `json:"hooksConfig"`
		Tools *struct {
			EnableHooks *bool `json:"enableHooks"`
		} `json:"tools"`
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(settings, &s) != nil {
		// "hooks" may not be an object of the shape read here: read the rest.
		var t struct {
			DisableAllHooks *bool `json:"disableAllHooks"`
		}
		if json.Unmarshal(settings, &t) != nil {
			return ""
		}
		s.DisableAllHooks = t.DisableAllHooks
	}
	isFalse := func(b *bool) bool { return b != nil && !*b }
	if a == hook.ClaudeCode {
		if s.DisableAllHooks != nil && *s.DisableAllHooks {
			return `"disableAllHooks": true turns every hook off`
		}
		return ""
	}
	switch {
	case s.HooksConfig != nil && isFalse(s.HooksConfig.Enabled):
		return `"hooksConfig": {"enabled": false} turns every hook off`
	case s.Tools != nil && isFalse(s.Tools.EnableHooks):
		return `"tools": {"enableHooks": false} turns every hook off`
	}
	if raw, ok := s.Hooks["enabled"]; ok && string(bytes.TrimSpace(raw)) == "false" {
		return `"hooks": {"enabled": false} turns every hook off`
	}
	if s.HooksConfig != nil {
		for _, d := range s.HooksConfig.Disabled {
			if d == command {
				return `"hooksConfig": {"disabled": [...]} names this hook`
			}
		}
	}
	return ""
}
