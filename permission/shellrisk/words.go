package shellrisk

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// arg is one word of a command after expansion.
type arg struct {
	s    string // value after quote removal; for dynamic words only the static text
	dyn  bool   // part of the value is only known at run time
	glob bool   // holds unquoted glob characters
	sp   risk.Span
	w    *syntax.Word // the word it came from; nil for words made by a rule
}

// args expands the words of a command, brace expansion included.
func (a *analyzer) args(ws []*syntax.Word) []arg {
	start := len(a.argArena)
	out := a.argArena
	for _, w := range ws {
		if a.hasIFS(w) {
			out = a.ifsSplit(out, w)
			continue
		}
		if hasBrace(w) {
			// Split a copy: the tree must keep its positions.
			if cp := (&syntax.Word{Parts: w.Parts}); syntax.SplitBraces(cp) {
				out = a.braceArgs(out, cp, a.span(w))
				continue
			}
		}
		x := a.arg(w)
		x.dyn = x.dyn || a.ifsSplits(w)
		if !x.dyn && a.fieldSplits(w) {
			// x="origin +main"; git push $x: the shell splits the unquoted
			// value into words, and so must the analysis.
			for _, f := range strings.Fields(x.s) {
				y := x
				y.s = f
				out = append(out, y)
			}
			continue
		}
		out = append(out, x)
	}
	a.argArena = out
	return out[start:len(out):len(out)]
}

// arg expands one word without brace expansion.
func (a *analyzer) arg(w *syntax.Word) arg {
	x := arg{sp: a.span(w), w: w}
	// Fast path: a plain literal word needs no copying.
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\~") {
			x.s, x.glob = l.Value, hasGlob(l.Value)
			if hasCodeText(x.s) {
				a.codeText = true
			}
			return x
		}
	}
	var b strings.Builder
	for i, p := range w.Parts {
		a.part(&b, &x, p, i == 0, len(w.Parts) > 1)
	}
	x.s = b.String()
	if hasCodeText(x.s) {
		a.codeText = true
	}
	return x
}

// part appends the value of one word part.
func (a *analyzer) part(b *strings.Builder, x *arg, p syntax.WordPart, first, more bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		v := p.Value
		if first && strings.HasPrefix(v, "~") {
			var ok bool
			if v, ok = a.tilde(v, more); !ok {
				x.dyn = true
			}
		}
		// A [ may be closed by a later part of the word.
		x.glob = x.glob || hasGlob(v) || more && strings.IndexByte(v, '[') >= 0
		b.WriteString(unescape(v))
	case *syntax.SglQuoted:
		if p.Dollar {
			v, cut := ansiCut(p.Value)
			if cut {
				a.opaque(a.span(p), "$'…' holds an escape for the NUL byte, where bash cuts the string, so the word is not what it looks like; no rule allows it")
			}
			b.WriteString(v)
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			if l, ok := q.(*syntax.Lit); ok {
				b.WriteString(unescapeDbl(l.Value))
				continue
			}
			a.part(b, x, q, false, true)
		}
	case *syntax.ParamExp:
		if v, ok := a.param(p); ok && a.expanded+len(v) <= maxExpand {
			a.expanded += len(v)
			x.glob = x.glob || v == "*"
			b.WriteString(v)
		} else {
			x.dyn = true
		}
	case *syntax.ExtGlob:
		x.glob = true
		b.WriteString(p.Op.String())
		b.WriteString(p.Pattern.Value)
		b.WriteByte(')')
	default: // command and process substitution, arithmetic
		x.dyn = true
	}
}

// param returns the static value of a simple parameter expansion.
func (a *analyzer) param(p *syntax.ParamExp) (string, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil ||
		p.Repl != nil || p.Names != 0 || p.NestedParam != nil || p.Flags != nil || len(p.Modifiers) > 0 {
		return "", false
	}
	switch p.Param.Value {
	case "$", "BASHPID", "PPID", "!":
		if p.Exp == nil {
			return "*", true // some process id: judged as any
		}
	}
	v, ok := a.lookup(p.Param.Value)
	if p.Exp != nil {
		// ${X:-default} and the like give X when X is set and not empty.
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset,
			syntax.AssignUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
			return v, ok && v != ""
		}
		return "", false
	}
	return v, ok
}

// tilde expands a leading ~, ~user or ~+ in the first literal of a word.
func (a *analyzer) tilde(v string, more bool) (string, bool) {
	i := strings.IndexByte(v, '/')
	if i < 0 {
		if more {
			return v, true // ~"x": a quoted part ends the prefix, no expansion
		}
		i = len(v)
	}
	user, rest := v[1:i], v[i:]
	var home string
	switch user {
	case "":
		home = a.env.Home
	case "+":
		home = a.cwd
	case "-":
		home = ""
	default:
		if strings.ContainsAny(user, "\\$`\"'") {
			return v, true
		}
		home = a.env.UserHomes[user]
	}
	if home == "" {
		return rest, false
	}
	return home + rest, true
}

// braceArgs appends the words a brace expansion produces. Expansions that
// would produce too many words make the command Opaque.
//
// sp is the span of the word before SplitBraces: the words of an expansion
// may be empty and have no position.
func (a *analyzer) braceArgs(out []arg, w *syntax.Word, sp risk.Span) []arg {
	base := arg{sp: sp, w: w}
	vals := []arg{{}}
	var b strings.Builder
	for i, p := range w.Parts {
		be, ok := p.(*syntax.BraceExp)
		if !ok {
			one := base
			b.Reset()
			a.part(&b, &one, p, i == 0, true)
			for j := range vals {
				vals[j].s += b.String()
				vals[j].dyn = vals[j].dyn || one.dyn
				vals[j].glob = vals[j].glob || one.glob
			}
			continue
		}
		alts, ok := a.braceAlts(be)
		if !ok || len(vals)*len(alts) > maxBraceWords {
			a.opaque(base.sp, "this brace expansion produces too many words to check")
			return append(out, arg{s: a.text(base.sp), dyn: true, sp: base.sp, w: w})
		}
		next := make([]arg, 0, len(vals)*len(alts))
		for _, v := range vals {
			for _, e := range alts {
				next = append(next, arg{s: v.s + e.s, dyn: v.dyn || e.dyn, glob: v.glob || e.glob})
			}
		}
		vals = next
	}
	for _, v := range vals {
		v.sp, v.w = base.sp, w
		out = append(out, v)
	}
	return out
}

// braceAlts returns the alternatives of one brace expression.
func (a *analyzer) braceAlts(be *syntax.BraceExp) ([]arg, bool) {
	if be.Sequence {
		return seqAlts(be)
	}
	var out []arg
	for _, e := range be.Elems {
		sub := a.braceArgs(nil, e, a.fr.outer)
		if len(out)+len(sub) > maxBraceWords {
			return nil, false
		}
		out = append(out, sub...)
	}
	return out, true
}

// seqAlts expands {x..y[..incr]} for numbers and single letters.
func seqAlts(be *syntax.BraceExp) ([]arg, bool) {
	if len(be.Elems) < 2 {
		return nil, false
	}
	from, to := be.Elems[0].Lit(), be.Elems[1].Lit()
	step := int64(1)
	if len(be.Elems) > 2 {
		s, err := strconv.ParseInt(be.Elems[2].Lit(), 10, 64)
		if err != nil {
			return nil, false
		}
		step = max(s, -s)
	}
	if step == 0 {
		step = 1
	}
	x, err1 := strconv.ParseInt(from, 10, 64)
	y, err2 := strconv.ParseInt(to, 10, 64)
	if err1 != nil || err2 != nil {
		if len(from) != 1 || len(to) != 1 {
			return nil, false
		}
		x, y = int64(from[0]), int64(to[0])
	}
	n := (max(x, y) - min(x, y)) / step
	if n < 0 || n >= maxBraceWords {
		return nil, false
	}
	out := make([]arg, 0, n+1)
	for i := int64(0); i <= n; i++ {
		v := x + i*step
		if y < x {
			v = x - i*step
		}
		if err1 != nil {
			out = append(out, arg{s: string(rune(v))})
		} else {
			out = append(out, arg{s: strconv.FormatInt(v, 10)})
		}
	}
	return out, true
}

// ifsSplits reports a word the shell splits at run time because IFS was
// changed: where it splits cannot be known.
func (a *analyzer) ifsSplits(w *syntax.Word) bool {
	changed := false
	for _, v := range a.vars {
		changed = changed || v.name == "IFS"
	}
	if !changed {
		return false
	}
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			return true
		}
	}
	return false
}

// fieldSplits reports a word with an unquoted parameter expansion whose
// static value holds blanks: with IFS unchanged the shell splits it into
// several words.
func (a *analyzer) fieldSplits(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if pe, ok := p.(*syntax.ParamExp); ok {
			if v, ok := a.param(pe); ok && strings.ContainsAny(v, " \t\n") {
				return true
			}
		}
	}
	return false
}

// hasIFS reports an unquoted $IFS in a word while IFS has its default value:
// the shell splits the word there, so rm${IFS}-rf${IFS}x is rm -rf x.
func (a *analyzer) hasIFS(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if pe, ok := p.(*syntax.ParamExp); ok && isIFS(pe) {
			for _, v := range a.vars {
				if v.name == "IFS" {
					return false
				}
			}
			return true
		}
	}
	return false
}

func isIFS(pe *syntax.ParamExp) bool {
	return pe.Param != nil && pe.Param.Value == "IFS" && pe.Exp == nil && pe.Repl == nil && pe.Slice == nil &&
		pe.Index == nil && !pe.Length && !pe.Excl
}

// ifsSplit appends the fields of a word split at its unquoted $IFS parts.
func (a *analyzer) ifsSplit(out []arg, w *syntax.Word) []arg {
	start := 0
	for i := 0; i <= len(w.Parts); i++ {
		if i < len(w.Parts) {
			if pe, ok := w.Parts[i].(*syntax.ParamExp); !ok || !isIFS(pe) {
				continue
			}
		}
		if i > start {
			out = append(out, a.arg(&syntax.Word{Parts: w.Parts[start:i]}))
		}
		start = i + 1
	}
	return out
}

func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// hasGlob reports unescaped glob characters in an unquoted literal. A [
// with no ] after it is an ordinary character to the shell, so the program
// `[` is no pattern.
func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// unescape removes backslashes from an unquoted literal.
func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDbl removes the backslashes that escape inside double quotes.
func unescapeDbl(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the body of a $'...' string. Like bash, it stops at the
// first NUL the escapes produce (\0, \x00, \u0000, \c@, \400 ...): bash
// keeps C strings, so r$'\0'm is the program rm and .s$'\0'sh the
// directory .ssh.
func ansiC(s string) string {
	v, _ := ansiCut(s)
	return v
}

// ansiCut is ansiC, and reports whether the value was cut at a NUL.
func ansiCut(s string) (string, bool) {
	if strings.IndexByte(s, '\\') < 0 {
		if i := strings.IndexByte(s, 0); i >= 0 {
			return s[:i], true
		}
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			} else {
				b.WriteString(`\c`) // bash keeps a trailing \c as it is
			}
		case 'x', 'u', 'U':
			width := 2
			if c == 'u' {
				width = 4
			} else if c == 'U' {
				width = 8
			}
			n, j := hexRun(s[i+1:], width)
			if j == 0 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			i += j
			if c == 'x' {
				b.WriteByte(byte(n))
			} else if utf8.ValidRune(rune(n)) {
				b.WriteRune(rune(n))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, 0
			for j < 3 && i+j < len(s) && s[i+j] >= '0' && s[i+j] <= '7' {
				n = n*8 + int(s[i+j]-'0')
				j++
			}
			i += j - 1
			b.WriteByte(byte(n))
		default: // \\ \' \" \? and unknown escapes
			if strings.IndexByte("\\'\"?", c) < 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
	}
	out := b.String()
	if i := strings.IndexByte(out, 0); i >= 0 {
		return out[:i], true
	}
	return out, false
}

// hexRun parses up to width hex digits and returns the value and count.
func hexRun(s string, width int) (uint32, int) {
	var n uint32
	j := 0
	for ; j < width && j < len(s); j++ {
		d, ok := hexDigit(s[j])
		if !ok {
			break
		}
		n = n<<4 | uint32(d)
	}
	return n, j
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// resolve makes p absolute against cwd and cleans it; "" if it cannot.
func resolve(p, cwd string) string {
	if p == "" {
		return ""
	}
	if strings.HasPrefix(p, "/") {
		return cleanAbs(p)
	}
	if cwd == "" {
		return ""
	}
	return cleanAbs(cwd + "/" + p)
}

// cleanAbs cleans an absolute path lexically.
func cleanAbs(p string) string {
	if !needsClean(p) {
		return p
	}
	return path.Clean(p)
}

// needsClean reports whether path.Clean would change p, without allocating.
func needsClean(p string) bool {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		rest := p[i+1:]
		if strings.HasPrefix(rest, "/") || rest == "." || strings.HasPrefix(rest, "./") ||
			rest == ".." || strings.HasPrefix(rest, "../") {
			return true
		}
	}
	return false
}

// programName reduces a program path to the name rules are keyed by. Rules
// apply to any path ending in a known name ("./x/rm -rf" is judged as rm),
// which errs on the side of more risk.
func programName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	return s
}

// argv0 is the program as listed in Command.Argv: a program in a system
// directory is reduced to its base name so that a policy rule for "rm"
// matches "/usr/bin/rm", but "/tmp/x/ls" or "./ls" stay as written, so that
// a rule allowing "ls" does not allow running some other file named ls.
func argv0(s string) string {
	i := strings.LastIndexByte(s, '/')
	if i <= 0 || i == len(s)-1 {
		return s
	}
	switch s[:i] {
	case "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin",
		"/opt/homebrew/bin", "/opt/local/bin", "/usr/libexec", "/run/current-system/sw/bin":
		return s[i+1:]
	}
	return s
}
