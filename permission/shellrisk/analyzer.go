package shellrisk

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// analyzer holds the state of one Analyze call. It is never shared.
type analyzer struct {
	src string // the command string as given; all spans index it
	env Env
	res Result

	top, fr frame // the top-level frame and the one being walked
	depth   int   // re-parse depth of fr
	// codeText is set when a static word holds command-substitution text
	// ('$(…)' or a backquote, quoted so it did not run where it stands);
	// evalCtx when bash evaluates some text again: arithmetic, array
	// subscripts in names given to builtins (printf -v, read, test -v,
	// unset, declare), ${x@P}, ${!x}, [[ -v ]] and [[ -eq ]] operands,
	// integer variables. Both together make the result Opaque: bash runs
	// the substitution when it evaluates the subscript. codeText is also
	// set by a static value holding a lone '$', since the text bash
	// evaluates may be joined from pieces ('a[$' and '(cmd)]').
	codeText, evalCtx bool
	// codeVar is set when a variable is given a value only known at run
	// time (read, mapfile, printf -v, $(...)): in an evaluating place its
	// value is code as much as text written in the command.
	codeVar bool
	// loops counts the loop bodies being walked.
	loops int
	// wrapDepth counts the wrappers (env, sudo, xargs, find -exec, ...)
	// seen through to reach the command being judged.
	wrapDepth int
	// assigned is set while a simple command with variable assignments
	// before it (FOO=1 git log) is judged: its environment is not the
	// shell's.
	assigned bool

	cwd string // effective working directory; "" when unknown
	// pwdRaw is set once cd -P has moved the shell physically: the working
	// directory as the caller must resolve it, symbolic links first and
	// ".." after, in order (cwd is then only its lexical reading). Relative
	// accesses carry it in Access.Joined.
	pwdRaw   string
	vars     []variable
	varsLost bool // too many variables to track: every lookup is unknown
	commands int  // simple commands examined so far
	expanded int  // bytes produced by variable expansion so far

	// work counts the steps whose number depends on the command's length:
	// list entries compared to spare a duplicate, arguments handed to a
	// program's rule, and the steps of the interpreter-code scans (langs*.go:
	// tokens, loop steps, searches of the code). Tests bound it by the command's length (bound_test.go)
	// so that no shape of input makes the analysis quadratic.
	work int

	// appended is set while judging code a program runs with arguments of
	// its own added at run time (rg --pre, rsync -e): the commands listed
	// are then Dynamic.
	appended bool

	net  mark // first network sink seen
	cred mark // first credential source seen

	// Arenas spare allocations: slices handed out are capped at their
	// length, so growing an arena never changes them. The analyzer and its
	// arenas are pooled (see analyzers); finish copies what the Result
	// needs out of them, and release clears them, so no call sees
	// another's data and no syntax tree outlives its call. Paths joined to
	// the cwd are written to pathBuf, which is dropped (not reused) on
	// release, since the Result's strings point into it.
	argv      []string // backing store for Command.Argv slices
	argArena  []arg
	optArena  []opt
	callArena []call
	pathBuf   strings.Builder
}

// mark remembers the first occurrence of something the final flow check needs.
type mark struct {
	set  bool
	sp   risk.Span
	what string
}

// frame maps positions of the syntax tree being walked to spans of the
// command string. The top-level tree maps exactly; a re-parsed string maps
// exactly when its text appears verbatim in the command, else every node
// maps to the span of the whole word it came from.
type frame struct {
	base  int
	exact bool
	outer risk.Span
}

// variable is a shell variable assigned in the command; known is false when
// its value is only known at run time.
type variable struct {
	name   string
	value  string
	known  bool
	secret bool // the value came from a variable holding a secret
	// code is set when the value may hold text bash would run if it
	// evaluated it (an arithmetic context, a subscript): it is only known
	// at run time, or it holds '$' or a backquote.
	code bool
}

// input is where a command's standard input comes from.
type input struct {
	kind  inputKind
	text  string    // the input, when known statically
	known bool      // text is the whole input
	sp    risk.Span // where the text comes from
}

type inputKind uint8

const (
	inNone inputKind = iota // inherited from the caller
	inPipe                  // the previous command of a pipeline
	inHere                  // a here-document or here-string
	inFile                  // a file redirected with <
)

// span maps a node to a span of the command string.
func (a *analyzer) span(n syntax.Node) risk.Span {
	if w, ok := n.(*syntax.Word); ok && len(w.Parts) == 0 {
		return a.fr.outer // a word without parts has no position
	}
	return a.spanOf(n.Pos(), n.End())
}

func (a *analyzer) spanOf(p, e syntax.Pos) risk.Span {
	if !a.fr.exact || !p.IsValid() || !e.IsValid() {
		return a.fr.outer
	}
	s := risk.Span{Start: a.fr.base + int(p.Offset()), End: a.fr.base + int(e.Offset())}
	if s.Start < a.fr.outer.Start || s.End > a.fr.outer.End || s.Start > s.End {
		return a.fr.outer
	}
	return s
}

// text returns the bytes of sp in the command string.
func (a *analyzer) text(sp risk.Span) string {
	if sp.Start < 0 || sp.End > len(a.src) || sp.Start > sp.End {
		return ""
	}
	return a.src[sp.Start:sp.End]
}

// find records a finding. Findings with the same risk, span and reason are
// recorded once.
//
// A full list is checked first: comparing each of many findings with every
// listed one would make a command of n words cost n*maxListed comparisons.
// When the list is full any further finding, even a duplicate, makes the
// result Opaque, which only ever asks more.
func (a *analyzer) find(l risk.Level, sp risk.Span, why string) {
	if n := len(a.res.Findings); n < maxListed {
		for _, f := range a.res.Findings {
			a.work++
			if f.Risk == l && f.Span == sp && f.Why == why {
				return
			}
		}
	}
	if n := len(a.res.Findings); n >= maxListed {
		// The last slot keeps the highest of the findings that did not fit,
		// so Risk stays the maximum of all.
		a.tooMany()
		if l > a.res.Findings[n-1].Risk {
			a.res.Findings[n-1] = risk.Finding{Risk: l, Arg: "command", Span: sp, Text: a.text(sp), Why: why}
		}
		return
	}
	a.res.Findings = append(a.res.Findings, risk.Finding{Risk: l, Arg: "command", Span: sp, Text: a.text(sp), Why: why})
}

// tooMany marks a result whose lists were cut short.
func (a *analyzer) tooMany() {
	a.res.Opaque = true
}

// opaque records that something cannot be decided statically.
func (a *analyzer) opaque(sp risk.Span, why string) {
	a.res.Opaque = true
	a.find(risk.Execute, sp, why)
}

// network records a network sink. An empty what names the sink by the
// text of sp, built only if the flow check needs it.
func (a *analyzer) network(sp risk.Span, what, why string) {
	if !a.net.set {
		a.net = mark{set: true, sp: sp, what: what}
	}
	a.find(risk.Network, sp, why)
}

// credential records a credential source that is not a file access, such as
// dumping the environment.
func (a *analyzer) credSource(sp risk.Span, what string) {
	if !a.cred.set {
		a.cred = mark{set: true, sp: sp, what: what}
	}
}

// access records a file access and notes credential sources.
func (a *analyzer) access(x arg, cwd string, write, del bool) {
	a.accessAs(x, cwd, write, del, false)
}

// accessDeep records a recursive read of everything beneath x: a
// directory holding home directories or system secrets is a credential
// source.
func (a *analyzer) accessDeep(x arg, cwd string) {
	a.accessAs(x, cwd, false, false, true)
}

// accessTracked records a read of what the git repository holding the
// directory x tracks (Access.Tracked), or holds committed (Access.Committed).
func (a *analyzer) accessTracked(x arg, cwd string, committed bool) {
	a.accessWith(x, cwd, false, false, false, true, committed)
}

func (a *analyzer) accessAs(x arg, cwd string, write, del, deep bool) {
	a.accessWith(x, cwd, write, del, deep, false, false)
}

func (a *analyzer) accessWith(x arg, cwd string, write, del, deep, tracked, committed bool) {
	p, joined := "", ""
	if !x.dyn {
		if fd, ok := throughFd(x.s, cwd); ok {
			// Where it leads is known only at run time: the call is
			// Opaque, so that no allow covers it. The path is still
			// recorded as written, cleaned, so that what it names by its
			// form (/proc/self/cwd, /proc/1/root/etc) is judged as before
			// and a deny rule for it still applies.
			a.opaque(x.sp, quote(a.text(x.sp))+" goes on past "+fd+", which names whatever that file descriptor or process directory is open on (a redirection such as 3< ~ opens one on a directory), so the file it reaches is known only at run time; no rule allows it")
		}
	}
	if !x.dyn {
		p = a.resolve(x.s, cwd)
		if p != "" && a.pwdRaw != "" && cwd == a.cwd && !strings.HasPrefix(x.s, "/") {
			joined = a.pwdRaw + "/" + x.s
		} else if p != "" && strings.Contains(x.s, "..") {
			joined = x.s
			if !strings.HasPrefix(joined, "/") {
				joined = cwd + "/" + joined
			}
		}
	}
	if isTerminal(p, write) {
		a.terminalWrite(x.sp, quote(a.text(x.sp)))
	}
	if isHarmlessDevice(p) && !(write && isTerminal(p, true)) {
		return
	}
	ac := Access{Path: p, Joined: joined, Raw: a.text(x.sp), Write: write, Delete: del, Glob: x.glob && p != "", Recursive: deep, Tracked: tracked, Committed: committed, Span: x.sp}
	// A full list is checked before the duplicates, as in find, so the
	// comparisons stay within maxListed²/2 whatever the number of words.
	if len(a.res.Accesses) >= maxListed {
		a.tooMany()
		return
	}
	for _, o := range a.res.Accesses {
		a.work++
		if o == ac {
			return
		}
	}
	a.res.Accesses = append(a.res.Accesses, ac)
	if p != "" && !write && !del && (a.isCredential(p, ac.Glob) || deep && pathrisk.HoldsSecrets(p, a.pathEnv())) {
		a.credSource(x.sp, p)
	}
	if deep && p == "" && !write && !del {
		// An unknown directory read recursively may be the home.
		a.credSource(x.sp, "a directory known only at run time, read recursively")
	}
}

// resolve is the function resolve, joining relative paths in pathBuf so
// that they share one allocation. Strings already handed out stay valid
// when pathBuf grows: a Builder never rewrites bytes it has written.
func (a *analyzer) resolve(p, cwd string) string {
	if p == "" || p[0] == '/' || cwd == "" {
		return resolve(p, cwd)
	}
	if a.pathBuf.Cap() == 0 {
		a.pathBuf.Grow(256)
	}
	start := a.pathBuf.Len()
	a.pathBuf.WriteString(cwd)
	a.pathBuf.WriteByte('/')
	a.pathBuf.WriteString(p)
	return cleanAbs(a.pathBuf.String()[start:])
}

// isCredential applies the injected classifier or the built-in list.
func (a *analyzer) isCredential(p string, glob bool) bool {
	if glob {
		return a.globMayMatchCredential(p)
	}
	if a.env.IsCredential != nil {
		return a.env.IsCredential(p)
	}
	return pathrisk.IsCredential(p, a.pathEnv())
}

func (a *analyzer) pathEnv() pathrisk.Env {
	return pathrisk.Env{Cwd: a.env.Cwd, Home: a.env.Home, UserHomes: a.env.UserHomes, DataDir: a.env.DataDir}
}

// command records a simple command that would run.
func (a *analyzer) command(args []arg, sp risk.Span, dynamic bool) {
	if cap(a.argv)-len(a.argv) < len(args) {
		// A fresh chunk: the Argv slices handed out keep the old one, so
		// nothing needs copying.
		a.argv = make([]string, 0, max(2*cap(a.argv), len(args), 64))
	}
	start := len(a.argv)
	var globs uint64
	for i, x := range args {
		s := x.s
		if i == 0 {
			s = argv0(s)
		}
		a.argv = append(a.argv, s)
		dynamic = dynamic || x.dyn
		if x.glob {
			globs |= 1 << min(i, 63)
		}
	}
	argv := a.argv[start:len(a.argv):len(a.argv)]
	a.res.Commands = append(a.res.Commands, Command{Argv: argv, Span: sp, Dynamic: dynamic || a.appended,
		Prefixed: a.wrapDepth > 0 || a.assigned, Globs: globs})
}

// save and restore bracket a subshell: cd and assignments inside it do not
// reach the commands after it.
type saved struct {
	cwd, pwdRaw string
	nvars       int
	lost        bool
}

func (a *analyzer) save() saved { return saved{a.cwd, a.pwdRaw, len(a.vars), a.varsLost} }

func (a *analyzer) restore(s saved) {
	a.cwd, a.pwdRaw = s.cwd, s.pwdRaw
	a.vars = a.vars[:s.nvars]
	a.varsLost = s.lost
}

// settle ends a part that may or may not run (an if branch, a loop body, the
// right side of ||, a function body): whatever it changed is unknown after it.
func (a *analyzer) settle(s saved) {
	if a.cwd != s.cwd || a.pwdRaw != s.pwdRaw {
		a.cwd, a.pwdRaw = "", ""
	}
	for i := s.nvars; i < len(a.vars); i++ {
		a.vars[i].known = false
		a.vars[i].value = ""
	}
}

// setVar records an assignment; known is false for run-time values.
func (a *analyzer) setVar(name, value string, known bool) {
	a.setVarCode(name, value, known, !known || hasCodeText(value))
}

// setVarCode records an assignment whose value is known to hold no code
// (code false) though it may be known only at run time: a number from
// $((…)), an item of a for loop over static words.
func (a *analyzer) setVarCode(name, value string, known, code bool) {
	if code {
		a.codeVar = true
	}
	if len(a.vars) >= maxVars {
		a.varsLost = true
		a.codeVar = true
		return
	}
	if len(value) > maxVarLen {
		value, known = "", false
	}
	a.vars = append(a.vars, variable{name: name, value: value, known: known, code: code})
}

// hasCodeText reports whether a static value holds text that bash runs
// when it evaluates it again: '$' (a piece of $(…), or ${…}) or a
// backquote.
func hasCodeText(s string) bool {
	return strings.IndexByte(s, '$') >= 0 || strings.IndexByte(s, '`') >= 0
}

// lookup returns the static value of a variable, if there is one.
func (a *analyzer) lookup(name string) (string, bool) {
	for i := len(a.vars) - 1; i >= 0; i-- {
		if a.vars[i].name == name {
			return a.vars[i].value, a.vars[i].known && !a.varsLost
		}
	}
	if a.varsLost {
		return "", false
	}
	switch name {
	case "HOME":
		return a.env.Home, a.env.Home != ""
	case "PWD":
		return a.cwd, a.cwd != ""
	}
	return "", false
}
