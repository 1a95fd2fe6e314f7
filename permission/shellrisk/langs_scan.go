package shellrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// langInfo describes one language: how its interpreter takes code, how it
// is lexed, and the calls the scan recognises.
type langInfo struct {
	name      string
	cfg       lexCfg
	codeOpt   string // short options taking inline code (python c, perl e E, php r B R E)
	valueOpt  string // short options taking a value, attached or next
	attached  string // short options whose value is the rest of the cluster
	longCode  map[string]bool
	longValue map[string]bool
	lines     bool // -n and -p read operand files, -i edits them in place
	digits    bool // -l and -0 take digits
	calls     map[string]act
	shell     bool   // statements start with a command word (pwsh, tcl)
	lisp      bool   // (call args...)
	bare      bool   // calls without parentheses (perl, ruby, php constructs)
	fold      bool   // names are case-insensitive
	concat    string // the string concatenation operator
}

// actKind is what a recognised call does.
type actKind uint8

const (
	kShell     actKind = iota + 1 // runs a shell command (a list runs as argv)
	kSpawn                        // runs a program with arguments
	kDelete                       // deletes a path
	kDeleteRec                    // deletes a path and everything below it
	kRead                         // reads a file (a URL: network)
	kWrite                        // writes a file
	kOpen                         // opens a file with a mode
	kCopy                         // reads the first path, writes the second
	kNet                          // connects to a URL or host
	kDump                         // returns the whole environment
	kEnv1                         // reads one environment variable
	kEval                         // evaluates code of the same language
	kOpaque                       // does something the scan cannot follow
	kImport                       // imports a module: Opaque unless literal
	kPerlOpen                     // perl open: the mode may run a command
	kMapDelete                    // php array_map('unlink', …)
)

// act is a recognised call. arg is the argument that matters (-1: the
// receiver, a path object); mode is the argument holding an open mode.
type act struct {
	k    actKind
	arg  int
	mode int
	gate string // '|'-separated text one of which must be in the code when the receiver is not named
}

// acts builds a call table from groups of names: "name", "name:N" (the
// argument that matters), "name@gate|gate" (a last-segment match, for
// any receiver, allowed when the code mentions a gate) and "*.name" (any
// receiver).
func acts(groups ...any) map[string]act {
	m := map[string]act{}
	var k actKind
	for _, g := range groups {
		switch g := g.(type) {
		case actKind:
			k = g
		case string:
			for _, f := range strings.Fields(g) {
				ac := act{k: k, mode: -1}
				gate := ""
				if i := strings.IndexByte(f, '@'); i >= 0 {
					gate, f = f[i+1:], f[:i]
					if j := strings.LastIndexByte(gate, ':'); j >= 0 && j+1 < len(gate) && (gate[j+1] >= '0' && gate[j+1] <= '9' || gate[j+1] == '-') {
						f += gate[j:]
						gate = gate[:j]
					}
				}
				if i := strings.LastIndexByte(f, ':'); i >= 0 && i+1 < len(f) && (f[i+1] >= '0' && f[i+1] <= '9' || f[i+1] == '-') {
					n := 0
					neg := f[i+1] == '-'
					for _, d := range f[i+1:] {
						if d >= '0' && d <= '9' {
							n = n*10 + int(d-'0')
						}
					}
					if neg {
						n = -1
					}
					ac.arg, f = n, f[:i]
				}
				if k == kOpen {
					ac.mode = ac.arg + 1
				}
				if gate != "" {
					ac.gate = gate
					if !strings.HasPrefix(f, "*.") {
						f = "*." + f
					}
				}
				m[f] = ac
			}
		}
	}
	return m
}

// lval is the value of an expression in the code, as far as the scan can
// tell.
type lval struct {
	s      string
	ok     bool // s is the whole value, known before the code runs
	list   []lval
	isList bool
	obj    map[string]lval // an object literal's keys
	path   bool            // a path object (pathlib): / joins
	glob   bool            // the value is a glob pattern
	sp     risk.Span
}

// codeScan is the state of one scan of interpreter code.
type codeScan struct {
	a     *analyzer
	c     *call
	li    *langInfo
	code  string
	toks  []tok
	match []int
	m     codeMap
	vars  map[string]lval
	// alias maps a name bound by python's "from M import N as A" or
	// "import M as A" to what it stands for (N, M).
	alias map[string]string
	dyn   bool // the code holds parts only known at run time
	depth int
	calls int
	ci    *chainIndex     // built by chains on first use
	gates map[string]bool // mentions' answers
	path  int8            // loadsPath's answer: 0 not yet asked, 1 yes, -1 no
}

// maxLangCalls bounds the calls one scan acts on.
const maxLangCalls = 512

// matchBrackets pairs ( [ { with their closers; -1 when unpaired.
func matchBrackets(toks []tok) []int {
	m := make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		m[i] = -1
		if t.k != 'p' {
			continue
		}
		switch t.s {
		case "(", "[", "{":
			stack = append(stack, i)
		case ")", "]", "}":
			for len(stack) > 0 {
				j := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if closer(toks[j].s[0]) == t.s[0] {
					m[i], m[j] = j, i
					break
				}
			}
		}
	}
	return m
}

func (s *codeScan) is(i int, p string) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].k == 'p' && s.toks[i].s == p
}

func (s *codeScan) word(i int) string {
	if i >= 0 && i < len(s.toks) && s.toks[i].k == 'w' {
		if s.li.fold {
			return strings.ToLower(s.toks[i].s)
		}
		return s.toks[i].s
	}
	return ""
}

func (s *codeScan) tspan(lo, hi int) risk.Span {
	if lo >= hi || lo < 0 || hi > len(s.toks) {
		return s.m.outer
	}
	return s.m.span(s.toks[lo].start, s.toks[hi-1].end)
}

// skip returns the index after the token at i, jumping over a bracketed
// group.
func (s *codeScan) skip(i int) int {
	if s.match[i] > i {
		return s.match[i] + 1
	}
	return i + 1
}

// stmtEnd returns the end of the statement or argument list that starts
// at i: a ; or newline, a closer it did not open, or a low-precedence
// word (or, and, if, unless, |).
func (s *codeScan) stmtEnd(i int) int {
	s.step()
	n := len(s.toks)
	if i >= n {
		return min(i, n)
	}
	if s.stmtStop(i) {
		return i
	}
	ci := s.chains()
	// The first token after i along its chain that ends the statement,
	// if it lies within maxStmtSteps-1 steps; else the token maxStmtSteps
	// steps along.
	if j := int(ci.stop[s.skip(i)]); j < n && ci.depth[i]-ci.depth[j] < maxStmtSteps {
		return j
	}
	return int(ci.far[i])
}

// splitArgs cuts tokens [lo,hi) at top-level commas (and =>), returning
// the positional arguments and the keyword ones (name=value, name: value).
func (s *codeScan) splitArgs(lo, hi int) ([][2]int, map[string][2]int) {
	var pos [][2]int
	var kw map[string][2]int
	start := lo
	flush := func(end int) {
		if end <= start {
			return
		}
		if end-start >= 3 && s.toks[start].k == 'w' && (s.is(start+1, "=") || s.is(start+1, ":") && s.li != &langs().python) {
			if kw == nil {
				kw = map[string][2]int{}
			}
			kw[s.toks[start].s] = [2]int{start + 2, end}
			return
		}
		if len(pos) < 64 {
			pos = append(pos, [2]int{start, end})
		}
	}
	if lo < hi {
		sep := s.chains().sep
		for i := int(sep[lo]); i < hi; i = int(sep[i+1]) {
			s.step()
			flush(i)
			start = i + 1
		}
	}
	flush(hi)
	return pos, kw
}

// scan walks the tokens once and acts on every call it recognises.
func (s *codeScan) scan() {
	s.assignments()
	for i := 0; i < len(s.toks) && s.calls < maxLangCalls; i++ {
		s.step()
		t := s.toks[i]
		switch t.k {
		case 'x':
			s.calls++
			s.runShell(s.strVal(t), s.m.span(t.start, t.end), "a command string")
		case 's':
			if s.li.cfg.backtick == 't' && s.is(i-1, "$") && strings.HasPrefix(s.code[t.start:], "`") {
				s.calls++
				s.runShell(s.strVal(t), s.m.span(t.start, t.end), "Bun's $ shell")
			}
		case 'v':
			s.envVar(i)
			if s.is(i+1, "(") && s.li.cfg.interp == '$' && !s.li.shell {
				// $f(...): a call of a function named at run time.
				v, ok := s.vars[t.s]
				if ok && v.ok {
					if ac, name, found := s.lookup(v.s); found {
						s.act(ac, name, i, i+1)
						continue
					}
				}
				s.a.opaque(s.tspan(i, s.skip(i+1)), s.li.name+" code calls a function whose name is only known at run time, which cannot be checked")
			}
		case 'w':
			s.envWord(i)
			switch {
			case s.li.lisp:
				if s.is(i-1, "(") {
					s.lispCall(i)
				}
			case s.li.shell && s.cmdStart(i):
				s.command(i)
			case s.li == &langs().osa:
				s.osaStatement(i)
			case s.is(i+1, "("):
				if ac, name, ok := s.lookup(t.s); ok {
					s.act(ac, name, i, i+1)
				}
			case s.li.bare && !s.is(i-1, ".") && !s.is(i-1, "->") && !s.is(i+1, "=") && !s.is(i+1, "=>") && !s.is(i+1, ","):
				if ac, name, ok := s.lookup(t.s); ok && s.bareArgs(i) {
					s.act(ac, name, i, -1)
				}
			}
		}
	}
}

// bareArgs reports whether a name without parentheses is followed by
// arguments (a string, a variable, a word), so it is a call.
func (s *codeScan) bareArgs(i int) bool {
	if i+1 >= len(s.toks) || s.toks[i+1].nl {
		return false
	}
	switch s.toks[i+1].k {
	case 's', 'v', 'w', 'l', 'x':
		return true
	}
	return s.is(i+1, "[") || s.is(i+1, "(")
}

// lookup finds a callee in the language's table.
func (s *codeScan) lookup(q string) (act, string, bool) {
	if s.li.fold {
		q = strings.ToLower(q)
	}
	if len(s.alias) > 0 {
		first, rest, _ := strings.Cut(q, ".")
		if to, ok := s.alias[first]; ok {
			q = to
			if rest != "" {
				q += "." + rest
			}
		}
	}
	if ac, ok := s.li.calls[q]; ok {
		return ac, q, true
	}
	last := q[strings.LastIndexByte(q, '.')+1:]
	ac, ok := s.li.calls["*."+last]
	if !ok {
		return act{}, "", false
	}
	if ac.gate != "" && !s.mentions(ac.gate) {
		return act{}, "", false
	}
	return ac, q, true
}

// loadsPath reports whether javascript code names node's path module, so
// that p.join(…) is path.join. The answer is kept for the scan, like
// mentions'.
func (s *codeScan) loadsPath() bool {
	if s.path == 0 {
		s.a.work += 1 + 3*len(s.code)/64 // three searches, see mentions
		s.path = -1
		if strings.Contains(s.code, `"path"`) || strings.Contains(s.code, `'path'`) || strings.Contains(s.code, "node:path") {
			s.path = 1
		}
	}
	return s.path > 0
}

// mentions reports whether the code or its command line (-MLWP::Simple,
// -rfileutils name modules too) holds one of the '|'-separated texts of a
// gate. The answer is kept for the scan: the gate of a callee like *.run
// is asked at every call of a method of that name, and searching the
// whole code each time made a scan of `x.run(` repeated quadratic.
func (s *codeScan) mentions(gate string) bool {
	if hit, ok := s.gates[gate]; ok {
		return hit
	}
	cmd := s.a.text(s.c.sp)
	hit := false
	for _, g := range strings.Split(gate, "|") {
		// A search costs a step per 64 bytes it reads (a vectorised
		// search reads about that many at once).
		s.a.work += 1 + (len(s.code)+len(cmd))/64
		if strings.Contains(s.code, g) || strings.Contains(cmd, g) {
			hit = true
			break
		}
	}
	if s.gates == nil {
		s.gates = map[string]bool{}
	}
	s.gates[gate] = hit
	return hit
}

// callArgs returns the arguments of the call whose callee is at i: in
// parentheses at open, or up to the end of the statement when open < 0.
func (s *codeScan) callArgs(i, open int) (pos []lval, kw map[string]lval, end int) {
	lo, hi := i+1, 0
	if open >= 0 {
		lo = open + 1
		hi = s.match[open]
		if hi < 0 {
			hi = len(s.toks)
		}
		end = min(hi+1, len(s.toks))
	} else {
		hi = s.stmtEnd(lo)
		end = hi
	}
	p, k := s.splitArgs(lo, hi)
	for _, r := range p {
		pos = append(pos, s.eval(r[0], r[1], 0))
	}
	if len(k) > 0 {
		kw = map[string]lval{}
		for n, r := range k {
			kw[n] = s.eval(r[0], r[1], 0)
		}
	}
	return pos, kw, end
}

// strVal is the value of a string token.
func (s *codeScan) strVal(t tok) lval {
	return lval{s: t.s, ok: !t.dyn, sp: s.m.valSpan(t)}
}

const maxEvalDepth = 8

// eval evaluates tokens [lo,hi) as far as a scan can: literals, lists,
// objects, concatenation, variables assigned literals, path joins and the
// home directory. Anything else is a value known only at run time.
func (s *codeScan) eval(lo, hi, depth int) lval {
	s.step()
	dyn := lval{sp: s.tspan(lo, hi)}
	if lo >= hi || depth > maxEvalDepth {
		return dyn
	}
	toks := s.toks
	// Strip a wrapping group: ("x"), and lists [a, b], (a, b), {k: v}.
	if s.match[lo] == hi-1 {
		inner := lo + 1
		pos, kw := s.splitArgs(inner, hi-1)
		switch toks[lo].s {
		case "(":
			if len(pos) == 1 && len(kw) == 0 && !s.hasComma(inner, hi-1) {
				return s.eval(inner, hi-1, depth+1)
			}
			fallthrough
		case "[":
			v := lval{isList: true, ok: true, sp: dyn.sp}
			for _, r := range pos {
				e := s.eval(r[0], r[1], depth+1)
				v.ok = v.ok && e.ok
				v.list = append(v.list, e)
			}
			return v
		case "{":
			v := lval{obj: map[string]lval{}, sp: dyn.sp}
			for n, r := range kw {
				v.obj[strings.ToLower(n)] = s.eval(r[0], r[1], depth+1)
			}
			// perl/ruby hashes: key => value pairs come split as positional.
			for j := 0; j+1 < len(pos); j += 2 {
				k := toks[pos[j][0]]
				if pos[j][1]-pos[j][0] == 1 && (k.k == 's' || k.k == 'w') {
					v.obj[strings.ToLower(strings.TrimPrefix(k.s, ":"))] = s.eval(pos[j+1][0], pos[j+1][1], depth+1)
				}
			}
			return v
		}
	}
	if hi-lo > 2 && toks[lo].k == 'p' && toks[lo].s == "@" && s.match[lo+1] == hi-1 {
		return s.eval(lo+1, hi, depth+1) // pwsh @(…)
	}
	// Concatenation.
	if op := s.li.concat; op != "" {
		var parts []lval
		start := lo
		next := s.chains().concat
		for i := int(next[lo]); i < hi; i = int(next[s.skip(i)]) {
			s.step()
			if i > start {
				parts = append(parts, s.eval(start, i, depth+1))
				start = i + 1
			}
		}
		if len(parts) > 0 {
			parts = append(parts, s.eval(start, hi, depth+1))
			v := lval{ok: true, sp: dyn.sp}
			var b strings.Builder
			for _, p := range parts {
				v.ok = v.ok && p.ok && !p.isList
				v.path = v.path || p.path
				b.WriteString(p.s)
			}
			v.s = b.String()
			return v
		}
	}
	// Python pathlib: Path.home() / ".ssh" / "id_rsa".
	if s.li == &langs().python {
		var parts []lval
		start := lo
		slash := s.chains().slash
		for i := int(slash[min(lo+1, len(toks))]); i < hi; i = int(slash[s.skip(i)]) {
			s.step()
			parts = append(parts, s.eval(start, i, depth+1))
			if !parts[0].path {
				break
			}
			start = i + 1
		}
		if len(parts) > 0 && parts[0].path {
			parts = append(parts, s.eval(start, hi, depth+1))
			v := joinPath(parts)
			v.sp = dyn.sp
			return v
		}
	}
	t := toks[lo]
	if hi-lo == 1 {
		switch t.k {
		case 's':
			return s.strVal(t)
		case 'l':
			v := lval{isList: true, ok: !t.dyn, sp: s.m.valSpan(t)}
			for _, f := range strings.Fields(t.s) {
				v.list = append(v.list, lval{s: f, ok: !t.dyn, sp: v.sp})
			}
			return v
		case 'n':
			return lval{s: t.s, ok: true, sp: dyn.sp}
		case 'v':
			if v, ok := s.vars[t.s]; ok {
				if !v.ok {
					v.sp = dyn.sp
				}
				return v
			}
			if home := s.homeVar(t.s); home {
				return lval{s: "~", ok: true, sp: dyn.sp}
			}
			return dyn
		case 'w':
			if v, ok := s.vars[t.s]; ok {
				if !v.ok {
					v.sp = dyn.sp
				}
				return v
			}
			switch t.s {
			case "true", "false", "True", "False", "None", "nil", "null", "undefined", "t":
				return lval{s: t.s, ok: true, sp: dyn.sp}
			case "process.env.HOME", "process.env.USERPROFILE", "Bun.env.HOME", "Dir.home", "ENV.HOME":
				return lval{s: "~", ok: true, sp: dyn.sp, path: true}
			}
			if s.li.shell && !s.dyn && !strings.ContainsAny(t.s, "$") {
				return lval{s: t.s, ok: true, sp: dyn.sp}
			}
			return dyn
		}
	}
	// NAME[...] / NAME{...} / NAME(...) indexing the environment: HOME.
	if hi-lo == 4 && (t.k == 'w' || t.k == 'v') && s.match[lo+1] == hi-1 {
		switch t.s {
		case "os.environ", "ENV", "$ENV", "$_SERVER", "$_ENV", "$env", "process.env":
			if k := toks[lo+2]; (k.k == 's' || k.k == 'w') && (k.s == "HOME" || k.s == "USERPROFILE") {
				return lval{s: "~", ok: true, sp: dyn.sp, path: true}
			}
		}
	}
	// Calls: NAME(...), possibly a method on the value before it.
	if t.k == 'w' && lo+1 < hi && s.is(lo+1, "(") && s.match[lo+1] == hi-1 {
		return s.evalCall(lo, depth)
	}
	if s.is(hi-1, ")") && s.match[hi-1] > lo {
		if o := s.match[hi-1]; o-1 >= lo && toks[o-1].k == 'w' && strings.HasPrefix(toks[o-1].s, ".") {
			return s.evalCall(o-1, depth)
		}
	}
	if t.k == 'w' && (t.s == "glob" || t.s == "Dir.glob") && hi-lo >= 2 {
		v := s.eval(lo+1, hi, depth+1)
		v.glob = true
		return v
	}
	return dyn
}

func (s *codeScan) hasComma(lo, hi int) bool {
	if lo >= hi {
		return false
	}
	s.step()
	return int(s.chains().comma[lo]) < hi
}

// homeVar reports a variable that holds the home directory.
func (s *codeScan) homeVar(name string) bool {
	switch strings.ToLower(name) {
	case "$home", "$env:home", "$env:userprofile":
		return true
	}
	return false
}

// evalCall evaluates a call whose callee is at i with arguments at i+1.
func (s *codeScan) evalCall(i, depth int) lval {
	name := s.toks[i].s
	open := i + 1
	end := s.match[open]
	sp := s.tspan(i, end+1)
	dyn := lval{sp: sp}
	if end < 0 || depth > maxEvalDepth {
		return dyn
	}
	pr, _ := s.splitArgs(open+1, end)
	args := make([]lval, 0, len(pr))
	for _, r := range pr {
		args = append(args, s.eval(r[0], r[1], depth+1))
	}
	if strings.HasPrefix(name, ".") {
		recv := s.eval(s.exprStart(i), i, depth+1)
		switch name {
		case ".joinpath", ".join":
			if recv.path {
				v := joinPath(append([]lval{recv}, args...))
				v.sp = sp
				return v
			}
		case ".homedir":
			return lval{s: "~", ok: true, sp: sp, path: true}
		case ".expanduser", ".resolve", ".absolute", ".expand_path":
			recv.sp = sp
			return recv
		}
		return dyn
	}
	last := name[strings.LastIndexByte(name, '.')+1:]
	if s.li == &langs().js && (last == "join" || last == "resolve") && strings.Contains(name, ".") &&
		(strings.HasPrefix(name, "path.") || s.loadsPath()) {
		name = "path.join" // const p = require("path"); p.join(...)
	}
	switch {
	case name == "Path.home" || name == "pathlib.Path.home" || name == "os.homedir" || name == "Dir.home" || name == "os.path.expanduser" && len(args) == 1 && args[0].ok && args[0].s == "~":
		return lval{s: "~", ok: true, sp: sp, path: true}
	case name == "os.getenv" || name == "os.environ.get" || name == "getenv" || name == "ENV.fetch" || name == "Deno.env.get":
		if len(args) > 0 && args[0].ok && (args[0].s == "HOME" || args[0].s == "USERPROFILE") {
			return lval{s: "~", ok: true, sp: sp, path: true}
		}
	case last == "Path" || last == "PurePath" || last == "PosixPath" || name == "os.path.join" || name == "path.join" ||
		name == "path.resolve" || name == "path.posix.join" || name == "File.join" || name == "File.expand_path" ||
		name == "os.path.expanduser" || name == "os.path.abspath" || name == "os.path.realpath" || name == "os.path.normpath" ||
		name == "Pathname.new" || name == "URI" || name == "URI.parse" || name == "new URL" || name == "str" || name == "String" ||
		name == "path" && s.li == &langs().perl:
		if len(args) == 0 {
			if last == "Path" {
				return lval{s: ".", ok: true, sp: sp, path: true}
			}
			return dyn
		}
		v := joinPath(args)
		v.sp = sp
		return v
	case name == "glob.glob" || name == "glob.iglob" || name == "glob" || name == "Dir.glob" || name == "fg.sync" || name == "globSync":
		if len(args) > 0 {
			v := args[0]
			v.glob, v.sp = true, sp
			return v
		}
	}
	return dyn
}

// exprStart returns where the primary expression ending just before i
// starts: Path("x").read_text → the index of Path.
func (s *codeScan) exprStart(i int) int {
	j := i - 1
	for n := 0; j >= 0 && n < 16; n++ {
		s.step()
		t := s.toks[j]
		if t.k == 'p' && (t.s == ")" || t.s == "]") && s.match[j] >= 0 {
			j = s.match[j] - 1
			if j >= 0 && s.toks[j].k == 'w' {
				if strings.HasPrefix(s.toks[j].s, ".") {
					j--
					continue
				}
				return j
			}
			return j + 1
		}
		if t.k == 'w' || t.k == 'v' || t.k == 's' {
			if t.k == 'w' && strings.HasPrefix(t.s, ".") {
				j--
				continue
			}
			return j
		}
		break
	}
	return i
}

// joinPath joins path parts as os.path.join does: an absolute part starts
// over.
func joinPath(parts []lval) lval {
	v := lval{ok: true, path: true}
	var p string
	for _, x := range parts {
		if !x.ok || x.isList {
			v.ok = false
			continue
		}
		v.glob = v.glob || x.glob
		switch {
		case p == "" || strings.HasPrefix(x.s, "/") || x.s == "~" || strings.HasPrefix(x.s, "~/"):
			p = x.s
		case x.s == "":
		default:
			p = strings.TrimSuffix(p, "/") + "/" + x.s
		}
	}
	v.s = p
	return v
}

// assignments records variables assigned a value the scan can evaluate:
// cmd = "rm -rf x"; os.system(cmd). A variable assigned twice is known
// only at run time.
func (s *codeScan) assignments() {
	switch s.li {
	case &langs().python:
		s.imports()
	case &langs().js:
		s.destructures()
	}
	for i := 0; i+2 < len(s.toks); i++ {
		s.step()
		t := s.toks[i]
		if (t.k != 'w' && t.k != 'v') || !s.is(i+1, "=") || strings.HasPrefix(t.s, ".") {
			continue
		}
		if p := i - 1; p >= 0 && !s.toks[i].nl {
			switch {
			case s.is(p, ";"), s.is(p, "{"), s.is(p, "("):
			case s.toks[p].k == 'w' && (s.toks[p].s == "my" || s.toks[p].s == "our" || s.toks[p].s == "local" || s.toks[p].s == "const" || s.toks[p].s == "let" || s.toks[p].s == "var" || s.toks[p].s == "set"):
			default:
				continue
			}
		}
		end := s.stmtEnd(i + 2)
		if s.li == &langs().js {
			if j := int(s.chains().comma[i+2]); j < end {
				end = j
			}
		}
		if s.vars == nil {
			s.vars = map[string]lval{}
		}
		if _, seen := s.vars[t.s]; seen || len(s.vars) >= 256 {
			s.vars[t.s] = lval{}
			continue
		}
		s.vars[t.s] = s.eval(i+2, end, 0)
	}
}

// pathArg turns a value into the arg a.access judges. "~" stands for the
// home directory (os.path.expanduser, Path.home(), $HOME).
func (s *codeScan) pathArg(v lval) arg {
	if !v.ok || v.isList {
		return arg{dyn: true, sp: v.sp}
	}
	p := v.s
	if p == "~" || strings.HasPrefix(p, "~/") {
		if s.a.env.Home == "" {
			return arg{dyn: true, sp: v.sp}
		}
		p = s.a.env.Home + p[1:]
	}
	return arg{s: p, sp: v.sp, glob: v.glob && hasGlob(p)}
}

// isURL reports a value that names a remote resource.
func isURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 || i > 10 {
		return false
	}
	switch strings.ToLower(s[:i]) {
	case "http", "https", "ftp", "ftps", "ws", "wss", "tcp", "udp", "ssl", "tls", "sftp", "gopher", "telnet", "ldap", "smb":
		return true
	}
	return false
}

func (s *codeScan) what(name string) string {
	return s.li.name + " code (" + name + ")"
}

// act performs what a recognised call does. i is the callee; open the
// opening parenthesis, or -1 for a call without one.
func (s *codeScan) act(ac act, name string, i, open int) {
	s.calls++
	pos, kw, end := s.callArgs(i, open)
	sp := s.tspan(i, end)
	get := func(n int) (lval, bool) {
		if n < 0 {
			recv := s.eval(s.exprStart(i), i, 0)
			return recv, recv.path
		}
		if n < len(pos) {
			return pos[n], true
		}
		return lval{sp: sp}, false
	}
	w := s.what(name)
	switch ac.k {
	case kShell, kSpawn:
		v, ok := get(ac.arg)
		if !ok {
			if c, has := kw["args"]; has {
				v, ok = c, true
			} else if c, has := kw["cmd"]; has {
				v, ok = c, true
			}
		}
		if !ok {
			s.a.opaque(sp, w+" runs a command the analyser cannot tell")
			return
		}
		var rest []lval
		if ac.arg+1 < len(pos) && ac.arg >= 0 {
			rest = pos[ac.arg+1:]
		}
		s.spawn(v, rest, kw, sp, w, ac.k == kShell)
	case kDelete, kDeleteRec:
		v, ok := get(ac.arg)
		if !ok {
			return
		}
		rec := ac.k == kDeleteRec
		for _, k := range []string{"recursive", "force"} {
			if o, has := kw[k]; has && o.ok && (o.s == "true" || o.s == "True" || o.s == "t" || o.s == "1") {
				rec = true
			}
			for _, p := range pos {
				if o, has := p.obj[k]; has && o.ok && o.s == "true" {
					rec = true
				}
			}
		}
		s.delete(v, sp, w, rec)
		if ac.k == kDelete && ac.arg >= 0 && s.li.bare {
			for _, p := range pos[min(ac.arg+1, len(pos)):] {
				s.delete(p, sp, w, rec) // perl unlink LIST
			}
		}
	case kMapDelete:
		if len(pos) >= 2 && pos[0].ok && (pos[0].s == "unlink" || pos[0].s == "rmdir") {
			s.delete(pos[1], sp, w, false)
		}
	case kRead, kWrite:
		v, ok := get(ac.arg)
		if !ok {
			return
		}
		s.file(v, ac.k == kWrite, sp, w)
	case kCopy:
		if v, ok := get(ac.arg); ok {
			s.file(v, false, sp, w)
		}
		if v, ok := get(ac.arg + 1); ok {
			s.file(v, true, sp, w)
		}
	case kOpen:
		v, ok := get(ac.arg)
		if !ok {
			return
		}
		mode, hasMode := lval{}, false
		if ac.mode >= 0 && ac.mode < len(pos) {
			mode, hasMode = pos[ac.mode], true
		} else if m, has := kw["mode"]; has {
			mode, hasMode = m, true
		}
		if v.ok && (strings.HasPrefix(v.s, "|") || strings.HasSuffix(v.s, "|")) && (s.li == &langs().ruby || s.li == &langs().tcl || s.li == &langs().perl) {
			s.runShell(lval{s: strings.Trim(v.s, "| "), ok: true, sp: v.sp}, sp, w)
			return
		}
		write := hasMode && (!mode.ok || strings.ContainsAny(mode.s, "waxc+") || strings.Contains(mode.s, "WRONLY") || strings.Contains(mode.s, "RDWR"))
		s.file(v, write, sp, w)
	case kPerlOpen:
		s.perlOpen(pos, sp, w)
	case kNet:
		v, _ := get(ac.arg)
		s.net(v, pos, sp, w)
	case kDump:
		if name == "getenv" && len(pos) > 0 {
			if pos[0].ok && secretName(pos[0].s) {
				s.secretVar(sp, pos[0].s)
			}
			return
		}
		s.dump(sp, w)
	case kEnv1:
		if v, ok := get(ac.arg); ok && v.ok && secretName(v.s) {
			s.secretVar(sp, v.s)
		}
	case kEval:
		v, ok := get(ac.arg)
		if ok && v.ok && !v.isList && s.depth < maxLangDepth {
			s.a.find(risk.Execute, sp, w+" evaluates code, which is scanned as "+s.li.name)
			s.a.langCode(s.li, codeSrc{text: v.s, sp: v.sp}, s.c, s.depth+1)
			return
		}
		s.a.opaque(sp, w+" evaluates code built at run time, which cannot be checked")
	case kImport:
		if v, ok := get(ac.arg); !ok || !v.ok {
			s.a.opaque(sp, w+" loads a module named at run time, which cannot be checked")
		}
	case kOpaque:
		s.a.opaque(sp, w+" calls code the analyser cannot name")
	}
}

// spawn runs a command value: a list runs as argv, a program with a list
// of arguments too, a literal string is parsed as shell.
func (s *codeScan) spawn(v lval, rest []lval, kw map[string]lval, sp risk.Span, w string, shell bool) {
	if v.obj != nil { // Deno.run({cmd: [...]}), Bun.spawn({cmd: [...]})
		if c, ok := v.obj["cmd"]; ok {
			v = c
		} else if c, ok := v.obj["args"]; ok {
			v = c
		}
	}
	switch {
	case v.isList:
		s.argv(v.list, sp, w)
	case len(rest) > 0 && rest[0].isList && !shell:
		s.argv(append([]lval{v}, rest[0].list...), sp, w)
	case len(rest) > 0 && rest[0].obj != nil && !shell:
		if a, ok := rest[0].obj["args"]; ok && a.isList {
			s.argv(append([]lval{v}, a.list...), sp, w)
			return
		}
		s.runShell(v, sp, w)
	case len(rest) > 0 && (s.li.bare || !shell) && allStrings(rest):
		// perl system("rm", "-rf", "x"), ruby system("rm", "-rf", "x").
		s.argv(append([]lval{v}, rest...), sp, w)
	case kw["ArgumentList"].ok || kw["argumentlist"].ok:
		s.argv([]lval{v, kw["argumentlist"]}, sp, w)
	default:
		s.runShell(v, sp, w)
	}
}

func allStrings(vs []lval) bool {
	for _, v := range vs {
		if v.isList || v.obj != nil {
			return false
		}
	}
	return true
}

// runShell parses a command string as shell.
func (s *codeScan) runShell(v lval, sp risk.Span, w string) {
	if !v.ok {
		s.a.opaque(sp, w+" runs a shell command built at run time, which cannot be checked")
		return
	}
	s.a.find(risk.Execute, sp, w+" runs the shell command "+quote(v.s))
	s.a.reparse(v.s, v.sp, false)
}

// argv runs a list of words as a command, without a shell.
func (s *codeScan) argv(list []lval, sp risk.Span, w string) {
	if len(list) == 0 {
		return
	}
	args := make([]arg, 0, len(list))
	var b strings.Builder
	for i, x := range list {
		if x.isList {
			for _, y := range x.list {
				args = append(args, arg{s: y.s, dyn: !y.ok, sp: y.sp})
			}
			continue
		}
		if x.ok && x.s == "" && i > 0 && !x.ok {
			continue
		}
		args = append(args, arg{s: x.s, dyn: !x.ok, sp: x.sp})
		if i < 4 {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(x.s)
		}
	}
	s.a.find(risk.Execute, sp, w+" runs the program "+quote(b.String()))
	s.a.inner(&call{sp: sp, cwd: s.c.cwd}, args, s.c.cwd, false)
}

// delete judges a path the code deletes.
func (s *codeScan) delete(v lval, sp risk.Span, w string, rec bool) {
	if v.isList {
		for _, x := range v.list {
			s.delete(x, sp, w, rec)
		}
		return
	}
	x := s.pathArg(v)
	s.a.access(x, s.c.cwd, false, true)
	what := "a path known only at run time"
	if !x.dyn {
		what = quote(x.s)
	}
	if rec {
		s.a.find(risk.Destructive, sp, w+" deletes "+what+" and everything below it, which cannot be undone")
	} else {
		s.a.find(risk.Destructive, sp, w+" deletes "+what+", which cannot be undone")
	}
}

// file judges a path the code reads or writes; a URL is a network access.
func (s *codeScan) file(v lval, write bool, sp risk.Span, w string) {
	if v.isList {
		return
	}
	if v.ok && isURL(v.s) {
		s.net(v, nil, sp, w)
		return
	}
	if !v.ok && !write {
		return // a read of a path known only at run time: the program is Opaque
	}
	x := s.pathArg(v)
	if x.dyn || isHarmlessDevice(x.s) && write {
		if write && x.dyn {
			s.a.access(x, s.c.cwd, true, false)
			s.a.find(risk.Write, sp, w+" writes a file whose name is only known at run time")
		}
		return
	}
	s.a.access(x, s.c.cwd, write, false)
	if write {
		s.a.find(risk.Write, sp, w+" writes the file "+quote(x.s))
	}
}

// net judges a connection: a literal URL or host names where it goes.
func (s *codeScan) net(v lval, pos []lval, sp risk.Span, w string) {
	if v.isList && len(v.list) > 0 {
		v = v.list[0] // (host, port)
	}
	if v.obj != nil {
		for _, k := range []string{"host", "hostname", "url", "uri", "peeraddr", "peerhost"} {
			if h, ok := v.obj[k]; ok {
				v = h
				break
			}
		}
	}
	if !v.ok || v.s == "" || !looksHost(v.s) {
		for _, p := range pos {
			if p.ok && looksHost(p.s) && !p.isList {
				v = p
				break
			}
		}
	}
	if !v.ok || !looksHost(v.s) {
		s.a.network(sp, "", w+" opens a network connection to a host known only at run time")
		return
	}
	u := arg{s: v.s, sp: v.sp}
	if !strings.Contains(v.s, "://") {
		u.s = "tcp://" + v.s
	}
	s.a.httpURL(w, u)
	host := v.s
	if _, rest, ok := strings.Cut(host, "://"); ok {
		host = rest
	}
	if k := strings.IndexAny(host, "/?#"); k >= 0 {
		host = host[:k]
	}
	s.a.network(sp, quote(host), w+" connects to "+quote(host))
}

// looksHost reports a string that may be a URL or host name.
func looksHost(h string) bool {
	if isURL(h) {
		return true
	}
	if h == "" || len(h) > 255 || strings.ContainsAny(h, " \t\n/\\\"'") {
		return false
	}
	return strings.ContainsAny(h, ".:") || h == "localhost"
}

// dump records a read of the whole environment.
func (s *codeScan) dump(sp risk.Span, w string) {
	s.a.credSource(sp, "the environment")
	s.a.find(risk.Credential, sp, w+" reads the whole environment, which may hold secrets")
}

// perlOpen judges perl's open: 2-argument modes in the name ("<f", ">f",
// "cmd|", "|cmd"), 3-argument modes ("<", ">", "-|", "|-").
func (s *codeScan) perlOpen(pos []lval, sp risk.Span, w string) {
	if len(pos) < 2 {
		return
	}
	if len(pos) == 2 {
		v := pos[1]
		if !v.ok {
			s.a.opaque(sp, w+" opens a file or command named at run time, which cannot be checked")
			return
		}
		t := strings.TrimSpace(v.s)
		switch {
		case strings.HasPrefix(t, ">&") || strings.HasPrefix(t, "<&") || strings.HasPrefix(t, "+<&") || strings.HasPrefix(t, ">>&"):
			// A duplicated file handle, not a file.
		case strings.HasPrefix(t, "|") || strings.HasSuffix(t, "|"):
			s.runShell(lval{s: strings.Trim(t, "| "), ok: true, sp: v.sp}, sp, w)
		case strings.HasPrefix(t, ">") || strings.HasPrefix(t, "+"):
			s.file(lval{s: strings.TrimSpace(strings.TrimLeft(t, "+<>")), ok: true, sp: v.sp}, true, sp, w)
		default:
			s.file(lval{s: strings.TrimSpace(strings.TrimLeft(t, "<")), ok: true, sp: v.sp}, false, sp, w)
		}
		return
	}
	mode, p := pos[1], pos[2]
	if !mode.ok {
		s.a.opaque(sp, w+" opens with a mode known only at run time")
		return
	}
	m := strings.TrimSpace(mode.s)
	switch {
	case strings.Contains(m, "&"):
		// A duplicated file handle, not a file.
	case strings.Contains(m, "|"):
		s.spawn(p, pos[3:], nil, sp, w, len(pos) == 3)
	case strings.ContainsAny(m, ">+"):
		s.file(p, true, sp, w)
	default:
		s.file(p, false, sp, w)
	}
}

// secretVar records a read of one environment variable whose name says it
// holds a secret: like $GITHUB_TOKEN in a shell command, its value can
// reach the output the model reads or the network.
func (s *codeScan) secretVar(sp risk.Span, name string) {
	s.a.credSource(sp, "the variable $"+name)
	s.a.find(risk.Credential, sp, s.li.name+" code reads $"+name+", whose name says it holds a secret")
}

// imports records python's renaming imports: from shutil import rmtree as
// nuke makes nuke("x") shutil.rmtree("x"); import os as o makes o.system
// os.system.
func (s *codeScan) imports() {
	for i := 0; i < len(s.toks); i++ {
		s.step()
		from := ""
		j := i
		switch s.word(i) {
		case "from":
			from = s.word(i + 1)
			if from == "" || s.word(i+2) != "import" {
				continue
			}
			j = i + 3
		case "import":
			if i > 1 && s.word(i-2) == "from" {
				continue
			}
			j = i + 1
		default:
			continue
		}
		if s.is(j, "(") {
			j++
		}
		for n := 0; j < len(s.toks) && n < 64; n++ {
			s.step()
			name := s.word(j)
			if name == "" {
				break
			}
			full := name
			if from != "" {
				full = from + "." + name
			}
			bound := name
			if s.word(j+1) == "as" && s.word(j+2) != "" {
				bound = s.word(j + 2)
				j += 2
			}
			if bound != full {
				if s.alias == nil {
					s.alias = map[string]string{}
				}
				if len(s.alias) < 256 {
					s.alias[bound] = full
				}
			}
			j++
			if !s.is(j, ",") {
				break
			}
			j++
		}
	}
}

// destructures records javascript's renaming bindings: const {execSync:
// run} = require("child_process") and import {rmSync as rm} from "fs" make
// run and rm stand for execSync and rmSync.
func (s *codeScan) destructures() {
	for i := 0; i < len(s.toks); i++ {
		s.step()
		if !s.is(i, "{") || s.match[i] < 0 {
			continue
		}
		end := s.match[i]
		after := s.word(end + 1)
		if !s.is(end+1, "=") && after != "from" {
			continue
		}
		for j := i + 1; j+2 < end; j++ {
			s.step()
			name := s.word(j)
			if name == "" {
				continue
			}
			bound := ""
			switch {
			case s.is(j+1, ":") && s.word(j+2) != "":
				bound = s.word(j + 2)
			case s.word(j+1) == "as" && s.word(j+2) != "":
				bound = s.word(j + 2)
			default:
				continue
			}
			if s.alias == nil {
				s.alias = map[string]string{}
			}
			if len(s.alias) < 256 {
				s.alias[bound] = name
			}
			j += 2
		}
	}
}

// step counts one step of a scan loop in the analyser's work
// (analyzer.work), so that tests bound a scan's work by its code's length.
func (s *codeScan) step() { s.a.work++ }
