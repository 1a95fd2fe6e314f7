package shellrisk

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Code handed to interpreters and tools with a language of their own
// (issue 9 §4): python -c, node -e, perl -e, ruby -e, php -r, lua -e, deno
// eval, bun -e, tclsh, osascript -e, pwsh -Command, here-documents and pipes
// fed to them, and the batch commands of ed, ex, vim and emacs.
//
// Such a program stays Opaque, as ruleInterpreter makes it: an allow rule
// covers a call only when the analyser understood every word (issue 15),
// and a small lexer per language understands far less than that. What the
// analysis adds only raises the risk: it scans the code for the things it
// can name (a command it spawns, a file it deletes, opens or writes, a host
// it connects to, the environment it dumps) and reports each with its span,
// so that a person is asked "deletes ./src" instead of "runs a program",
// a deletion is asked every time and a credential read is denied. A
// command given as a string literal is parsed as shell; one built at run
// time, and code the program evaluates (eval, exec, dynamic imports), are
// named as such.

// ruleForLang returns the rule for a program of this file's class, or nil:
// code handed to interpreters and tools with a language of their own (python, perl, ruby, node, php, lua, deno, bun, pwsh one-liners; ed, ex, vim, emacs batch commands).
// ruleFor consults it before its own table, so a rule returned here
// replaces the general one for that program.
func ruleForLang(name string) rule {
	if langOf(name) != nil {
		return ruleLang
	}
	switch name {
	case "vim", "nvim", "vi", "ex", "view", "vimdiff", "rvim":
		return ruleVim
	case "ed", "red":
		return ruleEd
	case "emacs", "emacs-nox":
		return ruleEmacs
	}
	return nil
}

// langOf returns the language of an interpreter's program name.
func langOf(name string) *langInfo {
	switch {
	case versioned(name, "python"), versioned(name, "pypy"):
		return &langs().python
	case name == "node", name == "nodejs", name == "deno", name == "bun":
		return &langs().js
	case versioned(name, "perl"):
		return &langs().perl
	case versioned(name, "ruby"):
		return &langs().ruby
	case versioned(name, "php"):
		return &langs().php
	case versioned(name, "lua"), name == "luajit":
		return &langs().lua
	case name == "pwsh", name == "powershell", name == "pwsh-preview", name == "powershell.exe", name == "pwsh.exe":
		return &langs().pwsh
	case name == "osascript":
		return &langs().osa
	case name == "tclsh", name == "wish", versioned(name, "tclsh"):
		return &langs().tcl
	}
	return nil
}

// versioned reports name is base followed by nothing or a version
// (python3, python3.12, perl5.36, ruby3.2, php8.3, lua5.4).
func versioned(name, base string) bool {
	v, ok := strings.CutPrefix(name, base)
	if !ok {
		return false
	}
	for i := 0; i < len(v); i++ {
		if (v[i] < '0' || v[i] > '9') && v[i] != '.' {
			return false
		}
	}
	return true
}

// codeSrc is a piece of code an interpreter runs: its text and the span
// of the command string it came from.
type codeSrc struct {
	text string
	sp   risk.Span
	// dyn is set when part of the code is only known at run time (an
	// unquoted here-document or a word holding $x): the shell dropped
	// those parts from text, so no literal in it can be trusted whole.
	dyn bool
}

// ruleLang judges an interpreter: as the general rule does (ruleInterpreter
// keeps the program Opaque when it is handed code) and then by what its
// code does.
func ruleLang(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	// The general table's rule first: deno and bun are package runners
	// there (bun x, deno install), the others interpreters.
	if r := networkRule(name); r != nil {
		r(a, c)
	} else {
		ruleInterpreter(a, c)
	}
	li := langOf(name)
	srcs, operands, inPlace := a.langSources(li, name, c)
	if li == &langs().osa {
		for i := 1; i+1 < len(c.args); i++ {
			if c.args[i].s == "-l" && strings.EqualFold(c.args[i+1].s, "JavaScript") {
				li = &langs().jxa
			}
		}
	}
	for _, src := range srcs {
		a.opaque(src.sp, name+" is handed code ("+quote(a.text(src.sp))+"), which is only scanned for what it can be seen to do; no rule allows it")
		a.langCode(li, src, c, 0)
	}
	for _, x := range operands {
		a.access(x, c.cwd, inPlace, false)
	}
}

// langSources finds the code an interpreter is handed: inline options,
// or standard input when it reads its program from there. operands are
// files perl -n/-p and ruby -n/-p read (written with -i).
func (a *analyzer) langSources(li *langInfo, name string, c *call) (srcs []codeSrc, operands []arg, inPlace bool) {
	args := c.args
	stdin := true
	add := func(x arg) {
		srcs = append(srcs, codeSrc{text: x.s, sp: x.sp, dyn: x.dyn})
	}
	lines := false // perl/ruby -n, -p: the operands are files read
	switch li {
	case &langs().pwsh:
		return a.pwshSources(name, c), nil, false
	}
	i := 1
	if name == "deno" {
		// deno eval CODE; deno run - (stdin); deno repl --eval CODE.
		for i < len(args) && strings.HasPrefix(args[i].s, "-") {
			i++
		}
		if i >= len(args) || args[i].dyn {
			return
		}
		switch args[i].s {
		case "eval":
			for i++; i < len(args); i++ {
				if !strings.HasPrefix(args[i].s, "-") || args[i].dyn {
					add(args[i])
					return
				}
			}
			return
		case "run", "repl":
			sub := args[i].s
			for i++; i < len(args); i++ {
				s := args[i].s
				switch {
				case s == "-":
					return a.stdinSrc(c, srcs), nil, false
				case s == "--eval" && i+1 < len(args):
					add(args[i+1])
					return
				case strings.HasPrefix(s, "--eval="):
					add(arg{s: s[len("--eval="):], sp: args[i].sp})
					return
				case !strings.HasPrefix(s, "-"):
					return
				}
			}
			if sub == "repl" {
				return a.stdinSrc(c, srcs), nil, false // deno repl reads its input
			}
			return
		}
		return
	}
	if name == "bun" && i < len(args) && args[i].s == "run" {
		i++ // bun run - reads stdin; bun run FILE runs a file
	}
	for ; i < len(args); i++ {
		x := args[i]
		s := x.s
		if x.dyn {
			stdin = false
			break
		}
		if s == "-" {
			break
		}
		if s == "--" || !strings.HasPrefix(s, "-") {
			stdin = false
			if len(srcs) > 0 && s != "--" {
				operands = args[i:]
			} else if len(srcs) > 0 {
				operands = args[i+1:]
			}
			break
		}
		if strings.HasPrefix(s, "--") {
			n, v, hasV := strings.Cut(s[2:], "=")
			switch {
			case li.longCode[n]:
				stdin = false
				if hasV {
					add(arg{s: v, sp: x.sp})
				} else if i+1 < len(args) {
					i++
					add(args[i])
				}
			case n == "env-file":
				if hasV {
					a.access(arg{s: v, sp: x.sp}, c.cwd, false, false)
				} else if i+1 < len(args) {
					i++
					a.access(args[i], c.cwd, false, false)
				}
			case li.longValue[n] && !hasV:
				i++
			}
			continue
		}
		// A cluster of short options: -lne, -Bc, -pi.bak -e.
		for j := 1; j < len(s); j++ {
			ch := s[j]
			switch {
			case strings.IndexByte(li.codeOpt, ch) >= 0:
				stdin = false
				if j+1 < len(s) {
					add(arg{s: s[j+1:], sp: x.sp})
				} else if i+1 < len(args) {
					i++
					add(args[i])
				}
				j = len(s)
			case ch == 'm' && li == &langs().python:
				// python -m MODULE runs a module, not inline code.
				return srcs, nil, false
			case li.lines && (ch == 'n' || ch == 'p'):
				lines = true
			case li.lines && ch == 'i':
				inPlace = true
				j = len(s) // -i.bak: the rest is the backup suffix
			case li.digits && (ch == 'l' || ch == '0'):
				for j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9' {
					j++
				}
			case strings.IndexByte(li.attached, ch) >= 0:
				j = len(s) // -MFile::Path, -I/dir: the rest is its value
			case strings.IndexByte(li.valueOpt, ch) >= 0:
				if j+1 == len(s) {
					i++
				}
				j = len(s)
			}
		}
	}
	if !lines {
		operands = nil
	}
	if len(srcs) == 0 && stdin {
		srcs = a.stdinSrc(c, srcs)
	}
	return srcs, operands, inPlace
}

// stdinSrc adds the program an interpreter reads from standard input,
// when it is known (a here-document, or echo/printf/cat into a pipe).
func (a *analyzer) stdinSrc(c *call, srcs []codeSrc) []codeSrc {
	if (c.in.kind == inHere || c.in.kind == inPipe) && c.in.text != "" {
		srcs = append(srcs, codeSrc{text: c.in.text, sp: c.in.sp, dyn: !c.in.known})
	}
	return srcs
}

// pwshSources finds the code of pwsh and powershell: -Command takes the
// rest of the words, -EncodedCommand base64 of UTF-16LE text, and
// powershell (not pwsh) takes a first word that is no option as a command.
func (a *analyzer) pwshSources(name string, c *call) []codeSrc {
	args := c.args
	var srcs []codeSrc
	for i := 1; i < len(args); i++ {
		x := args[i]
		if x.dyn {
			return srcs
		}
		s := x.s
		p := strings.ToLower(strings.TrimLeft(s, "-/"))
		if p == s || s == "-" {
			if s == "-" {
				return a.stdinSrc(c, srcs)
			}
			if name == "pwsh" || name == "pwsh.exe" || name == "pwsh-preview" {
				return srcs // pwsh FILE runs a script file
			}
			return append(srcs, joinArgs(args[i:])) // powershell CMD ...
		}
		switch {
		case p == "c" || len(p) >= 2 && strings.HasPrefix("command", p):
			if i+1 < len(args) && args[i+1].s == "-" {
				return a.stdinSrc(c, srcs)
			}
			if i+1 < len(args) {
				srcs = append(srcs, joinArgs(args[i+1:]))
			}
			return srcs
		case p == "e" || p == "ec" || len(p) >= 3 && strings.HasPrefix("encodedcommand", p):
			if i+1 < len(args) {
				if code, ok := decodeUTF16Base64(args[i+1].s); ok {
					srcs = append(srcs, codeSrc{text: code, sp: args[i+1].sp})
				}
			}
			return srcs
		case p == "f" || len(p) >= 2 && strings.HasPrefix("file", p):
			return srcs
		case strings.HasPrefix("executionpolicy", p) && len(p) >= 2, p == "ep", p == "w", strings.HasPrefix("windowstyle", p) && len(p) >= 2,
			p == "wd", strings.HasPrefix("workingdirectory", p) && len(p) >= 3, p == "if", p == "of", strings.HasPrefix("inputformat", p) && len(p) >= 3,
			strings.HasPrefix("outputformat", p) && len(p) >= 3, strings.HasPrefix("configurationname", p) && len(p) >= 4, p == "v", strings.HasPrefix("version", p) && len(p) >= 3,
			strings.HasPrefix("settingsfile", p) && len(p) >= 2, strings.HasPrefix("custompipename", p) && len(p) >= 2:
			i++
		}
	}
	return a.stdinSrc(c, srcs)
}

// joinArgs joins words the way pwsh -Command does, with one space.
func joinArgs(args []arg) codeSrc {
	var b strings.Builder
	dyn := false
	for i, x := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.s)
		dyn = dyn || x.dyn
	}
	sp := risk.Span{Start: args[0].sp.Start, End: args[len(args)-1].sp.End}
	if sp.End < sp.Start {
		sp = args[0].sp
	}
	return codeSrc{text: b.String(), sp: sp, dyn: dyn}
}

// decodeUTF16Base64 decodes pwsh -EncodedCommand.
func decodeUTF16Base64(s string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%2 != 0 || len(b) > MaxInput*2 {
		return "", false
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u)), true
}

// codeMap maps offsets of code to spans of the command string: exactly
// when the code appears verbatim in the word it came from, else every
// offset maps to the whole word.
type codeMap struct {
	base  int
	exact bool
	outer risk.Span
	word  string // the text of outer
}

func (a *analyzer) codeMapFor(src codeSrc) codeMap {
	m := codeMap{outer: src.sp, word: a.text(src.sp)}
	if i := strings.Index(m.word, src.text); i >= 0 && src.text != "" {
		m.base, m.exact = src.sp.Start+i, true
	} else if t := strings.TrimRight(src.text, "\n"); t != "" && len(t) < len(src.text) {
		// A here-string ends in a newline the command does not hold.
		if i := strings.Index(m.word, t); i >= 0 {
			m.base, m.exact = src.sp.Start+i, true
		}
	}
	return m
}

func (m codeMap) span(s, e int) risk.Span {
	if !m.exact || e < s {
		return m.outer
	}
	return risk.Span{Start: m.base + s, End: m.base + e}
}

// valSpan is the span of a string literal's value: its text between the
// quotes, or where the value appears once in the word.
func (m codeMap) valSpan(t tok) risk.Span {
	if m.exact {
		return m.span(t.vs, t.ve)
	}
	if t.s != "" && strings.Count(m.word, t.s) == 1 {
		i := strings.Index(m.word, t.s)
		return risk.Span{Start: m.outer.Start + i, End: m.outer.Start + i + len(t.s)}
	}
	return m.outer
}

// maxLangDepth bounds code evaluated by code (exec("…"), iex "…").
const maxLangDepth = 3

// langCode scans one piece of code.
func (a *analyzer) langCode(li *langInfo, src codeSrc, c *call, depth int) {
	if len(src.text) > MaxInput {
		return
	}
	s := &codeScan{a: a, c: c, li: li, code: src.text, m: a.codeMapFor(src), depth: depth, dyn: src.dyn}
	s.toks = lex(src.text, li.cfg)
	if src.dyn {
		for i := range s.toks {
			s.toks[i].dyn = true // strings and command strings alike
		}
	}
	s.match = matchBrackets(s.toks)
	a.work += len(s.toks) // lexing and matching: one pass each
	s.scan()
}
