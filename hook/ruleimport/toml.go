package ruleimport

import (
	"fmt"
	"strconv"
	"strings"
)

// tomlRule is one [[rule]] table of a Gemini CLI policy file: its keys and
// their values (string, int64, bool or []string), and its line.
type tomlRule struct {
	line int
	keys map[string]any
}

// TOMLError is a policy file line this reader does not take.
type TOMLError struct {
	Line int
	Msg  string
}

func (e *TOMLError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// parseRules reads the subset of TOML Gemini CLI's policy files are
// written in: [[rule]] tables of key = value lines, the values basic or
// literal strings, integers, booleans and arrays of strings (over several
// lines too), with # comments. Anything else is an error naming its line,
// never a guess.
func parseRules(src []byte) ([]tomlRule, error) {
	var rules []tomlRule
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		n := i + 1
		l := strings.TrimSpace(stripComment(lines[i]))
		switch {
		case l == "":
			continue
		case l == "[[rule]]":
			rules = append(rules, tomlRule{line: n, keys: map[string]any{}})
			continue
		case strings.HasPrefix(l, "["):
			return nil, &TOMLError{n, "only [[rule]] tables are read"}
		case len(rules) == 0:
			return nil, &TOMLError{n, "a key outside a [[rule]] table"}
		}
		k, v, ok := strings.Cut(l, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'.") {
			return nil, &TOMLError{n, "not a key = value line"}
		}
		// An array may go on over the lines that follow, to its "]".
		for strings.HasPrefix(v, "[") && !arrayClosed(v) && i+1 < len(lines) {
			i++
			v += " " + strings.TrimSpace(stripComment(lines[i]))
		}
		val, err := tomlValue(v)
		if err != nil {
			return nil, &TOMLError{n, fmt.Sprintf("%s: %v", k, err)}
		}
		r := &rules[len(rules)-1]
		if _, dup := r.keys[k]; dup {
			return nil, &TOMLError{n, fmt.Sprintf("%s is given twice", k)}
		}
		r.keys[k] = val
	}
	return rules, nil
}

// stripComment cuts a # comment that is not inside a string.
func stripComment(l string) string {
	var quote byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == '"' && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && c == '#':
			return l[:i]
		}
	}
	return l
}

func arrayClosed(v string) bool {
	s, err := splitArray(v)
	return err == nil && s != nil
}

func tomlValue(v string) (any, error) {
	switch {
	case v == "true":
		return true, nil
	case v == "false":
		return false, nil
	case strings.HasPrefix(v, "["):
		items, err := splitArray(v)
		if err != nil {
			return nil, err
		}
		if items == nil {
			return nil, fmt.Errorf("an array that does not end")
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			s, err := tomlString(it)
			if err != nil {
				return nil, fmt.Errorf("an array of other than strings: %w", err)
			}
			out = append(out, s)
		}
		return out, nil
	case strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'"):
		return tomlString(v)
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a string, integer, boolean or array of strings", v)
	}
	return n, nil
}

// splitArray splits "[a, b]" into its items; nil (no error) when the
// array does not end in v.
func splitArray(v string) ([]string, error) {
	body := strings.TrimSpace(v[1:])
	var items []string
	for {
		body = strings.TrimSpace(body)
		if body == "" {
			return nil, nil
		}
		if body[0] == ']' {
			if strings.TrimSpace(body[1:]) != "" {
				return nil, fmt.Errorf("text after the array")
			}
			if items == nil {
				items = []string{}
			}
			return items, nil
		}
		end, err := stringEnd(body)
		if err != nil {
			return nil, err
		}
		if end < 0 {
			return nil, nil
		}
		items = append(items, body[:end])
		body = strings.TrimSpace(body[end:])
		if strings.HasPrefix(body, ",") {
			body = body[1:]
		} else if !strings.HasPrefix(body, "]") && body != "" {
			return nil, fmt.Errorf("items not separated by commas")
		}
	}
}

// stringEnd is the length of the quoted string s starts with; -1 when it
// does not end in s.
func stringEnd(s string) (int, error) {
	q := s[0]
	if q != '"' && q != '\'' {
		return 0, fmt.Errorf("an array item that is not a string")
	}
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			return i + 1, nil
		}
	}
	return -1, nil
}

// tomlString decodes one basic ("…", with escapes) or literal ('…')
// string; multi-line strings are not read.
func tomlString(s string) (string, error) {
	if strings.HasPrefix(s, `"""`) || strings.HasPrefix(s, "'''") {
		return "", fmt.Errorf("multi-line strings are not read")
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' && !strings.Contains(s[1:len(s)-1], "'") {
		return s[1 : len(s)-1], nil
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		u, err := strconv.Unquote(s) // TOML's basic-string escapes are Go's, but for \e and \U's range
		if err != nil {
			return "", fmt.Errorf("the string %s: %w", s, err)
		}
		return u, nil
	}
	return "", fmt.Errorf("%s is not one string", s)
}
