package shellrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Editors that take commands in batch: vim -c/+cmd, ex -sc, ed scripts on
// standard input, emacs --batch --eval, and awk programs. A shell escape
// they hold is parsed as shell, a file they write or read is judged as a
// path; the program stays Opaque as ruleInterpreter makes it.

// ruleVim judges vim, nvim and ex: -c, +cmd and --cmd commands, -S
// scripts, and ex commands read from standard input in ex mode.
func ruleVim(a *analyzer, c *call) {
	ruleInterpreter(a, c)
	name := programName(c.args[0].s)
	exMode := name == "ex"
	var cmds []arg
	for i := 1; i < len(c.args); i++ {
		x := c.args[i]
		s := x.s
		switch {
		case x.dyn:
			a.opaque(x.sp, name+" is given an argument built at run time")
			return
		case s == "--":
			i = len(c.args)
		case strings.HasPrefix(s, "+") && len(s) > 1:
			cmds = append(cmds, arg{s: s[1:], sp: x.sp})
		case s == "--cmd" && i+1 < len(c.args):
			i++
			cmds = append(cmds, c.args[i])
		case strings.HasPrefix(s, "--"):
		case strings.HasPrefix(s, "-") && len(s) > 1:
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'c':
					if i+1 < len(c.args) {
						i++
						cmds = append(cmds, c.args[i])
					}
				case 'e', 'E':
					exMode = true
				case 'S':
					if i+1 < len(c.args) && !strings.HasPrefix(c.args[i+1].s, "-") {
						i++
						a.access(c.args[i], c.cwd, false, false)
						a.opaque(c.args[i].sp, name+" -S runs the vim script "+quote(c.args[i].s)+", whose contents are not checked")
					}
				}
			}
		}
	}
	for _, x := range cmds {
		a.opaque(x.sp, name+" runs the editor command "+quote(x.s)+", which is only scanned for what it can be seen to do; no rule allows it")
		a.exCommands(name, x.s, x.sp, c, false)
	}
	if exMode && (c.in.kind == inHere || c.in.kind == inPipe) {
		a.opaque(c.sp, name+" runs editor commands read from standard input")
		if c.in.text != "" {
			a.exCommands(name, c.in.text, c.in.sp, c, true)
		}
	}
}

// exCommands judges ex commands separated by | or newlines.
func (a *analyzer) exCommands(name, text string, sp risk.Span, c *call, lines bool) {
	for n := 0; text != "" && n < 256; n++ {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		for line != "" {
			cmd := strings.TrimLeft(line, " \t:")
			cmd = strings.TrimLeft(cmd, "%.$0123456789,;'<>+- ")
			for _, p := range []string{"silent! ", "silent ", "sil! ", "sil ", "keepalt ", "noautocmd ", "noa "} {
				cmd = strings.TrimPrefix(cmd, p)
			}
			rest := ""
			// Commands that take the rest of the line, | included.
			if !strings.HasPrefix(cmd, "!") && !exTakesRest(cmd) {
				if i := strings.IndexByte(cmd, '|'); i >= 0 {
					cmd, rest = cmd[:i], cmd[i+1:]
				}
			}
			a.exCommand(name, strings.TrimSpace(cmd), sp, c)
			line = rest
		}
	}
}

func exTakesRest(cmd string) bool {
	w := cmd
	if i := strings.IndexAny(cmd, " \t!("); i >= 0 {
		w = cmd[:i]
	}
	switch w {
	case "r", "re", "read", "w", "write", "exe", "execute", "norm", "normal", "py", "py3", "python", "python3", "pyx", "pythonx", "lua", "perl", "ruby", "rub", "ter", "term", "terminal", "call", "echo", "let", "g", "global", "v", "vglobal":
		return true
	}
	return false
}

// exCommand judges one ex command.
func (a *analyzer) exCommand(name, cmd string, sp risk.Span, c *call) {
	if cmd == "" {
		return
	}
	if strings.HasPrefix(cmd, "!") {
		a.find(risk.Execute, sp, name+" runs the shell command "+quote(cmd[1:]))
		a.reparse(cmd[1:], sp, false)
		return
	}
	w, arg0 := cmd, ""
	if i := strings.IndexAny(cmd, " \t!("); i >= 0 {
		w, arg0 = cmd[:i], strings.TrimSpace(cmd[i:])
	}
	force := strings.HasPrefix(arg0, "!") && len(cmd) > len(w) && cmd[len(w)] == '!'
	if force {
		arg0 = strings.TrimSpace(arg0[1:])
	}
	switch w {
	case "r", "re", "read", "w", "write", "wq", "x", "xit", "up", "update", "sav", "saveas", "e", "edit", "sp", "split", "vs", "vsplit", "tabe", "tabedit", "new", "vnew":
		if strings.HasPrefix(arg0, "!") && (w[0] == 'r' || w[0] == 'w') {
			a.find(risk.Execute, sp, name+" runs the shell command "+quote(arg0[1:]))
			a.reparse(arg0[1:], sp, false)
			return
		}
		arg0 = strings.TrimSpace(strings.TrimPrefix(arg0, ">>"))
		if arg0 == "" {
			return
		}
		write := w[0] == 'w' || w[0] == 'x' || w == "sav" || w == "saveas" || w == "up" || w == "update"
		a.access(arg{s: arg0, sp: sp}, c.cwd, write, false)
		if write {
			a.find(risk.Write, sp, name+" writes the file "+quote(arg0))
		}
	case "so", "source", "runtime", "ru", "luafile", "pyfile", "py3file", "rubyfile", "perldo":
		if arg0 != "" {
			a.access(arg{s: arg0, sp: sp}, c.cwd, false, false)
		}
		a.opaque(sp, name+" runs the script "+quote(arg0)+", whose contents are not checked")
	case "py", "py3", "python", "python3", "pyx", "pythonx":
		a.langCode(&langs().python, codeSrc{text: arg0, sp: sp}, c, 1)
	case "lua":
		a.langCode(&langs().lua, codeSrc{text: arg0, sp: sp}, c, 1)
	case "perl":
		a.langCode(&langs().perl, codeSrc{text: arg0, sp: sp}, c, 1)
	case "ruby", "rub":
		a.langCode(&langs().ruby, codeSrc{text: arg0, sp: sp}, c, 1)
	case "ter", "term", "terminal":
		if arg0 != "" {
			a.reparse(arg0, sp, false)
		}
	case "sh", "shell":
		a.opaque(sp, name+" starts an interactive shell")
	case "exe", "execute", "norm", "normal", "g", "global", "v", "vglobal":
		a.opaque(sp, name+" runs editor commands it builds ("+quote(cmd)+"), which are not analysed")
	}
	// system("…") and systemlist("…") anywhere in the command.
	for rest, n := cmd, 0; n < 16; n++ {
		i := strings.Index(rest, "system")
		if i < 0 {
			break
		}
		rest = rest[i+len("system"):]
		rest = strings.TrimPrefix(rest, "list")
		if !strings.HasPrefix(rest, "(") {
			continue
		}
		body := strings.TrimLeft(rest[1:], " ")
		if body == "" || body[0] != '\'' && body[0] != '"' {
			a.opaque(sp, name+" runs a shell command built at run time (system())")
			continue
		}
		if j := strings.IndexByte(body[1:], body[0]); j >= 0 {
			code := body[1 : 1+j]
			a.find(risk.Execute, sp, name+" runs the shell command "+quote(code))
			a.reparse(code, sp, false)
		}
	}
}

// ruleEd judges ed: its script on standard input may run shell commands
// (!cmd, r !cmd, w !cmd) and write files.
func ruleEd(a *analyzer, c *call) {
	ruleInterpreter(a, c)
	var files []arg
	for _, x := range c.args[1:] {
		if !strings.HasPrefix(x.s, "-") || x.dyn {
			files = append(files, x)
		}
	}
	if c.in.kind != inHere && c.in.kind != inPipe {
		return
	}
	a.opaque(c.sp, "ed runs editing commands read from standard input, which are only scanned for what they can be seen to do; no rule allows it")
	text := c.in.text
	for n := 0; text != "" && n < 1024; n++ {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		cmd := strings.TrimLeft(line, " \t0123456789,;.$+-")
		if cmd == "" {
			continue
		}
		op := cmd[0]
		rest := strings.TrimSpace(cmd[1:])
		switch op {
		case '!':
			a.find(risk.Execute, c.in.sp, "ed runs the shell command "+quote(cmd[1:]))
			a.reparse(cmd[1:], c.in.sp, false)
		case 'r', 'e', 'E', 'w', 'W':
			if op == 'w' && strings.HasPrefix(rest, "q") {
				rest = strings.TrimSpace(rest[1:])
			}
			if strings.HasPrefix(rest, "!") {
				a.find(risk.Execute, c.in.sp, "ed runs the shell command "+quote(rest[1:]))
				a.reparse(rest[1:], c.in.sp, false)
				continue
			}
			write := op == 'w' || op == 'W'
			if rest == "" {
				if write {
					for _, f := range files {
						a.access(f, c.cwd, true, false)
					}
				}
				continue
			}
			if len(cmd) > 1 && cmd[1] != ' ' && cmd[1] != 'q' {
				continue // not a file command (e.g. "wq" handled, "e" alone)
			}
			a.access(arg{s: rest, sp: c.in.sp}, c.cwd, write, false)
			if write {
				a.find(risk.Write, c.in.sp, "ed writes the file "+quote(rest))
			}
		}
	}
}

// ruleEmacs judges emacs: --eval code is scanned as emacs lisp, -l and
// --script files are named.
func ruleEmacs(a *analyzer, c *call) {
	ruleInterpreter(a, c)
	args := c.args
	for i := 1; i < len(args); i++ {
		x := args[i]
		s := x.s
		if x.dyn {
			return
		}
		val := func() (arg, bool) {
			if j := strings.IndexByte(s, '='); j >= 0 && strings.HasPrefix(s, "--") {
				return arg{s: s[j+1:], sp: x.sp}, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return arg{}, false
		}
		switch {
		case s == "--eval" || s == "-eval" || strings.HasPrefix(s, "--eval="):
			if v, ok := val(); ok {
				a.opaque(v.sp, "emacs evaluates the lisp "+quote(v.s)+", which is only scanned for what it can be seen to do; no rule allows it")
				a.langCode(&langs().elisp, codeSrc{text: v.s, sp: v.sp, dyn: v.dyn}, c, 0)
			}
		case s == "-l" || s == "--load" || strings.HasPrefix(s, "--load=") || s == "--script" || s == "-script" || s == "-x":
			if v, ok := val(); ok {
				a.access(v, c.cwd, false, false)
				a.opaque(v.sp, "emacs runs the lisp file "+quote(v.s)+", whose contents are not checked")
			}
		case s == "-f" || s == "--funcall" || strings.HasPrefix(s, "--funcall="):
			if v, ok := val(); ok {
				a.opaque(v.sp, "emacs calls the function "+quote(v.s)+", which is not analysed")
			}
		}
	}
}

// awkProgram scans an awk program that runs commands or writes files:
// system("…"), "…" | getline and print | "…" run the literal as shell,
// print > "file" writes the file.
func (a *analyzer) awkProgram(prog arg, cwd string) {
	code := prog.s
	toks := lex(code, lexCfg{hash: true})
	m := a.codeMapFor(codeSrc{text: code, sp: prog.sp})
	redirs := 0
	for i, t := range toks {
		if t.k != 's' && !(t.k == 'w' && t.s == "system") {
			continue
		}
		switch {
		case t.k == 'w':
			if i+2 < len(toks) && toks[i+1].s == "(" && toks[i+2].k == 's' && toks[i+2].end < len(code) && i+3 < len(toks) && toks[i+3].s == ")" {
				s := toks[i+2]
				a.find(risk.Execute, m.valSpan(s), "awk runs the shell command "+quote(s.s))
				if !s.dyn {
					a.reparse(s.s, m.valSpan(s), false)
				}
			}
		case i+1 < len(toks) && toks[i+1].s == "|" && i+2 < len(toks) && toks[i+2].s == "getline":
			a.find(risk.Execute, m.valSpan(t), "awk runs the shell command "+quote(t.s))
			a.reparse(t.s, m.valSpan(t), false)
		case i > 0 && toks[i-1].k == 'p' && (toks[i-1].s == "|" || toks[i-1].s == ">" || toks[i-1].s == ">>"):
			if redirs++; redirs > 64 || !awkPrintAt(toks, i-1) {
				continue
			}
			if toks[i-1].s == "|" {
				a.find(risk.Execute, m.valSpan(t), "awk pipes its output to the shell command "+quote(t.s))
				a.reparse(t.s, m.valSpan(t), false)
				continue
			}
			if isHarmlessDevice(t.s) || t.s == "/dev/stdout" || t.s == "/dev/stderr" {
				continue
			}
			a.access(arg{s: t.s, sp: m.valSpan(t)}, cwd, true, false)
			a.find(risk.Write, m.valSpan(t), "awk writes the file "+quote(t.s))
		}
	}
}

// awkPrintAt reports whether the token at i (a > or |) is inside a print or
// printf statement, where it redirects the output: the statement starts
// after the last ; { } or newline before it, outside strings.
func awkPrintAt(toks []tok, i int) bool {
	for j, n := i-1, 0; j >= 0 && n < 256; j, n = j-1, n+1 {
		t := toks[j]
		if t.k == 'w' && (t.s == "print" || t.s == "printf") {
			return true
		}
		if t.nl || t.k == 'p' && (t.s == ";" || t.s == "{" || t.s == "}") {
			return false
		}
	}
	return false
}

// awkWrites reports whether an awk program redirects print output to a
// file or command, reading strings as strings (a brace inside "{}" ends no
// statement).
func awkWrites(p string) bool {
	toks := lex(p, lexCfg{hash: true})
	for i, t := range toks {
		if t.k == 'p' && (t.s == ">" || t.s == ">>" || t.s == "|") && awkPrintAt(toks, i) {
			return true
		}
		if i > 200000 {
			break
		}
	}
	return false
}
