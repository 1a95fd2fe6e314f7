package permission

import "strings"

// QuoteGlob returns a glob that matches s and nothing else: the glob's
// special characters are escaped with a backslash.
func QuoteGlob(s string) string {
	if !hasMeta(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '{', '}', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unquoteGlob returns the one string a glob matches, if it matches only
// one (QuoteGlob's output, or a glob without special characters).
func unquoteGlob(pat string) (string, bool) {
	if !hasMeta(pat) {
		return pat, true
	}
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			if i++; i >= len(pat) {
				return "", false
			}
		case '*', '?', '[', ']', '{', '}':
			return "", false
		}
		b.WriteByte(pat[i])
	}
	return b.String(), true
}

// ExactCommand reports whether r allows or forbids one exact shell command:
// a rule with a command matcher and one args matcher, on the tool's
// command argument, whose glob matches a single string (the rule an
// "allow for this session" answer proposes when no prefix can be offered).
// It returns that command.
func ExactCommand(r Rule) (string, bool) {
	t, ok := Builtin(r.Tool)
	if !ok || t.CommandArg == "" || r.Command == "" || len(r.Args) != 1 || r.Path != "" || r.URL != "" {
		return "", false
	}
	pat, ok := r.Args[t.CommandArg]
	if !ok {
		return "", false
	}
	return unquoteGlob(pat)
}
