package shellrisk

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// ruleForSideDoor returns the rule for a program of this file's class, or nil:
// strings handed to a shell through a side door (ssh HOST cmd, xargs -I templates, find -exec sh -c, parallel) and containers and remote shells (docker run -v /:/host, --privileged, nsenter, kubectl exec).
// ruleFor consults it before its own table, so a rule returned here
// replaces the general one for that program.
//
// Each rule here adds what the general rule misses and then calls it, so
// that what the general rule judges stays judged:
//   - shells: `bash <(…)`, `bash /dev/stdin`, `--rcfile <(…)` and templates
//     (`xargs -I{} sh -c '… {} …'`, `find -exec sh -c '… {} …'`), whose code
//     is parsed with the placeholder as a run-time word and is Opaque, since
//     the input's text is pasted into code;
//   - source and `.`: `source <(…)` and `source /dev/stdin`;
//   - eval of words built from arrays and substrings;
//   - ssh: the remote command, or the code a here-document feeds the remote
//     shell, is parsed and judged as code running elsewhere (elsewhere);
//   - docker, podman, nerdctl, kubectl, oc and nsenter (containers.go).
func ruleForSideDoor(name string) rule {
	switch name {
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "busybox":
		return ruleShellSideDoor
	case "source", ".":
		return ruleSourceSideDoor
	case "eval":
		return ruleEvalSideDoor
	case "ssh":
		return ruleSSH
	case "docker", "podman", "nerdctl":
		return ruleContainer
	case "kubectl", "oc":
		return ruleKubectlSideDoor
	case "nsenter":
		return ruleNsenter
	}
	return nil
}

// isStdinPath reports a path that names the shell's own standard input.
func isStdinPath(s string) bool {
	switch s {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0":
		return true
	}
	return strings.HasPrefix(s, "/proc/") && strings.HasSuffix(s, "/fd/0")
}

// procSubst returns the process substitution <(…) that makes up the whole
// word x, if it is one.
func procSubst(x arg) (*syntax.ProcSubst, bool) {
	if x.w == nil || len(x.w.Parts) != 1 {
		return nil, false
	}
	ps, ok := x.w.Parts[0].(*syntax.ProcSubst)
	return ps, ok && ps.Op == syntax.CmdIn
}

// procOutput is what a process substitution prints, when it is a plain
// echo, printf or cat of a here-document whose output is known statically.
func (a *analyzer) procOutput(ps *syntax.ProcSubst) (input, bool) {
	if len(ps.Stmts) != 1 {
		return input{}, false
	}
	in := a.pipeInput(ps.Stmts[0])
	return in, in.known
}

// codeFrom judges a file named by x that a shell runs as code: a process
// substitution whose output is known is parsed and judged, any other is
// Opaque. It reports whether x was a process substitution.
func (a *analyzer) codeFrom(x arg, what string, sameShell bool) bool {
	ps, ok := procSubst(x)
	if !ok {
		return false
	}
	if in, ok := a.procOutput(ps); ok {
		a.reparse(in.text, in.sp, sameShell)
		return true
	}
	a.opaque(x.sp, what+" runs the output of "+quote(a.text(x.sp))+" as shell code, and what a command prints is only known at run time; no rule allows it")
	return true
}

// ruleShellSideDoor sees the side doors into a shell before ruleShell:
// a process substitution or standard input named as the script, an rcfile
// from a process substitution, and templates.
func ruleShellSideDoor(a *analyzer, c *call) {
	args, ok := a.shellArgs(c)
	if !ok {
		return
	}
	name := programName(args[0].s)
	sc := scanShell(args)
	// --rcfile <(…): the file is the output of a command, judged as code
	// (and Opaque, as every rcfile is, in shellWith).
	for _, rc := range sc.rcfiles {
		a.codeFrom(rc.file, name+" "+rc.opt, false)
	}
	if len(sc.rest) > 0 {
		x := sc.rest[0]
		switch {
		case sc.cflag && isTemplate(x):
			a.template(x, name+" -c", "")
			return
		case sc.cflag:
		case a.codeFrom(x, name, false):
			return
		case !x.dyn && isStdinPath(x.s):
			a.shellStdin(c, name+" "+x.s)
			return
		}
	}
	a.shellWith(c, name, sc)
}

// isTemplate reports a word that is dynamic only because a wrapper
// replaces a placeholder in it at run time (xargs -I, find -exec {}, fd
// -x): its syntax is plain text, yet it was marked dynamic.
func isTemplate(x arg) bool {
	if !x.dyn || x.w == nil {
		return false
	}
	for _, p := range x.w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.HasPrefix(p.Value, "~") {
				return false
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// templateHolders are the placeholders find, fd and xargs -i replace.
var templateHolders = []string{"{}", "{/}", "{//}", "{.}", "{/.}"}

// template judges shell code into which a wrapper pastes its input: the
// input's text becomes code, so the call is Opaque, and the code is
// judged with each placeholder read as a word known only at run time.
// holder is the placeholder when the wrapper named one (xargs -I%).
func (a *analyzer) template(x arg, what, holder string) {
	a.opaque(x.sp, what+" runs shell code into which each input is pasted ("+quote(a.text(x.sp))+"): the input's text becomes code and runs whatever it holds; no rule allows it")
	holders := templateHolders
	if holder != "" {
		holders = []string{holder}
	}
	a.reparseAs(dynHolders(x.s, holders), x.s, x.sp, input{})
}

// dynHolders replaces each placeholder in code with a parameter expansion
// the analysis cannot know ($_ for two bytes, so that spans stay exact).
func dynHolders(code string, holders []string) string {
	for _, h := range holders {
		if h == "" || !strings.Contains(code, h) {
			continue
		}
		with := "${_}" // one byte cannot hold an expansion
		if len(h) >= 2 {
			with = "$" + strings.Repeat("_", len(h)-1)
		}
		code = strings.ReplaceAll(code, h, with)
	}
	return code
}

// reparseAs is reparse for code that was made from orig (the text as it
// appears in the command), with in as the standard input of its commands.
// The frame maps exactly when code and orig have the same length and orig
// appears verbatim in the command.
func (a *analyzer) reparseAs(code, orig string, sp risk.Span, in input) {
	if a.depth >= maxDepth {
		a.opaque(sp, "shell code nested this deep is not analysed")
		return
	}
	old, oldDepth := a.fr, a.depth
	a.fr = frame{outer: sp}
	if len(code) == len(orig) {
		if i := strings.Index(a.text(sp), strings.TrimRight(orig, "\n")); i >= 0 {
			a.fr = frame{base: sp.Start + i, exact: true, outer: sp}
		}
	}
	a.depth++
	sv := a.save()
	if in.kind == inNone {
		a.parseAndWalk(code)
	} else {
		src := a.bashAlike(code)
		f, err := parse(src)
		if err != nil {
			a.opaque(a.fr.outer, "the command does not parse as a shell command, so what it runs cannot be known")
		}
		if f != nil {
			if _, cut := cutComments(f, src); cut {
				a.opaque(a.fr.outer, "a comment ends in a backslash, so the code may not be what bash reads")
			}
			a.stmts(f.Stmts, in)
		}
	}
	a.restore(sv)
	a.fr, a.depth = old, oldDepth
}

// ruleSourceSideDoor: `source <(…)` runs a command's output in this shell,
// and `source /dev/stdin` what arrives on standard input.
func ruleSourceSideDoor(a *analyzer, c *call) {
	if len(c.args) < 2 {
		ruleSource(a, c)
		return
	}
	x := c.args[1]
	name := programName(c.args[0].s)
	if a.codeFrom(x, name, true) {
		return
	}
	if !x.dyn && isStdinPath(x.s) {
		switch {
		case (c.in.kind == inHere || c.in.kind == inPipe) && c.in.known:
			a.reparse(c.in.text, c.in.sp, true)
		case c.in.kind == inFile:
			a.opaque(c.sp, name+" "+x.s+" runs a file redirected to standard input as code in this shell, whose contents are not checked")
		default:
			a.opaque(c.sp, name+" "+x.s+" runs whatever arrives on standard input as code in this shell, which cannot be checked before it runs; no rule allows it")
		}
		return
	}
	ruleSource(a, c)
}

// ruleEvalSideDoor: eval of words built from arrays, substrings and other
// expansions whose value the analysis can work out (a=(rm -rf ~); eval
// "${a[@]}") is Opaque as before, and the code those words make is judged
// as well, so that its risk and deny rules see it.
func ruleEvalSideDoor(a *analyzer, c *call) {
	ruleEval(a, c)
	if len(c.args) < 2 {
		return
	}
	var words []string
	guessed := false
	for i, x := range c.args[1:] {
		if !x.dyn {
			words = append(words, x.s)
			continue
		}
		if x.w == nil || i > 0 && c.args[i].w == x.w {
			return // a word of a brace expansion
		}
		fs, ok := a.guessWord(x.w)
		if !ok {
			return
		}
		guessed = true
		words = append(words, fs...)
	}
	if !guessed {
		return
	}
	sp := risk.Span{Start: c.args[1].sp.Start, End: c.args[len(c.args)-1].sp.End}
	if sp.End < sp.Start {
		sp = c.sp
	}
	a.reparse(strings.Join(words, " "), sp, true)
}

// guessName judges the command a program name built at run time from
// pieces the analysis can work out would run: ${a[0]}${a[1]} with
// a=(r m), ${x:0:2}, ${x,,}, $(echo rm). The call is Opaque already (the
// program is only known at run time); this adds the risk of what it most
// likely runs, and lets deny rules see it.
func (a *analyzer) guessName(ws []*syntax.Word, args []arg, sp risk.Span, in input) {
	if len(args) == 0 || !args[0].dyn || len(ws) == 0 || args[0].w != ws[0] {
		return
	}
	if len(args) > 1 && args[1].w == ws[0] {
		return // a word of a brace expansion or field split
	}
	fs, ok := a.guessWord(ws[0])
	if !ok || len(fs) == 0 || fs[0] == "" {
		return
	}
	out := make([]arg, 0, len(fs)+len(args)-1)
	for _, f := range fs {
		out = append(out, arg{s: f, glob: hasGlob(f), sp: args[0].sp, w: nil})
	}
	out = append(out, args[1:]...)
	a.run(a.newCall(call{args: out, sp: sp, in: in, cwd: a.cwd}))
}

// maxGuess bounds the text guessWord builds.
const maxGuess = 4 << 10

// guessWord works out the value of a word whose expansions are of a kind
// the walk does not follow (array elements, substrings, case changes,
// literal replacements, indirection, defaults, $(echo …)), from the
// variables assigned in the command. It returns the fields the word makes.
func (a *analyzer) guessWord(w *syntax.Word) ([]string, bool) {
	if len(w.Parts) == 1 {
		// "${a[@]}" alone makes one word per element.
		if dq, ok := w.Parts[0].(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
			if pe, ok := dq.Parts[0].(*syntax.ParamExp); ok && allIndex(pe) && onlyIndex(pe) {
				return a.elems(pe.Param.Value)
			}
		}
	}
	var b strings.Builder
	split := false
	if !a.guessParts(&b, w.Parts, false, &split) {
		return nil, false
	}
	if split {
		return strings.Fields(b.String()), true
	}
	return []string{b.String()}, true
}

func (a *analyzer) guessParts(b *strings.Builder, ps []syntax.WordPart, quoted bool, split *bool) bool {
	for i, p := range ps {
		if b.Len() > maxGuess {
			return false
		}
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && !quoted && strings.HasPrefix(v, "~") {
				var ok bool
				if v, ok = a.tilde(v, len(ps) > 1); !ok {
					return false
				}
			}
			if quoted {
				b.WriteString(unescapeDbl(v))
			} else {
				b.WriteString(unescape(v))
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			if !a.guessParts(b, p.Parts, true, split) {
				return false
			}
		case *syntax.ParamExp:
			v, ok := a.guessParam(p)
			if !ok {
				return false
			}
			if !quoted && strings.ContainsAny(v, " \t\n") {
				*split = true
			}
			b.WriteString(v)
		case *syntax.CmdSubst:
			if len(p.Stmts) != 1 {
				return false
			}
			in := a.pipeInput(p.Stmts[0])
			if !in.known {
				return false
			}
			v := strings.TrimRight(in.text, "\n")
			if !quoted && strings.ContainsAny(v, " \t\n") {
				*split = true
			}
			b.WriteString(v)
		default:
			return false
		}
	}
	return true
}

// allIndex reports ${a[@]} or ${a[*]}.
func allIndex(pe *syntax.ParamExp) bool {
	w, ok := pe.Index.(*syntax.Word)
	if !ok || pe.Param == nil {
		return false
	}
	s := w.Lit()
	return s == "@" || s == "*"
}

// onlyIndex reports an expansion with a subscript and nothing else.
func onlyIndex(pe *syntax.ParamExp) bool {
	return pe.Param != nil && !pe.Excl && !pe.Length && !pe.Width && pe.Slice == nil && pe.Repl == nil &&
		pe.Exp == nil && pe.Names == 0 && pe.NestedParam == nil && pe.Flags == nil && len(pe.Modifiers) == 0
}

// guessParam works out the value of one parameter expansion.
func (a *analyzer) guessParam(pe *syntax.ParamExp) (string, bool) {
	if pe.Param == nil || pe.Width || pe.Names != 0 || pe.NestedParam != nil || pe.Flags != nil || len(pe.Modifiers) > 0 {
		return "", false
	}
	name := pe.Param.Value
	var v string
	var ok bool
	switch {
	case pe.Index != nil:
		if pe.Excl {
			return "", false
		}
		w, isWord := pe.Index.(*syntax.Word)
		if !isWord {
			return "", false
		}
		switch idx := w.Lit(); {
		case idx == "@" || idx == "*":
			var fs []string
			if fs, ok = a.elems(name); ok {
				v = strings.Join(fs, " ")
			}
		case isDigits(idx):
			n, err := strconv.Atoi(idx)
			if err != nil {
				return "", false
			}
			v, ok = a.elem(name, n)
		default:
			return "", false
		}
	case pe.Excl:
		// ${!x}: the variable x names.
		var target string
		if target, ok = a.lookup(name); !ok || !isAssignment(target+"=") {
			return "", false
		}
		v, ok = a.lookup(target)
	default:
		v, ok = a.lookup(name)
	}
	if pe.Length {
		if !ok {
			return "", false
		}
		return strconv.Itoa(len([]rune(v))), true
	}
	switch {
	case pe.Slice != nil:
		if !ok {
			return "", false
		}
		return slice(v, pe.Slice)
	case pe.Repl != nil:
		orig, ok1 := a.literal(pe.Repl.Orig)
		with, ok2 := a.literal(pe.Repl.With)
		if !ok || !ok1 || !ok2 || orig == "" || strings.ContainsAny(orig[:1], "#%") {
			return "", false
		}
		if pe.Repl.All {
			return strings.ReplaceAll(v, orig, with), true
		}
		return strings.Replace(v, orig, with, 1), true
	case pe.Exp != nil:
		word, wok := a.literal(pe.Exp.Word)
		switch pe.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
			if ok && (v != "" || pe.Exp.Op == syntax.DefaultUnset || pe.Exp.Op == syntax.AssignUnset) {
				return v, true
			}
			// Unknown or empty: the default is the likely value.
			return word, wok
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			if !ok {
				return "", false
			}
			if v == "" && pe.Exp.Op == syntax.AlternateUnsetOrNull {
				return "", true
			}
			return word, wok
		case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
			if !ok || !wok || hasGlob(word) {
				return "", false
			}
			if pe.Exp.Op == syntax.RemSmallPrefix || pe.Exp.Op == syntax.RemLargePrefix {
				return strings.TrimPrefix(v, word), true
			}
			return strings.TrimSuffix(v, word), true
		case syntax.UpperAll, syntax.LowerAll, syntax.UpperFirst, syntax.LowerFirst:
			if !ok || word != "" {
				return "", false
			}
			switch pe.Exp.Op {
			case syntax.UpperAll:
				return strings.ToUpper(v), true
			case syntax.LowerAll:
				return strings.ToLower(v), true
			case syntax.UpperFirst:
				if v == "" {
					return v, true
				}
				return strings.ToUpper(v[:1]) + v[1:], true
			default:
				if v == "" {
					return v, true
				}
				return strings.ToLower(v[:1]) + v[1:], true
			}
		}
		return "", false
	}
	return v, ok
}

// literal is the static value of a word, if it has one.
func (a *analyzer) literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	x := a.arg(w)
	return x.s, !x.dyn
}

// slice is ${v:offset:length} for literal numbers, as bash counts them.
func slice(v string, s *syntax.Slice) (string, bool) {
	num := func(e syntax.ArithmExpr) (int, bool) {
		neg := false
		if u, ok := e.(*syntax.UnaryArithm); ok && u.Op == syntax.Minus {
			neg, e = true, u.X
		}
		if p, ok := e.(*syntax.ParenArithm); ok {
			return num0(p.X, neg)
		}
		return num0(e, neg)
	}
	off, ok := num(s.Offset)
	if !ok {
		return "", false
	}
	if off < 0 {
		off += len(v)
		if off < 0 {
			return "", true // bash expands to nothing
		}
	}
	if off > len(v) {
		return "", true
	}
	v = v[off:]
	if s.Length == nil {
		return v, true
	}
	n, ok := num(s.Length)
	if !ok {
		return "", false
	}
	if n < 0 {
		n += len(v)
		if n < 0 {
			return "", false // bash: substring expression < 0
		}
	}
	return v[:min(n, len(v))], true
}

func num0(e syntax.ArithmExpr, neg bool) (int, bool) {
	w, ok := e.(*syntax.Word)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(w.Lit())
	if err != nil || n > 1<<20 {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// maxArray bounds the elements of an array whose values are tracked, so
// that arrays do not use up the variables tracked for everything else.
const maxArray = 16

// setArray records the static elements of a=(…), as the variables a[0],
// a[1] …, which the walk never looks up by itself (it takes ${a[i]} as
// unknown); elem and elems read them back.
func (a *analyzer) setArray(as *syntax.Assign) {
	if as.Array == nil || as.Append || as.Index != nil || as.Name == nil {
		return
	}
	elems := as.Array.Elems
	if len(elems) > maxArray || len(a.vars)+len(elems) > maxVars/2 {
		return
	}
	name := as.Name.Value
	for i, e := range elems {
		if e.Index != nil || e.Value == nil {
			return // a[3]=x or an associative array: not followed
		}
		x := a.arg(e.Value)
		if x.dyn || x.glob {
			a.setVarCode(name+"["+strconv.Itoa(i)+"]", "", false, false)
			continue
		}
		a.setVarCode(name+"["+strconv.Itoa(i)+"]", x.s, true, false)
	}
	a.setVarCode(name+"[#]", strconv.Itoa(len(elems)), true, false)
}

// elem returns element i of an array set by setArray; any later
// assignment to the array's name makes it unknown.
func (a *analyzer) elem(name string, i int) (string, bool) {
	key := name + "[" + strconv.Itoa(i) + "]"
	for j := len(a.vars) - 1; j >= 0; j-- {
		switch a.vars[j].name {
		case key:
			return a.vars[j].value, a.vars[j].known && !a.varsLost
		case name:
			return "", false
		}
	}
	return "", false
}

// elems returns every element of an array set by setArray.
func (a *analyzer) elems(name string) ([]string, bool) {
	count, found := "", false
	for j := len(a.vars) - 1; j >= 0 && !found; j-- {
		switch a.vars[j].name {
		case name:
			return nil, false
		case name + "[#]":
			count, found = a.vars[j].value, a.vars[j].known && !a.varsLost
			if !found {
				return nil, false
			}
		}
	}
	k, err := strconv.Atoi(count)
	if !found || err != nil {
		return nil, false
	}
	out := make([]string, 0, k)
	for i := 0; i < k; i++ {
		v, ok := a.elem(name, i)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// isSideDoorVar reports the variables sideDoorAssign judges.
func isSideDoorVar(name string) bool {
	switch name {
	case "BASH_ENV", "ENV", "DOCKER_HOST", "CONTAINER_HOST", "DOCKER_CONTEXT", "CONTAINERD_ADDRESS":
		return true
	}
	return false
}

// sideDoorAssign judges assignments that hand code or a remote daemon to
// what runs next: BASH_ENV=<(…) and ENV=<(…) (a shell sources the file
// before its script), DOCKER_HOST=tcp://… and CONTAINER_HOST (every docker
// or podman command goes to another machine).
func (a *analyzer) sideDoorAssign(name string, x arg, sp risk.Span) {
	switch name {
	case "BASH_ENV", "ENV":
		a.codeFrom(x, name, false)
	case "DOCKER_HOST", "CONTAINER_HOST", "DOCKER_CONTEXT", "CONTAINERD_ADDRESS":
		if x.dyn || remoteDaemon(x.s) || name == "DOCKER_CONTEXT" && x.s != "default" {
			// Opaque, not only network: a rule's words never hold the
			// assignments before a command, so a rule for "docker
			// images" would otherwise allow DOCKER_HOST=tcp://evil
			// docker images --filter reference=<what the model read>
			// (prop review 3, C3). The same daemon given as an option
			// (docker -H …, --context …) is a word a rule can name.
			a.network(sp, quote(name), "setting "+name+" sends container commands to the daemon it names, which may be on another machine")
			a.opaque(sp, "setting "+name+" before the command sends it to another daemon, which no rule's words can name; it is asked every time")
		}
	}
}

// promptExp judges ${x@P}: bash expands the value as a prompt, which runs
// the command substitutions in it. A value not known here may hold one
// (the call is then Opaque); a known one is judged as the code it holds.
func (a *analyzer) promptExp(p *syntax.ParamExp) {
	if p.Exp == nil || p.Exp.Word == nil || p.Exp.Word.Lit() != "P" || p.Param == nil {
		return
	}
	v, ok := a.lookup(p.Param.Value)
	if !ok || p.Index != nil || p.Excl {
		a.codeVar = true
		return
	}
	if hasCodeText(v) && !strings.Contains(v, "\n__SD_PROMPT__\n") {
		// An unquoted here-document expands its body as a prompt does.
		a.reparse(": <<__SD_PROMPT__\n"+v+"\n__SD_PROMPT__\n", a.span(p), false)
	}
}

// elsewhere describes code that runs on another machine or in a container:
// its findings count (destruction there is destruction), but the paths it
// names are not paths of this machine unless host maps them to one.
type elsewhere struct {
	where string // "on the remote machine", "inside the container"
	cwd   string // the working directory there, for classifying relative paths
	// keepDestroy is false for a fresh container that mounts nothing of the
	// host: destruction inside it only touches the container's own files.
	keepDestroy bool
	// host maps a path there to the host path it is (a bind mount), or "".
	host func(p string) string
}

// elsewhere runs judge as code running in e: accesses of paths there are
// taken off the list (the caller would judge them as host paths), a read
// of a place holding secrets there stays a credential finding, and paths
// a bind mount maps to the host are kept as the host accesses they are.
func (a *analyzer) elsewhere(e elsewhere, judge func()) {
	nAcc, nFind := len(a.res.Accesses), len(a.res.Findings)
	cred := a.cred
	cwd, pwd := a.cwd, a.pwdRaw
	a.cwd, a.pwdRaw = e.cwd, ""
	judge()
	a.cwd, a.pwdRaw = cwd, pwd
	a.cred = cred
	kept := a.res.Accesses[:nAcc]
	var there []Access
	for _, ac := range a.res.Accesses[nAcc:] {
		if e.host != nil && ac.Path != "" {
			if h := e.host(ac.Path); h != "" {
				ac.Path, ac.Joined = h, ""
				kept = append(kept, ac)
				if !ac.Write && !ac.Delete && a.isCredential(h, ac.Glob) {
					a.credSource(ac.Span, h)
				}
				continue
			}
		}
		there = append(there, ac)
	}
	a.res.Accesses = kept
	for _, ac := range there {
		if ac.Write || ac.Delete || ac.Path == "" {
			continue
		}
		if a.isCredential(ac.Path, ac.Glob) || ac.Recursive && pathrisk.HoldsSecrets(ac.Path, a.pathEnv()) || isPodSecret(ac.Path) {
			a.credSource(ac.Span, ac.Path+" "+e.where)
			a.find(risk.Credential, ac.Span, "reads "+quote(ac.Path)+" "+e.where+", a place that holds secrets, and prints it here")
		}
	}
	if !e.keepDestroy {
		for i := nFind; i < len(a.res.Findings); i++ {
			if f := &a.res.Findings[i]; f.Risk == risk.Destructive {
				f.Risk = risk.Write
				f.Why += " (" + e.where + ", which mounts nothing of the host: only the container's own files)"
			}
		}
	}
}

// isPodSecret reports the places containers keep their mounted secrets.
func isPodSecret(p string) bool {
	return strings.HasPrefix(p, "/var/run/secrets/") || strings.HasPrefix(p, "/run/secrets/") || p == "/run/secrets" || p == "/var/run/secrets"
}

// ruleSSH: besides the connection (ruleNetTool), the command ssh runs on
// the remote machine is parsed and judged there: ssh joins the words after
// the host with spaces and hands them to the remote shell. With no command
// the remote login shell reads standard input, so a here-document is the
// code. Paths there are the remote machine's, not accesses here.
func ruleSSH(a *analyzer, c *call) {
	ruleNetTool(a, c)
	args := c.args
	host, at := -1, -1
	noCmd := false
	const withValue = "BbcDEeFIiJLlmOoPpQRSWw"
	for i := 1; i < len(args) && at < 0; i++ {
		x := args[i]
		s := x.s
		switch {
		case x.dyn && host < 0:
			if s == "" || strings.HasPrefix(s, "-") {
				a.opaque(x.sp, "ssh is given a word built at run time where an option may stand")
			}
			host = i
		case x.dyn:
			at = i
		case s == "--":
			if host < 0 && i+1 < len(args) {
				i++
				host = i
			}
			if i+1 < len(args) {
				at = i + 1
			}
			i = len(args)
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				ch := s[j]
				if ch == 'N' {
					noCmd = true
				}
				if strings.IndexByte(withValue, ch) >= 0 {
					if ch == 'W' || ch == 'O' {
						noCmd = true
					}
					if j+1 == len(s) {
						i++
					}
					break
				}
			}
		case host < 0:
			host = i
		default:
			at = i
		}
	}
	if host < 0 || noCmd {
		return
	}
	there := elsewhere{where: "on the remote machine", cwd: a.env.Home, keepDestroy: true}
	if at < 0 {
		if c.in.kind != inNone {
			a.elsewhere(there, func() { a.shellStdin(c, "the remote shell") })
		}
		return
	}
	words := args[at:]
	var code strings.Builder
	for i, x := range words {
		if x.dyn {
			a.opaque(x.sp, "ssh runs a remote command built at run time, which cannot be checked")
			return
		}
		if i > 0 {
			code.WriteByte(' ')
		}
		code.WriteString(x.s)
	}
	sp := risk.Span{Start: words[0].sp.Start, End: words[len(words)-1].sp.End}
	if sp.End < sp.Start || len(words) > 1 && words[0].sp == words[len(words)-1].sp {
		sp = c.sp
	}
	a.elsewhere(there, func() { a.reparseAs(code.String(), code.String(), sp, c.in) })
}

// remoteDaemon reports a daemon address on another machine.
func remoteDaemon(s string) bool {
	for _, p := range [...]string{"tcp://", "ssh://", "http://", "https://"} {
		if strings.HasPrefix(strings.ToLower(s), p) {
			return true
		}
	}
	return false
}

// templateShell judges xargs -I{} sh -c '… {} …' with the placeholder
// xargs names, and reports whether rest was such a call.
func (a *analyzer) templateShell(c *call, rest []arg, holder string) bool {
	if len(rest) < 3 || rest[0].dyn {
		return false
	}
	name := programName(rest[0].s)
	switch name {
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash":
	default:
		return false
	}
	for i := 1; i < len(rest); i++ {
		x := rest[i]
		if x.dyn || len(x.s) < 2 || x.s[0] != '-' || x.s[1] == '-' {
			return false
		}
		if strings.IndexByte(x.s, 'c') < 0 {
			continue
		}
		if i+1 >= len(rest) || rest[i+1].dyn || !strings.Contains(rest[i+1].s, holder) {
			return false
		}
		a.command(markDyn(rest, holder), c.sp, true)
		a.template(rest[i+1], name+" -c", holder)
		return true
	}
	return false
}

// parallelHolders are the replacement strings of GNU parallel.
var parallelHolders = []string{"{}", "{.}", "{/}", "{//}", "{/.}", "{#}", "{%}", "{1}", "{2}", "{3}", "{4}", "{5}", "{6}", "{7}", "{8}", "{9}"}

// parallelCode judges the command GNU parallel runs for each input: each
// replacement string is a word known only at run time (parallel quotes
// it, so it stays one word); without one, the input is appended.
func (a *analyzer) parallelCode(code string, sp risk.Span, holder string) {
	holders := parallelHolders
	if holder != "" {
		holders = append([]string{holder}, parallelHolders...)
	}
	for _, h := range holders {
		if h != "" && strings.Contains(code, h) {
			a.reparseAs(dynHolders(code, holders), code, sp, input{})
			return
		}
	}
	old := a.appended
	a.appended = true
	a.reparse(code, sp, false)
	a.appended = old
}

// literalIndex reports a subscript bash evaluates to nothing but itself:
// @, * or digits (${a[@]}, ${a[0]}), so no code can hide in it.
func literalIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && (l.Value == "@" || l.Value == "*" || isDigits(l.Value))
}
