// Package skill finds and reads skills: folders holding a SKILL.md in the
// format Claude Code users write, whose YAML front matter names the skill,
// says what it is for, and lists the tools it may use:
//
//	---
//	name: review
//	description: Review the staged changes for bugs and style.
//	allowed-tools: Read, Grep, Bash(git diff:*)
//	---
//	Read the diff with `git diff --cached`, then …
//
// A skill never grants anything. Its allowed tools become the
// PermissionEngine's AllowedTools input while it is active, which can only
// deny a call the rest of the decision tree would allow or ask; a tool
// inside the list is still decided by the whole tree.
//
// Parsing is strict and its errors name the file and line; discovery keeps
// going past a bad skill and reports it, since a skill that is not offered
// narrows nothing and so loosens nothing.
package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/custom-agent/custom-agent/permission"
)

// FileName is the name of a skill's file inside its folder.
const FileName = "SKILL.md"

// Limits on what a skill may hold. They keep the tool list offered to the
// model small and a hostile repository from filling the context.
const (
	// MaxFileBytes caps SKILL.md; a larger file is refused.
	MaxFileBytes = 64 << 10
	// MaxNameLen and MaxDescriptionLen are Claude Code's limits.
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
)

// Source says where a skill was found.
type Source string

const (
	// SourceProject: .custom-agent/skills/ in the project.
	SourceProject Source = "project"
	// SourceUser: $XDG_CONFIG_HOME/custom-agent/skills/.
	SourceUser Source = "user"
)

// Skill is one parsed SKILL.md. It is immutable once returned: the same
// value is what the model reads (Body) and what narrows the tools
// (AllowedTools), so the two cannot drift apart.
type Skill struct {
	Name        string
	Description string
	// AllowedTools is the list the engine narrows to, in our tool names
	// (Claude Code names mapped, see MapTool), without duplicates. Nil when
	// the front matter has no allowed-tools (or it is null): the skill
	// does not narrow. Empty but not nil when it lists nothing: every
	// call is denied while the skill is active.
	AllowedTools []string
	// Declared is allowed-tools as written, one entry per tool.
	Declared []string
	// Notes say how entries of Declared were read: a Claude Code name
	// mapped, a pattern that narrows nothing, a name no tool has.
	Notes []string
	// Body is the markdown after the front matter.
	Body string
	// Path is the SKILL.md read (absolute, symbolic links resolved); Dir
	// is its folder.
	Path, Dir string
	Source    Source
	// Trusted is false for a skill of a project the user has not
	// trusted (custom-agent trust): the model is told its instructions
	// come from the repository.
	Trusted bool
	// Digest is "sha256:" and the hex SHA-256 of the file's bytes.
	Digest string
	// DisableModelInvocation is Claude Code's disable-model-invocation:
	// such a skill is meant to be started by a person only, so it is not
	// offered to the model.
	DisableModelInvocation bool
}

// Narrows reports whether the skill restricts the tools at all.
func (s *Skill) Narrows() bool { return s.AllowedTools != nil }

// Error is a SKILL.md that cannot be used, with the line it is about (0
// when it is about the whole file).
type Error struct {
	Path string
	Line int
	Err  error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Sentinels callers may branch on (wrapped in *Error).
var (
	ErrNoFrontMatter = errors.New("SKILL.md must begin with a YAML front matter block between two --- lines")
	ErrTooLarge      = fmt.Errorf("SKILL.md is larger than %d KiB", MaxFileBytes>>10)
	ErrOutside       = errors.New("the skill resolves outside its skills directory (a symbolic link), so it is not read")
)

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// ValidName reports why name is not a valid skill name, or "": lowercase
// letters, digits and single hyphens between them, at most 64 characters
// (Claude Code's rule).
func ValidName(name string) string {
	switch {
	case name == "":
		return "the name is empty"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("the name is %d characters long; at most %d are allowed", len(name), MaxNameLen)
	case !nameRE().MatchString(name):
		return fmt.Sprintf("the name %q must be lowercase letters, digits and single hyphens between them", name)
	}
	return ""
}

// Parse reads a SKILL.md. folder is the name of the folder holding it: the
// skill's name must equal it. path is used in errors and kept in the Skill.
func Parse(path, folder string, src []byte) (*Skill, error) {
	fail := func(line int, format string, args ...any) error {
		return &Error{Path: path, Line: line, Err: fmt.Errorf(format, args...)}
	}
	if len(src) > MaxFileBytes {
		return nil, &Error{Path: path, Err: ErrTooLarge}
	}
	if !utf8.Valid(src) {
		return nil, fail(0, "SKILL.md is not valid UTF-8")
	}
	sum := sha256.Sum256(src)
	text := strings.TrimPrefix(string(src), "\uFEFF")
	front, body, ok := split(text)
	if !ok {
		return nil, &Error{Path: path, Line: 1, Err: ErrNoFrontMatter}
	}
	s := &Skill{Path: path, Body: body, Digest: "sha256:" + hex.EncodeToString(sum[:])}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		line, msg := yamlLine(err)
		if line > 0 {
			line++ // the front matter starts on line 2
		}
		return nil, fail(line, "front matter: %s", msg)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fail(1, "the front matter is empty: it needs name and description")
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, fail(m.Line+1, "the front matter must be a mapping of keys (name: …, description: …)")
	}
	seen := map[string]bool{}
	var nameNode, descNode *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		line := k.Line + 1
		if k.Kind != yaml.ScalarNode {
			return nil, fail(line, "front matter keys must be plain words")
		}
		if v.Kind == yaml.AliasNode || v.Anchor != "" {
			return nil, fail(v.Line+1, "%s: YAML anchors and aliases are not accepted in a skill's front matter", k.Value)
		}
		if seen[k.Value] {
			return nil, fail(line, "%s is given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			if err := scalarString(v, &s.Name); err != nil {
				return nil, fail(v.Line+1, "name: %v", err)
			}
			nameNode = v
		case "description":
			if err := scalarString(v, &s.Description); err != nil {
				return nil, fail(v.Line+1, "description: %v", err)
			}
			descNode = v
		case "allowed-tools":
			decl, at, err := toolEntries(v)
			if err != nil {
				return nil, fail(at.Line+1, "allowed-tools: %v", err)
			}
			if decl != nil {
				s.Declared = decl
				s.AllowedTools, s.Notes = MapTools(decl)
			}
		case "disable-model-invocation":
			b, err := strconv.ParseBool(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil {
				return nil, fail(v.Line+1, "disable-model-invocation: want true or false")
			}
			s.DisableModelInvocation = b
		default:
			// Claude Code's other keys (license, metadata, model,
			// argument-hint, …) shape how Claude Code runs a skill; they
			// change nothing here, and a skill written for it still loads.
		}
	}
	switch {
	case nameNode == nil:
		return nil, fail(1, "the front matter has no name (it must be %q, the folder's name)", folder)
	case ValidName(s.Name) != "":
		return nil, fail(nameNode.Line+1, "name: %s", ValidName(s.Name))
	case folder != "" && s.Name != folder:
		return nil, fail(nameNode.Line+1, "name: %q is not the folder's name %q; they must be the same", s.Name, folder)
	case descNode == nil || strings.TrimSpace(s.Description) == "":
		return nil, fail(lineOf(descNode), "the front matter has no description: the model chooses a skill by it")
	case utf8.RuneCountInString(s.Description) > MaxDescriptionLen:
		return nil, fail(lineOf(descNode), "description: %d characters; at most %d are allowed", utf8.RuneCountInString(s.Description), MaxDescriptionLen)
	}
	if i := control(s.Description); i >= 0 {
		return nil, fail(lineOf(descNode), "description: holds the control character %U; write it without", []rune(s.Description)[i])
	}
	s.Description = strings.TrimSpace(s.Description)
	if s.Narrows() && len(s.Body) > shownWhole && !permission.ToolListed(s.AllowedTools, "read_output") {
		s.Notes = append(s.Notes, fmt.Sprintf("the body is %d KiB: the model sees its first 4 KiB and last 6 KiB, and the skill does not list read_output, which reads the rest", (len(s.Body)+1023)>>10))
	}
	return s, nil
}

// shownWhole is how much of a tool's output the model sees at once: the
// executor's preview (4 KiB) and tail (6 KiB).
const shownWhole = 10 << 10

// lineOf is the file line of a front matter node, or 1 (the front matter)
// when there is none.
func lineOf(n *yaml.Node) int {
	if n == nil {
		return 1
	}
	return n.Line + 1
}

// split cuts text into its front matter and body. The front matter opens
// with a line "---" and closes with a line "---" (or "...").
func split(text string) (front, body string, ok bool) {
	first, rest, found := strings.Cut(text, "\n")
	if !found || strings.TrimRight(first, " \t\r") != "---" {
		return "", "", false
	}
	off := 0
	for off <= len(rest) {
		end := strings.IndexByte(rest[off:], '\n')
		var l string
		next := len(rest) + 1
		if end < 0 {
			l = rest[off:]
		} else {
			l = rest[off : off+end]
			next = off + end + 1
		}
		if t := strings.TrimRight(l, " \t\r"); t == "---" || t == "..." {
			body := ""
			if next <= len(rest) {
				body = rest[next:]
			}
			return rest[:off], strings.TrimLeft(body, "\r\n"), true
		}
		off = next
	}
	return "", "", false
}

var lineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// yamlLine takes the line number out of a YAML error.
func yamlLine(err error) (int, string) {
	msg := err.Error()
	if m := lineRE().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

func scalarString(v *yaml.Node, dst *string) error {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return errors.New("want a string")
	}
	*dst = v.Value
	return nil
}

// toolEntries reads allowed-tools: a string of tools separated by commas or
// spaces ("Read, Grep, Bash(git diff:*)", the agent skills form "Read
// Grep"), or a list of strings. Null gives nil (the key is as good as
// absent); an empty string or list gives an empty, non-nil slice.
func toolEntries(v *yaml.Node) ([]string, *yaml.Node, error) {
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil, v, nil
	case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
		out, err := splitTools(v.Value)
		return out, v, err
	case v.Kind == yaml.SequenceNode:
		out := []string{}
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode || e.Tag != "!!str" {
				return nil, e, errors.New("each entry must be a tool name (a string)")
			}
			parts, err := splitTools(e.Value)
			if err != nil {
				return nil, e, err
			}
			out = append(out, parts...)
		}
		return out, v, nil
	}
	return nil, v, errors.New(`want a list of tool names, or one string of them separated by commas ("Read, Grep")`)
}

// splitTools splits at commas and white space outside parentheses, so
// "Bash(git diff:*)" stays one entry.
func splitTools(s string) ([]string, error) {
	out := []string{}
	depth, start := 0, 0
	flush := func(end int) {
		if t := strings.TrimSpace(s[start:end]); t != "" {
			out = append(out, t)
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("%q has a ) with no ( before it", s)
			}
		case depth == 0 && (r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'):
			flush(i)
			start = i + 1
		case r < 0x20 || r == 0x7f:
			return nil, fmt.Errorf("%q holds a control character", s)
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("%q has a ( that is not closed", s)
	}
	flush(len(s))
	return out, nil
}

// control returns the rune index of the first control character other than
// newline and tab, or -1.
func control(s string) int {
	i := 0
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return i
		}
		i++
	}
	return -1
}
