package shellrisk

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// stmts walks a statement list in order; cd and assignments carry over from
// one statement to the next, assuming each one succeeds.
func (a *analyzer) stmts(list []*syntax.Stmt, in input) {
	for _, s := range list {
		a.stmt(s, in)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt, in input) {
	if s == nil {
		return
	}
	var sv saved
	if s.Background || s.Coprocess || s.Disown {
		sv = a.save() // runs in a subshell
	}
	for _, r := range s.Redirs {
		if r2, ok := a.redirect(r); ok {
			in = r2
		}
	}
	a.cmd(s.Cmd, in)
	if s.Background || s.Coprocess || s.Disown {
		a.restore(sv)
	}
}

func (a *analyzer) cmd(c syntax.Command, in input) {
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		a.callExpr(c, in)
	case *syntax.BinaryCmd:
		a.binary(c, in)
	case *syntax.Subshell:
		sv := a.save()
		a.stmts(c.Stmts, in)
		a.restore(sv)
	case *syntax.Block:
		a.stmts(c.Stmts, in)
	case *syntax.IfClause:
		a.ifClause(c, in, true)
	case *syntax.WhileClause:
		sv := a.save()
		a.loops++
		a.stmts(c.Cond, in)
		a.stmts(c.Do, in)
		a.loops--
		a.settle(sv)
	case *syntax.ForClause:
		a.forClause(c, in)
	case *syntax.CaseClause:
		a.words(c.Word)
		for _, it := range c.Items {
			a.words(it.Patterns...)
			sv := a.save()
			a.stmts(it.Stmts, in)
			a.settle(sv)
		}
	case *syntax.FuncDecl:
		sv := a.save()
		a.stmt(c.Body, in)
		a.settle(sv)
	case *syntax.ArithmCmd:
		a.arithm(c.X)
	case *syntax.TestClause:
		a.test(c.X)
	case *syntax.DeclClause:
		a.declClause(c)
	case *syntax.LetClause:
		for _, x := range c.Exprs {
			a.arithm(x)
		}
	case *syntax.TimeClause:
		a.stmt(c.Stmt, in)
	case *syntax.CoprocClause:
		sv := a.save()
		a.stmt(c.Stmt, in)
		a.restore(sv)
	case *syntax.TestDecl:
		a.stmt(c.Body, in)
	default:
		a.opaque(a.span(c), "this shell construct is not understood by the analyser")
	}
}

func (a *analyzer) binary(c *syntax.BinaryCmd, in input) {
	switch c.Op {
	case syntax.Pipe, syntax.PipeAll:
		// Every part of a pipeline runs in its own subshell.
		sv := a.save()
		a.stmt(c.X, in)
		a.restore(sv)
		a.stmt(c.Y, a.pipeInput(c.X))
		a.restore(sv)
	case syntax.AndStmt:
		a.stmt(c.X, in)
		a.stmt(c.Y, in)
	default: // OrStmt: the right side may not run
		a.stmt(c.X, in)
		sv := a.save()
		a.stmt(c.Y, in)
		a.settle(sv)
	}
}

func (a *analyzer) ifClause(c *syntax.IfClause, in input, first bool) {
	sv := a.save()
	a.stmts(c.Cond, in)
	if first {
		sv = a.save() // the first condition always runs
	}
	a.stmts(c.Then, in)
	a.settle(sv)
	if c.Else != nil {
		sv = a.save()
		a.ifClause(c.Else, in, false)
		a.settle(sv)
	}
}

func (a *analyzer) forClause(c *syntax.ForClause, in input) {
	sv := a.save()
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		a.words(l.Items...)
		if l.Name != nil {
			code := len(l.Items) == 0 // "for x; do" iterates over "$@"
			for _, x := range a.args(l.Items) {
				code = code || x.dyn || x.glob || hasCodeText(x.s)
			}
			a.setVarCode(l.Name.Value, "", false, code)
		}
	case *syntax.CStyleLoop:
		a.arithm(l.Init)
		a.arithm(l.Cond)
		a.arithm(l.Post)
	}
	a.loops++
	a.stmts(c.Do, in)
	a.loops--
	a.settle(sv)
}

// redirect records the file a redirection reads or writes and returns the
// command's new standard input, if the redirection sets it.
func (a *analyzer) redirect(r *syntax.Redirect) (input, bool) {
	a.words(r.Word)
	if n := a.wordSecret(r.Word); n != "" {
		a.secretExpanded(r.Word, n, "the redirection")
	} else if n := a.wordSecret(r.Hdoc); n != "" {
		a.secretExpanded(r.Hdoc, n, "the here-document")
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		a.words(r.Hdoc)
		return a.hereInput(r.Hdoc, false), true
	case syntax.WordHdoc:
		return a.hereInput(r.Word, true), true
	}
	if r.Word == nil {
		return input{}, false
	}
	x := a.arg(r.Word)
	switch r.Op {
	case syntax.RdrIn:
		if !a.device(x, false) {
			a.access(x, a.cwd, false, false)
		}
		if x.dyn {
			// < <(cmd) or < $file: what arrives is built at run time.
			return input{kind: inPipe}, true
		}
		return input{kind: inFile}, true
	case syntax.DplIn, syntax.DplOut:
		if !x.dyn && (x.s == "-" || isDigits(strings.TrimSuffix(x.s, "-"))) {
			if r.Op == syntax.DplOut && strings.TrimSuffix(x.s, "-") == "0" {
				// >&0 writes where the standard input reads: a terminal
				// is open for both.
				a.terminalWrite(x.sp, "the redirection >&"+x.s)
			}
			return input{}, false // fd duplication or closing
		}
		if r.Op == syntax.DplIn {
			return input{}, false
		}
	}
	if a.device(x, true) {
		return input{}, false
	}
	a.access(x, a.cwd, true, false)
	if x.dyn && a.loops > 0 && onlyParam(r.Word) && (r.Op == syntax.RdrOut || r.Op == syntax.RdrClob || r.Op == syntax.RdrAll) {
		// for f in *; do : > "$f"; done empties every file it walks.
		a.find(risk.Destructive, x.sp, "the redirection "+quote(a.text(x.sp))+" truncates a file named at run time in a loop, so it may empty every file the loop walks")
	}
	return input{}, false
}

// hereInput is the standard input a here-document or here-string gives.
func (a *analyzer) hereInput(w *syntax.Word, herestring bool) input {
	if w == nil {
		return input{kind: inHere, known: true}
	}
	x := a.arg(w)
	if herestring {
		x.s += "\n"
	}
	return input{kind: inHere, text: x.s, known: !x.dyn, sp: x.sp}
}

// device judges redirections to special files: network sockets and disks.
// It reports whether the target is a socket, which is no file access.
func (a *analyzer) device(x arg, write bool) bool {
	if x.dyn {
		return false
	}
	p := resolve(x.s, a.cwd)
	switch {
	case strings.HasPrefix(p, "/dev/tcp/"), strings.HasPrefix(p, "/dev/udp/"):
		a.network(x.sp, "the redirection to "+p, "the redirection to "+p+" opens a network connection")
		// Listed as a write outside the working directory too, so that an
		// allow rule must name the socket to cover it.
		if len(a.res.Accesses) >= maxListed {
			a.tooMany()
		} else {
			a.res.Accesses = append(a.res.Accesses, Access{Path: p, Raw: a.text(x.sp), Write: true, Span: x.sp})
		}
		return true
	case write && isBlockDevice(p):
		a.find(risk.Destructive, x.sp, "writing to "+p+" overwrites a disk device and cannot be undone")
	}
	return false
}

// words walks the command substitutions and other code inside words.
func (a *analyzer) words(ws ...*syntax.Word) {
	for _, w := range ws {
		if w != nil {
			a.parts(w.Parts)
		}
	}
}

func (a *analyzer) parts(ps []syntax.WordPart) {
	for _, p := range ps {
		switch p := p.(type) {
		case *syntax.DblQuoted:
			a.parts(p.Parts)
		case *syntax.CmdSubst:
			sv := a.save()
			a.stmts(p.Stmts, input{})
			a.restore(sv)
		case *syntax.ProcSubst:
			sv := a.save()
			a.stmts(p.Stmts, input{})
			a.restore(sv)
		case *syntax.ArithmExp:
			a.arithm(p.X)
		case *syntax.ParamExp:
			a.paramExp(p)
		case *syntax.BraceExp:
			a.words(p.Elems...)
		}
	}
}

func (a *analyzer) paramExp(p *syntax.ParamExp) {
	if p.NestedParam != nil {
		a.parts([]syntax.WordPart{p.NestedParam})
	}
	if !literalIndex(p.Index) {
		a.arithm(p.Index)
	}
	if p.Slice != nil {
		a.arithm(p.Slice.Offset)
		a.arithm(p.Slice.Length)
	}
	if p.Repl != nil {
		a.words(p.Repl.Orig, p.Repl.With)
	}
	if p.Excl {
		a.evalCtx = true // ${!x} expands the variable x names, subscript included
	}
	if p.Exp != nil {
		if p.Exp.Op == syntax.OtherParamOps {
			a.evalCtx = true // ${x@P} expands the value as a prompt
			a.promptExp(p)
		}
		a.words(p.Exp.Word)
	}
}

func (a *analyzer) arithm(x syntax.ArithmExpr) {
	if x != nil {
		a.evalCtx = true
	}
	switch x := x.(type) {
	case *syntax.BinaryArithm:
		a.arithm(x.X)
		a.arithm(x.Y)
	case *syntax.UnaryArithm:
		a.arithm(x.X)
	case *syntax.ParenArithm:
		a.arithm(x.X)
	case *syntax.FlagsArithm:
		a.arithm(x.X)
	case *syntax.Word:
		a.words(x)
		a.arg(x) // sets codeText for text bash will evaluate
	}
}

func (a *analyzer) test(x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsGtr, syntax.TsLeq, syntax.TsGeq:
			a.evalCtx = true // operands are evaluated as arithmetic
		}
		a.test(x.X)
		a.test(x.Y)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			a.evalCtx = true // -v a[$(…)] evaluates the subscript
		}
		a.test(x.X)
	case *syntax.ParenTest:
		a.test(x.X)
	case *syntax.Word:
		a.words(x)
		a.arg(x)
	}
}

// callExpr handles a simple command with its assignments.
func (a *analyzer) callExpr(c *syntax.CallExpr, in input) {
	for _, as := range c.Assigns {
		a.assignWords(as)
	}
	a.words(c.Args...)
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			a.assign(as, true)
		}
		return
	}
	for _, as := range c.Assigns {
		a.assign(as, false)
	}
	args := a.args(c.Args)
	a.argSecrets(c.Args, args)
	outer := a.assigned
	a.assigned = outer || len(c.Assigns) > 0
	a.run(a.newCall(call{args: args, sp: a.span(c), in: in, cwd: a.cwd}))
	a.guessName(c.Args, args, a.span(c), in)
	a.assigned = outer
}

func (a *analyzer) assignWords(as *syntax.Assign) {
	a.arithm(as.Index)
	a.words(as.Value)
	if as.Array != nil {
		for _, e := range as.Array.Elems {
			a.arithm(e.Index)
			a.words(e.Value)
		}
	}
}

// assign judges an assignment. A bare one (no command after it) also sets a
// shell variable for the rest of the command.
func (a *analyzer) assign(as *syntax.Assign, bare bool) {
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	sp := a.span(as)
	// A bare name (export PATH, declare -p PATH) gives no new value.
	if !(as.Naked && as.Value == nil && as.Array == nil) && a.dangerousVar(name, sp) && as.Value != nil {
		a.varCode(name, a.arg(as.Value), sp)
	}
	if as.Value != nil && isSideDoorVar(name) {
		a.sideDoorAssign(name, a.arg(as.Value), sp)
	}
	if name == "GOFLAGS" && as.Value != nil {
		// GOFLAGS=-mod=mod is ordinary; -exec, -toolexec and -overlay in
		// it make go run or compile what they name.
		if x := a.arg(as.Value); x.dyn || strings.Contains(x.s, "exec") || strings.Contains(x.s, "overlay") {
			a.opaque(sp, "GOFLAGS holds "+quote(x.s)+", which makes go run other programs")
		}
	}
	if !bare {
		return
	}
	if as.Value == nil || as.Array != nil || as.Index != nil || as.Append {
		a.setVar(name, "", false)
		a.setArray(as) // a=(r m): its elements, for names built from them
		return
	}
	x := a.arg(as.Value)
	if x.dyn && isArithmOnly(as.Value) {
		a.setVarCode(name, "", false, false) // n=$((n+1)) is a number
	} else {
		a.setVar(name, x.s, !x.dyn && !x.glob)
	}
	if x.dyn && !a.varsLost && a.wordSecret(as.Value) != "" {
		a.vars[len(a.vars)-1].secret = true
	}
}

// onlyParam reports whether a word is one parameter expansion and nothing
// else ($f or "$f"): the very names a loop walks, not names made from them.
func onlyParam(w *syntax.Word) bool {
	if w == nil || len(w.Parts) != 1 {
		return false
	}
	p := w.Parts[0]
	if dq, ok := p.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		p = dq.Parts[0]
	}
	_, ok := p.(*syntax.ParamExp)
	return ok
}

// isArithmOnly reports whether a word is made of arithmetic expansions and
// digits alone, so its value is a number.
func isArithmOnly(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.ArithmExp:
		case *syntax.Lit:
			if !isDigits(p.Value) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// declClause handles declare, export, local, readonly, typeset and nameref.
func (a *analyzer) declClause(c *syntax.DeclClause) {
	names, flags := 0, ""
	var secretNames []risk.Span
	for _, as := range c.Args {
		a.assignWords(as)
		if as.Naked && as.Name == nil && as.Value != nil {
			x := a.arg(as.Value)
			if x.dyn {
				a.opaque(x.sp, c.Variant.Value+" with an argument built at run time can assign anything")
			} else if strings.HasPrefix(x.s, "-") || strings.HasPrefix(x.s, "+") {
				flags += x.s
			} else {
				names++
			}
			continue
		}
		if as.Naked && as.Name != nil && secretName(as.Name.Value) {
			secretNames = append(secretNames, a.span(as))
		}
		names++
		a.assign(as, true)
	}
	switch {
	case c.Variant.Value == "nameref" || strings.ContainsRune(flags, 'n') && c.Variant.Value != "export":
		// declare -n x=ls makes $x the value of $ls: every later use of x
		// reads another variable, and a target a[$(…)] runs code.
		a.opaque(a.span(c), c.Variant.Value+" -n makes a name refer to another variable, so what its uses expand to is not followed; no rule allows it")
	case strings.ContainsRune(flags, 'i'):
		a.evalCtx = true // values given to an integer variable are evaluated as arithmetic
	}
	if strings.ContainsRune(flags, 'p') {
		// declare -p NAME prints the variable's value.
		for _, sp := range secretNames {
			a.credSource(sp, "a secret variable")
			a.find(risk.Credential, sp, c.Variant.Value+" -p prints the value of "+quote(a.text(sp))+", which holds a secret")
		}
	}
	if names == 0 && dumpsEnv(c.Variant.Value, flags) {
		sp := a.span(c)
		a.credSource(sp, "the environment")
		a.find(risk.Credential, sp, c.Variant.Value+" without names prints variables, which may hold secrets")
	}
}

func dumpsEnv(variant, flags string) bool {
	switch variant {
	case "export", "readonly":
		return true
	case "declare", "typeset", "local":
		return flags == "" || strings.ContainsAny(flags, "xp")
	}
	return false
}

// reparse analyses a string that a shell will run as code: a -c argument,
// an eval, a here-document fed to sh. Nodes of the parsed string map to
// exact bytes when the string appears verbatim in the word (--pre='x' holds
// x after its quote), and to the word's span otherwise.
//
// sameShell is set for eval and source, whose cd and assignments stay.
func (a *analyzer) reparse(code string, sp risk.Span, sameShell bool) {
	if a.depth >= maxDepth {
		a.opaque(sp, "shell code nested this deep is not analysed")
		return
	}
	old, oldDepth := a.fr, a.depth
	a.fr = frame{outer: sp}
	if i := strings.Index(a.text(sp), strings.TrimRight(code, "\n")); i >= 0 {
		a.fr = frame{base: sp.Start + i, exact: true, outer: sp}
	}
	a.depth++
	sv := a.save()
	a.parseAndWalk(code)
	if !sameShell {
		a.restore(sv)
	}
	a.fr, a.depth = old, oldDepth
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pipeInput is what the left side of a pipe writes, when it is a plain echo,
// printf or cat of a here-document whose output is known statically.
func (a *analyzer) pipeInput(s *syntax.Stmt) input {
	in := input{kind: inPipe}
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 {
		return in
	}
	args := a.args(ce.Args)
	for _, x := range args {
		if x.dyn {
			return in
		}
	}
	sp := a.span(s)
	switch programName(args[0].s) {
	case "echo":
		text, ok := echoText(args[1:])
		return input{kind: inPipe, text: text, known: ok, sp: sp}
	case "printf":
		text, ok := printfText(args[1:])
		return input{kind: inPipe, text: text, known: ok, sp: sp}
	case "cat":
		if len(args) > 1 {
			return in
		}
		for _, r := range s.Redirs {
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				h := a.hereInput(r.Hdoc, false)
				h.kind = inPipe
				return h
			case syntax.WordHdoc:
				h := a.hereInput(r.Word, true)
				h.kind = inPipe
				return h
			}
		}
	}
	return in
}

// echoText is what echo prints for static arguments.
func echoText(args []arg) (string, bool) {
	escapes := false
	for len(args) > 0 && len(args[0].s) > 1 && args[0].s[0] == '-' && strings.Trim(args[0].s[1:], "neE") == "" {
		escapes = escapes || strings.ContainsRune(args[0].s, 'e')
		args = args[1:]
	}
	var b strings.Builder
	for i, x := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if escapes {
			b.WriteString(ansiC(x.s))
		} else {
			b.WriteString(x.s)
		}
	}
	return b.String(), true
}

// printfText is what printf prints for a format using only %s, %b and %%.
func printfText(args []arg) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	format, rest := ansiC(args[0].s), args[1:]
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		if i+1 >= len(format) {
			return "", false
		}
		i++
		switch format[i] {
		case '%':
			b.WriteByte('%')
		case 's', 'b':
			if len(rest) > 0 {
				v := rest[0].s
				if format[i] == 'b' {
					v = ansiC(v)
				}
				b.WriteString(v)
				rest = rest[1:]
			}
		default:
			return "", false
		}
	}
	return b.String(), len(rest) == 0
}
