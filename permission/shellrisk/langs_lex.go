package shellrisk

import "strings"

// A small lexer for the languages interpreters are handed inline (python,
// javascript, perl, ruby, php, lua, powershell, applescript, tcl, elisp).
// It is no parser: it only needs to tell code from strings and comments,
// decode the string literals, and cut the code into words and punctuation
// so that calls and their arguments can be found. Every loop advances, so
// the work is linear in the length of the code.

// tok is one token of interpreter code. Offsets index the code string.
type tok struct {
	k byte // 'w' word (a name, possibly dotted), 'v' variable ($x, @x, %x), 's' string, 'x' command string (backticks, qx), 'p' punctuation
	s string
	// dyn is set on a string whose value is only known at run time
	// (interpolation: f"{x}", `${x}`, "$x", "#{x}").
	dyn        bool
	start, end int  // the whole token
	vs, ve     int  // strings: the text between the quotes
	nl         bool // a newline (or the start of the code) comes before it
}

// lexCfg says how one language writes comments and strings.
type lexCfg struct {
	hash      bool // # comments
	slashes   bool // // and /* */ comments
	dashes    bool // -- comments (lua: --[[ ]]; applescript: (* *))
	semi      bool // ; comments (elisp)
	triple    bool // python ''' and """, with prefixes r b f u
	interp    byte // what starts an interpolation in "…": '$' (perl, php, pwsh, tcl), '#' (ruby #{), 0
	backtick  byte // 't' js template strings, 'x' command strings (perl, ruby, php), 0
	quoteLike bool // perl q qq qw qx m s tr y, ruby %q %w %x
	regex     bool // /…/ literals (js, perl, ruby)
	luaLong   bool // [[ … ]] and [==[ … ]==] strings
	braces    bool // tcl {…} literal words
	bare      bool // shell-like words: a run of non-special bytes is one word (pwsh, tcl)
	arrow     bool // -> and :: join names (perl, php, ruby ::)
	pwsh      bool // backtick escapes in "…", '' in '…', [Type]::Member
	elisp     bool // words hold - and other lisp symbol bytes
}

var (
	lexPython = lexCfg{hash: true, triple: true}
	lexJS     = lexCfg{slashes: true, backtick: 't', regex: true}
	lexPerl   = lexCfg{hash: true, interp: '$', backtick: 'x', quoteLike: true, regex: true, arrow: true}
	lexRuby   = lexCfg{hash: true, interp: '#', backtick: 'x', quoteLike: true, regex: true, arrow: true}
	lexPHP    = lexCfg{hash: true, slashes: true, interp: '$', backtick: 'x', arrow: true}
	lexLua    = lexCfg{dashes: true, luaLong: true}
	lexPwsh   = lexCfg{hash: true, interp: '$', bare: true, pwsh: true}
	lexOSA    = lexCfg{hash: true, dashes: true}
	lexTcl    = lexCfg{hash: true, interp: '$', braces: true, bare: true}
	lexElisp  = lexCfg{semi: true, elisp: true}
)

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdent(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// closer returns the closing delimiter of a bracketing one.
func closer(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	case '{':
		return '}'
	case '<':
		return '>'
	}
	return c
}

// lex cuts code into tokens. It stops at maxToks tokens.
func lex(code string, cfg lexCfg) []tok {
	const maxToks = 1 << 14
	var out []tok
	nl := true
	i := 0
	emit := func(t tok) {
		t.nl = nl
		nl = false
		out = append(out, t)
	}
	prevValue := func() bool { // the last token ends a value: a / after it divides
		if len(out) == 0 {
			return false
		}
		t := out[len(out)-1]
		switch t.k {
		case 'w':
			switch t.s {
			case "return", "split", "if", "unless", "and", "or", "not", "when", "typeof", "grep", "map", "join",
				"keys", "values", "each", "print", "say", "sort", "delete", "exists", "defined", "scalar", "my", "our", "local", "for", "foreach", "reverse", "push", "unshift":
				return false
			}
			return true
		case 'v', 's', 'x':
			return true
		}
		return t.s == ")" || t.s == "]" || t.s == "}"
	}
	for i < len(code) && len(out) < maxToks {
		c := code[i]
		switch {
		case c == '\n':
			nl = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
			continue
		case c == '\\' && i+1 < len(code) && code[i+1] == '\n':
			i += 2
			continue
		}
		// Comments.
		if cfg.hash && c == '#' {
			i = skipLine(code, i)
			continue
		}
		if cfg.pwsh && c == '<' && i+1 < len(code) && code[i+1] == '#' {
			i = skipTo(code, i+2, "#>")
			continue
		}
		if cfg.slashes && c == '/' && i+1 < len(code) && (code[i+1] == '/' || code[i+1] == '*') {
			if code[i+1] == '/' {
				i = skipLine(code, i)
			} else {
				i = skipTo(code, i+2, "*/")
			}
			continue
		}
		if cfg.dashes && c == '-' && i+1 < len(code) && code[i+1] == '-' {
			if cfg.luaLong && i+2 < len(code) && code[i+2] == '[' {
				if _, _, end, ok := luaLong(code, i+2); ok {
					i = end
					continue
				}
			}
			i = skipLine(code, i)
			continue
		}
		if cfg.dashes && !cfg.luaLong && c == '(' && i+1 < len(code) && code[i+1] == '*' {
			i = skipTo(code, i+2, "*)")
			continue
		}
		if cfg.semi && c == ';' {
			i = skipLine(code, i)
			continue
		}
		// Strings.
		if c == '"' || c == '\'' {
			t, end := lexString(code, i, c, cfg, false)
			emit(t)
			i = end
			continue
		}
		if c == '`' && cfg.backtick != 0 {
			t, end := lexString(code, i, '`', cfg, false)
			if cfg.backtick == 'x' {
				t.k = 'x'
			} else if strings.Contains(t.s, "${") {
				t.dyn = true
			}
			emit(t)
			i = end
			continue
		}
		if cfg.luaLong && c == '[' && i+1 < len(code) && (code[i+1] == '[' || code[i+1] == '=') {
			if vs, ve, end, ok := luaLong(code, i); ok {
				emit(tok{k: 's', s: code[vs:ve], start: i, end: end, vs: vs, ve: ve})
				i = end
				continue
			}
		}
		if cfg.braces && c == '{' {
			end := matchBrace(code, i)
			vs, ve := i+1, end-1
			if ve < vs {
				ve = vs
			}
			emit(tok{k: 's', s: code[vs:ve], start: i, end: end, vs: vs, ve: ve})
			i = end
			continue
		}
		if cfg.regex && c == '/' && !prevValue() {
			end := skipDelimited(code, i+1, '/')
			emit(tok{k: 'r', s: "regex", start: i, end: end})
			i = end
			continue
		}
		if cfg.triple && isIdentStart(c) {
			// String prefixes: r"", b'', f"", rb"", u"".
			j := i
			for j < len(code) && j-i < 3 && strings.IndexByte("rRbBfFuU", code[j]) >= 0 {
				j++
			}
			if j > i && j < len(code) && (code[j] == '"' || code[j] == '\'') {
				pre := strings.ToLower(code[i:j])
				t, end := lexString(code, j, code[j], cfg, strings.Contains(pre, "r"))
				t.start = i
				if strings.Contains(pre, "f") && strings.Contains(strings.ReplaceAll(t.s, "{{", ""), "{") {
					t.dyn = true
				}
				emit(t)
				i = end
				continue
			}
		}
		// Variables.
		if (c == '$' || c == '@' || c == '%') && i+1 < len(code) && !cfg.elisp && (cfg.interp == '$' || cfg.quoteLike || cfg.arrow) {
			// % and @ sigils are perl's (ruby's @ivars too); elsewhere they are
			// operators.
			if c == '$' || c == '@' && cfg.quoteLike || c == '%' && cfg.interp == '$' && cfg.quoteLike && !prevValue() {
				j := i + 1
				if c == '$' && j < len(code) && (code[j] == '$' || code[j] == '#') && cfg.quoteLike {
					j++
				}
				for j < len(code) && (isIdent(code[j]) || code[j] == ':' && j+1 < len(code) && (code[j+1] == ':' || cfg.pwsh && isIdentStart(code[j+1]))) {
					if code[j] == ':' && code[j+1] == ':' {
						j += 2
						continue
					}
					j++
				}
				if j > i+1 {
					emit(tok{k: 'v', s: code[i:j], start: i, end: j})
					i = j
					continue
				}
			}
		}
		if cfg.pwsh && c == '[' {
			// [System.IO.File]::ReadAllText → word System.IO.File.ReadAllText
			j := i + 1
			for j < len(code) && (isIdent(code[j]) || code[j] == '.') {
				j++
			}
			if j > i+1 && j+2 < len(code) && code[j] == ']' && code[j+1] == ':' && code[j+2] == ':' {
				k := j + 3
				for k < len(code) && isIdent(code[k]) {
					k++
				}
				emit(tok{k: 'w', s: code[i+1:j] + "." + code[j+3:k], start: i, end: k})
				i = k
				continue
			}
		}
		// Words.
		if cfg.bare && isBareStart(c) || cfg.elisp && isLispWord(c) && c != '.' && !(c >= '0' && c <= '9') {
			j := i
			for j < len(code) && (cfg.elisp && isLispWord(code[j]) || !cfg.elisp && isBare(code[j], cfg)) {
				j++
			}
			emit(tok{k: 'w', s: code[i:j], start: i, end: j})
			i = j
			continue
		}
		if isIdentStart(c) || c == '.' && i+1 < len(code) && isIdentStart(code[i+1]) && len(out) > 0 && (out[len(out)-1].s == ")" || out[len(out)-1].s == "]" || out[len(out)-1].k == 's') {
			// quote-like operators: q(…) qq{…} qw[…] qx(…) m/…/ s/…/…/ tr y; ruby %q.
			if cfg.quoteLike {
				if t, end, ok := quoteLike(code, i, cfg); ok {
					emit(t)
					i = end
					continue
				}
			}
			j, name := lexName(code, i, cfg)
			emit(tok{k: 'w', s: name, start: i, end: j})
			i = j
			continue
		}
		if cfg.quoteLike && cfg.interp == '#' && c == '%' && i+2 < len(code) && strings.IndexByte("qQwWxi", code[i+1]) >= 0 && strings.IndexByte("([{<|!/", code[i+2]) >= 0 {
			t, end := lexDelimited(code, i+2, code[i+1] != 'q' && code[i+1] != 'w', cfg)
			t.start = i
			if code[i+1] == 'x' {
				t.k = 'x'
			}
			if code[i+1] == 'w' || code[i+1] == 'W' || code[i+1] == 'i' {
				t.k = 'l' // a list of words
			}
			emit(t)
			i = end
			continue
		}
		if c >= '0' && c <= '9' {
			j := i
			for j < len(code) && (isIdent(code[j]) || code[j] == '.') {
				j++
			}
			emit(tok{k: 'n', s: code[i:j], start: i, end: j})
			i = j
			continue
		}
		// Punctuation; a few two-byte operators are kept whole.
		j := i + 1
		if j < len(code) {
			switch code[i : j+1] {
			case "=>", "==", "!=", "=~", "||", "&&", "->", "::", "..", "**", "<<", ">>", "+=", "?.":
				j++
			}
		}
		emit(tok{k: 'p', s: code[i:j], start: i, end: j})
		i = j
	}
	return out
}

// lexName reads a name with its members: os.path.join, File::Path::rmtree
// and $x->method are one word, their separators made dots.
func lexName(code string, i int, cfg lexCfg) (int, string) {
	var b strings.Builder
	j := i
	if code[j] == '.' {
		b.WriteByte('.')
		j++
	}
	for j < len(code) {
		k := j
		for k < len(code) && (isIdent(code[k]) || cfg.interp == '#' && (code[k] == '?' || code[k] == '!') && k > j) {
			k++
		}
		b.WriteString(code[j:k])
		j = k
		switch {
		case j+1 < len(code) && code[j] == '.' && isIdentStart(code[j+1]):
			b.WriteByte('.')
			j++
		case j+2 < len(code) && code[j] == '?' && code[j+1] == '.' && isIdentStart(code[j+2]):
			b.WriteByte('.')
			j += 2
		case cfg.arrow && j+2 < len(code) && (code[j:j+2] == "::" || code[j:j+2] == "->") && isIdentStart(code[j+2]):
			b.WriteByte('.')
			j += 2
		default:
			return j, b.String()
		}
	}
	return j, b.String()
}

func isBareStart(c byte) bool {
	return c > ' ' && strings.IndexByte("\"'$(){}[];,|&`<>=@#", c) < 0
}

func isBare(c byte, cfg lexCfg) bool {
	if c <= ' ' || strings.IndexByte("\"'(){};,|&`<>", c) >= 0 {
		return false
	}
	if c == '[' || c == ']' || c == '$' {
		return cfg.pwsh && c != '$' && c != '['
	}
	return true
}

func isLispWord(c byte) bool {
	return c > ' ' && strings.IndexByte("\"'()[];`,#", c) < 0
}

func skipLine(code string, i int) int {
	if j := strings.IndexByte(code[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(code)
}

func skipTo(code string, i int, end string) int {
	if j := strings.Index(code[i:], end); j >= 0 {
		return i + j + len(end)
	}
	return len(code)
}

// skipDelimited returns the offset after the closing delim, skipping
// backslash escapes.
func skipDelimited(code string, i int, delim byte) int {
	for i < len(code) {
		switch code[i] {
		case '\\':
			i += 2
			continue
		case delim:
			return i + 1
		case '\n':
			if delim == '/' {
				return i
			}
		}
		i++
	}
	return len(code)
}

// matchBrace returns the offset after the brace matching the one at i.
func matchBrace(code string, i int) int {
	open, cl := code[i], closer(code[i])
	depth := 0
	for j := i; j < len(code); j++ {
		switch code[j] {
		case '\\':
			j++
		case open:
			depth++
		case cl:
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(code)
}

// luaLong reads a Lua long bracket [[…]] or [==[…]==] at i: it returns
// the offsets of the text and the offset after the closing bracket.
func luaLong(code string, i int) (int, int, int, bool) {
	j := i + 1
	for j < len(code) && code[j] == '=' {
		j++
	}
	if j >= len(code) || code[j] != '[' {
		return 0, 0, 0, false
	}
	level := j - i - 1
	closing := "]" + strings.Repeat("=", level) + "]"
	k := strings.Index(code[j+1:], closing)
	if k < 0 {
		return j + 1, len(code), len(code), true
	}
	return j + 1, j + 1 + k, j + 1 + k + len(closing), true
}

// lexString reads a string literal that starts with the quote q at i.
// Triple quotes are recognised when cfg.triple is set.
func lexString(code string, i int, q byte, cfg lexCfg, raw bool) (tok, int) {
	t := tok{k: 's', start: i}
	j := i + 1
	close := string(q)
	if cfg.triple && strings.HasPrefix(code[i:], strings.Repeat(string(q), 3)) {
		close = strings.Repeat(string(q), 3)
		j = i + 3
	}
	t.vs = j
	var b strings.Builder
	escapes := q == '"' || q == '`' || !(cfg.interp == '$' || cfg.interp == '#') // single quotes are near-raw in perl, ruby, php, pwsh, tcl
	for j < len(code) {
		c := code[j]
		if strings.HasPrefix(code[j:], close) {
			if cfg.pwsh && q == '\'' && j+1 < len(code) && code[j+1] == '\'' {
				b.WriteByte('\'')
				j += 2
				continue
			}
			t.ve = j
			t.end = j + len(close)
			t.s = b.String()
			return t, t.end
		}
		esc := byte('\\')
		if cfg.pwsh {
			esc = '`'
		}
		if c == esc && j+1 < len(code) && (escapes && !raw || code[j+1] == q || code[j+1] == esc) {
			if cfg.pwsh && q == '\'' {
				b.WriteByte(c)
				j++
				continue
			}
			d := code[j+1]
			switch {
			case raw:
				b.WriteByte(c)
				b.WriteByte(d)
			case !escapes:
				b.WriteByte(d)
			case d == 'n':
				b.WriteByte('\n')
			case d == 't':
				b.WriteByte('\t')
			case d == '\n':
			case d == q || d == '\\' || d == '`' || d == '\'' || d == '"' || d == '$':
				b.WriteByte(d)
			default:
				b.WriteByte(c)
				b.WriteByte(d)
			}
			j += 2
			continue
		}
		if q != '\'' && cfg.interp != 0 && c == cfg.interp && j+1 < len(code) {
			d := code[j+1]
			if cfg.interp == '#' && d == '{' || cfg.interp == '$' && (isIdentStart(d) || d == '{' || d == '(') {
				t.dyn = true
			}
		}
		if q != '\'' && cfg.interp == '$' && cfg.quoteLike && c == '@' && j+1 < len(code) && (isIdentStart(code[j+1]) || code[j+1] == '{') {
			t.dyn = true
		}
		if q != '\'' && cfg.braces && c == '[' {
			t.dyn = true // tcl command substitution
		}
		b.WriteByte(c)
		j++
	}
	t.ve = len(code)
	t.end = len(code)
	t.s = b.String()
	return t, len(code)
}

// lexDelimited reads the body of a quote-like operator whose opening
// delimiter is at i (perl q(…), ruby %w[…]).
func lexDelimited(code string, i int, interp bool, cfg lexCfg) (tok, int) {
	open := code[i]
	cl := closer(open)
	t := tok{k: 's', vs: i + 1}
	depth := 1
	j := i + 1
	for j < len(code) {
		c := code[j]
		if c == '\\' {
			j += 2
			continue
		}
		if c == open && open != cl {
			depth++
		} else if c == cl {
			depth--
			if depth == 0 {
				break
			}
		}
		if interp && (c == '$' || c == '@' || c == '#') && j+1 < len(code) && (isIdentStart(code[j+1]) || code[j+1] == '{') {
			t.dyn = true
		}
		j++
	}
	if j > len(code) {
		j = len(code)
	}
	t.ve = j
	t.s = strings.ReplaceAll(code[i+1:j], "\\"+string(cl), string(cl))
	t.end = min(j+1, len(code))
	return t, t.end
}

// quoteLike reads a perl quote-like operator at i, if there is one.
func quoteLike(code string, i int, cfg lexCfg) (tok, int, bool) {
	if cfg.interp != '$' {
		return tok{}, 0, false
	}
	j := i
	for j < len(code) && isIdent(code[j]) {
		j++
	}
	op := code[i:j]
	switch op {
	case "q", "qq", "qw", "qx", "m", "s", "tr", "y", "qr":
	default:
		return tok{}, 0, false
	}
	k := j
	for k < len(code) && (code[k] == ' ' || code[k] == '\t') && op != "s" && op != "y" && op != "m" {
		k++
	}
	if k >= len(code) || isIdent(code[k]) || code[k] == ' ' || code[k] == ',' || code[k] == ';' || code[k] == ')' || code[k] == '=' && k+1 < len(code) && code[k+1] == '>' {
		return tok{}, 0, false
	}
	if (op == "s" || op == "y" || op == "m") && (code[k] == '=' || code[k] == '.' || code[k] == '-') {
		return tok{}, 0, false
	}
	t, end := lexDelimited(code, k, op != "q" && op != "qw", cfg)
	t.start = i
	switch op {
	case "qx":
		t.k = 'x'
	case "qw":
		t.k = 'l'
	case "m", "qr":
		t.k = 'r'
	case "s", "tr", "y":
		// A second part follows: s/a/b/ or s{a}{b}.
		if closer(code[k]) != code[k] {
			for end < len(code) && (code[end] == ' ' || code[end] == '\t') {
				end++
			}
			if end < len(code) {
				_, end = lexDelimited(code, end, false, cfg)
			}
		} else {
			end = skipDelimited(code, end, code[k])
		}
		t.k = 'r'
	}
	for end < len(code) && isIdent(code[end]) { // flags
		end++
	}
	t.end = end
	return t, end, true
}
