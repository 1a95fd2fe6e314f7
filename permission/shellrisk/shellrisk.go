package shellrisk

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Limits that keep Analyze bounded on any input. Passing one makes the result
// Opaque rather than silently incomplete.
const (
	// MaxInput is the longest command analysed; longer ones are Opaque.
	MaxInput = 64 << 10
	// maxDepth bounds re-parsing of strings handed to shells (bash -c, eval,
	// here-documents fed to sh, ...).
	maxDepth = 4
	// maxWrap bounds wrappers nested in one simple command (env env ...).
	maxWrap = 16
	// maxCommands bounds the simple commands examined, re-parsed ones included.
	maxCommands = 2048
	// maxBraceWords bounds the words one brace expansion may produce.
	maxBraceWords = 64
	// maxVars bounds the shell variables whose static values are tracked.
	maxVars = 128
	// maxVarLen bounds the value of a tracked variable, and maxExpand the
	// bytes all variable expansions may produce: a=$a$a repeated would
	// otherwise double without end.
	maxVarLen = 4 << 10
	// maxListed bounds Findings and Accesses; more make the result Opaque.
	maxListed = 512
	maxExpand = 256 << 10
)

// Env is what Analyze knows about the environment the command would run in.
// It is a value: Analyze never looks anything up.
type Env struct {
	// Cwd is the absolute working directory of the command. If it is empty or
	// relative, relative paths cannot be resolved and their Access.Path is "".
	Cwd string
	// Home is $HOME, used for ~ and $HOME. Empty means unknown.
	Home string
	// UserHomes maps a user name to its home directory for ~user. A ~user not
	// in the map makes the path unknown.
	UserHomes map[string]string
	// DataDir is custom-agent's data directory when the runner knows it
	// (pathrisk.Env.DataDir): a credential location wherever it is.
	DataDir string
	// IsCredential reports whether an absolute, cleaned path is a credential
	// location (a secret a command should not send anywhere). nil means the
	// engine's own table, pathrisk.IsCredential with Home and UserHomes, so
	// the engine need not inject anything; a caller with another list injects
	// it here. It must be pure and safe for concurrent use. Glob patterns are
	// always checked against pathrisk's table, since a predicate on one path
	// cannot say what a pattern might match.
	IsCredential func(abs string) bool
}

// Access is a file a command reads, writes or deletes.
type Access struct {
	// Path is absolute and lexically cleaned (~, ~user, $HOME, ${HOME} and
	// variables assigned earlier in the command expanded, joined with the
	// effective working directory, "..", "." and "//" cleaned; symlinks are
	// not resolved). It is "" when it cannot be known statically; callers
	// must then treat the location as unknown, never as inside the cwd.
	Path string `json:"path"`
	// Joined is the path made absolute but with its ".." components kept,
	// set only when it differs from Path: a caller that resolves symbolic
	// links needs it, since l/.. is not the cwd when l is a link.
	Joined string `json:"joined,omitempty"`
	// Raw is the word as written in the command.
	Raw string `json:"raw"`
	// Write is set for files the command creates, truncates or modifies.
	Write bool `json:"write,omitempty"`
	// Delete is set for files the command removes.
	Delete bool `json:"delete,omitempty"`
	// Glob is set when Path still holds unquoted glob characters (* ? [),
	// so it names every file the pattern matches.
	Glob bool `json:"glob,omitempty"`
	// Recursive is set for a read of everything beneath Path (tar c DIR,
	// grep -r, cp -r, rsync -a, zip -r, rg): the read reaches whatever
	// the directory holds, credential stores included.
	Recursive bool `json:"recursive,omitempty"`
	// Tracked is set for a read of what the git repository holding Path
	// tracks, anywhere in the repository, committed or staged (git diff,
	// git log -p, git show print patches): the read reaches a credential
	// file the repository tracks, whatever the working tree holds.
	Tracked bool `json:"tracked,omitempty"`
	// Committed is set with Tracked when what is printed is the files as a
	// revision, the staged index, a submodule or an object id holds them,
	// or a search of their content (git show, git log -p, git diff HEAD,
	// git log -G): what the index lists now does not bound it.
	Committed bool `json:"committed,omitempty"`
	// Span is the bytes of the word in the command string.
	Span risk.Span `json:"span"`
}

// Command is one simple command that would run, wrappers seen through.
type Command struct {
	// Argv holds the words after quote removal and brace and ANSI-C
	// expansion. Argv[0] is the program; an absolute program path is reduced
	// to its base name ("/usr/bin/rm" → "rm"). Words built at run time keep
	// only their static text.
	Argv []string `json:"argv"`
	// Span is the bytes of the command in the command string.
	Span risk.Span `json:"span"`
	// Dynamic is set when the program name or some arguments are only known
	// at run time ($x or $(...) words, xargs and find -exec arguments).
	Dynamic bool `json:"dynamic,omitempty"`
	// Prefixed is set when the command runs through a wrapper (env, sudo,
	// timeout, nice, xargs, find -exec, command, …) or with variable
	// assignments before it (GIT_DIR=x git log): it does not run as the
	// plain command its words say, in the shell's own environment.
	Prefixed bool `json:"prefixed,omitempty"`
	// Globs has bit i set when Argv[i] is an unquoted glob pattern, whose
	// words are the file names it matches at run time (bit 63 stands for
	// every word from the 63rd on). A pattern such as *.go may match a
	// file named -rf.go, which the program reads as options.
	Globs uint64 `json:"globs,omitempty"`
}

// Result is what Analyze found. The zero Result is not a judgement: Analyze
// always returns Risk ≥ risk.Execute.
type Result struct {
	// Findings are the program- and option-level risks, with Arg "command"
	// and spans into the command string.
	Findings []risk.Finding `json:"findings,omitempty"`
	// Accesses are the files the command reads, writes or deletes. Judging
	// their locations (credential, protected, outside cwd) is the caller's
	// job; Analyze only uses them to see secrets flowing to the network.
	Accesses []Access `json:"accesses,omitempty"`
	// Commands are all simple commands that would run. A policy prefix rule
	// that allows must match every one of them.
	Commands []Command `json:"commands,omitempty"`
	// Repos are the directories the git commands among them run in (git -C
	// applied), absolute and clean, in order and without duplicates; "" for
	// one not known statically (a directory built at run time, --git-dir,
	// --work-tree). git -C moves as chdir(2) does, following a link before
	// the ".." after it: a directory named with ".." (git -C l/.., or after
	// cd -P) is listed as joined, not cleaned, for the caller to resolve
	// links first. git reads the configuration of the repository holding
	// each, which the repository controls and which can name programs git
	// runs (core.fsmonitor, a textconv driver, a clean filter): nothing in
	// the command shows them.
	Repos []string `json:"repos,omitempty"`
	// Risk is the maximum of the findings' levels and at least risk.Execute.
	Risk risk.Level `json:"risk"`
	// Opaque is set when something cannot be decided statically. An Opaque
	// command must never be allowed by an allow rule.
	Opaque bool `json:"opaque,omitempty"`
}

// Analyze judges a shell command (bash syntax) without running anything.
// It is pure and safe for concurrent use; it never panics and its work is
// bounded for any input.
func Analyze(command string, env Env) Result {
	r, _ := analyzeCounting(command, env)
	return r
}

// analyzeCounting is Analyze that also returns the analyzer's work count
// (analyzer.work), for the tests that bound it.
func analyzeCounting(command string, env Env) (Result, int) {
	a := analyzers.Get().(*analyzer)
	defer a.release()
	a.start(command, env)
	if strings.HasPrefix(env.Cwd, "/") {
		a.cwd = cleanAbs(env.Cwd)
	}
	a.top = frame{exact: true, outer: risk.Span{End: len(command)}}
	a.fr = a.top
	if len(command) > MaxInput {
		a.opaque(risk.Span{End: len(command)}, "the command is longer than 64 KiB and was not analysed")
		r := a.finish()
		return r, a.work
	}
	a.parseAndWalk(command)
	r := a.finish()
	return r, a.work
}

// analyzers pools analyzers with their arenas between calls.
var analyzers = sync.Pool{New: func() any {
	return &analyzer{argv: make([]string, 0, 64), argArena: make([]arg, 0, 128), optArena: make([]opt, 0, 32),
		callArena: make([]call, 0, 32), vars: make([]variable, 0, 16),
		res: Result{Commands: make([]Command, 0, 16), Findings: make([]risk.Finding, 0, 16), Accesses: make([]Access, 0, 16)}}
}}

// maxScratch bounds the arena capacity kept for reuse; a huge command's
// arenas are left to the garbage collector.
const maxScratch = 4096

// start readies a pooled analyzer for one call: every field is zero but
// the arenas, which are empty.
func (a *analyzer) start(src string, env Env) {
	argv, args, opts, calls, vars := a.argv[:0], a.argArena[:0], a.optArena[:0], a.callArena[:0], a.vars[:0]
	cmds, finds, accs, repos := a.res.Commands[:0], a.res.Findings[:0], a.res.Accesses[:0], a.res.Repos[:0]
	*a = analyzer{src: src, env: env, argv: argv, argArena: args, optArena: opts, callArena: calls, vars: vars}
	a.res.Commands, a.res.Findings, a.res.Accesses, a.res.Repos = cmds, finds, accs, repos
}

// release clears the arenas and returns the analyzer to the pool.
func (a *analyzer) release() {
	a.argv, a.argArena, a.optArena, a.callArena, a.vars = reuse(a.argv), reuse(a.argArena), reuse(a.optArena), reuse(a.callArena), reuse(a.vars)
	a.res.Commands, a.res.Findings, a.res.Accesses, a.res.Repos = reuse(a.res.Commands), reuse(a.res.Findings), reuse(a.res.Accesses), reuse(a.res.Repos)
	a.pathBuf = strings.Builder{}
	a.src, a.env = "", Env{}
	analyzers.Put(a)
}

// reuse clears an arena for the next call, or drops it when it grew too
// big to keep.
func reuse[T any](s []T) []T {
	if cap(s) > maxScratch {
		return nil
	}
	clear(s[:cap(s)])
	return s[:0]
}

// parserBox pairs a parser with the reader it reads from so both are reused.
// The pool holds no semantic state: a parser is reset by every Parse.
type parserBox struct {
	p *syntax.Parser
	r strings.Reader
}

var parsers = sync.Pool{New: func() any {
	return &parserBox{p: syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))}
}}

// parse parses src as bash. The returned file may be partial on error.
func parse(src string) (*syntax.File, error) {
	b := parsers.Get().(*parserBox)
	b.r.Reset(src)
	f, err := b.p.Parse(&b.r, "")
	b.r.Reset("")
	parsers.Put(b)
	return f, err
}

// parseAndWalk parses src in the current frame and walks it.
//
// The parser and bash read some bytes differently, so src is first made
// into text both read alike (bashAlike), and a comment the parser let run
// past a newline is cut there as bash does (cutComments). Either repair
// makes the command Opaque as well: the words are no longer exactly what
// bash runs, so no allow rule may cover them, while deny rules and risk
// still see every command bash would run.
func (a *analyzer) parseAndWalk(src string) {
	src = a.bashAlike(src)
	f, err := parse(src)
	for tries := 0; err == nil && f != nil; tries++ {
		cut, ok := cutComments(f, src)
		if !ok {
			break
		}
		if tries == 0 {
			a.opaque(a.fr.outer, "a comment ends in a backslash: bash ends the comment at the newline and runs the next line, so the command was read as bash reads it and no rule allows it")
		}
		if tries >= 8 {
			a.opaque(a.fr.outer, "too many comments end in a backslash to read the command as bash does")
			return
		}
		src = cut
		f, err = parse(src)
	}
	if err != nil {
		a.opaque(a.fr.outer, "the command does not parse as a shell command, so what it runs cannot be known")
	}
	if f != nil {
		a.stmts(f.Stmts, input{})
	}
}

// bashAlike returns src with every control byte but tab and newline
// replaced by '_', a byte of the same length that both bash and the parser
// take as an ordinary word character. Bash's only blanks are space and tab:
// it reads a CR (or any other control byte) as part of a word, while the
// parser takes CR as a blank (so `ls \r#; rm -rf x` hid a comment) and
// backslash-CR-LF as a line continuation. A command holding such a byte is
// Opaque: it is no command a person would type, and what it names is not
// what it looks like.
func (a *analyzer) bashAlike(src string) string {
	first := -1
	for i := 0; i < len(src); i++ {
		if isControl(src[i]) {
			first = i
			break
		}
	}
	if first < 0 {
		return src
	}
	b := []byte(src)
	for i := first; i < len(b); i++ {
		if isControl(b[i]) {
			b[i] = '_'
		}
	}
	sp := a.fr.outer
	if a.fr.exact {
		sp = risk.Span{Start: a.fr.base + first, End: a.fr.base + first + 1}
		if sp.End > a.fr.outer.End {
			sp = a.fr.outer
		}
	}
	a.opaque(sp, fmt.Sprintf("the command holds the control character %s, which bash reads as part of a word and a reader may not see; no rule allows it", controlName(src[first])))
	return string(b)
}

// isControl reports an ASCII control byte other than tab and newline.
func isControl(c byte) bool { return c < 0x20 && c != '\t' && c != '\n' || c == 0x7f }

// controlName names a control byte for a reason.
func controlName(c byte) string {
	switch c {
	case '\r':
		return "CR (0x0d, carriage return)"
	case 0:
		return "NUL (0x00)"
	case 0x1b:
		return "ESC (0x1b)"
	}
	return fmt.Sprintf("0x%02x", c)
}

// cutComments finds a comment the parser continued past a newline (it
// takes a backslash before the newline as a line continuation, bash does
// not: a comment ends at the first newline) and returns src with that
// backslash replaced by a space, which bash reads the same way.
func cutComments(f *syntax.File, src string) (string, bool) {
	if strings.IndexByte(src, '#') < 0 || !strings.Contains(src, "\\\n") {
		return src, false // no comment, or no backslash-newline to hide in one
	}
	var b []byte
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.Comment)
		if !ok {
			return true
		}
		i := strings.IndexByte(c.Text, '\n')
		if i < 0 {
			return true
		}
		// c.Text follows '#': the backslash before the newline is at
		// Hash+1+i-1 when the text is verbatim.
		at := int(c.Hash.Offset()) + i
		if at < 0 || at >= len(src) || src[at] != '\\' {
			return true
		}
		if b == nil {
			b = []byte(src)
		}
		b[at] = ' '
		return true
	})
	if b == nil {
		return src, false
	}
	return string(b), true
}

func (a *analyzer) finish() Result {
	if a.evalCtx && (a.codeText || a.codeVar) {
		a.opaque(a.top.outer, "bash evaluates text again here (arithmetic, an array subscript, [[ -v ]] or -eq operands, ${!x}, a prompt expansion), and the command holds text or a run-time value that may be a command substitution, which would run; no rule allows it")
	}
	a.flows()
	// The Result gets its own copies: the analyzer's lists go back to the
	// pool.
	r := Result{Risk: risk.Execute, Opaque: a.res.Opaque}
	for _, f := range a.res.Findings {
		r.Risk = risk.Max(r.Risk, f.Risk)
	}
	if n := len(a.res.Commands); n > 0 {
		total := 0
		for _, c := range a.res.Commands {
			total += len(c.Argv)
		}
		argv := make([]string, 0, total)
		r.Commands = make([]Command, n)
		for i, c := range a.res.Commands {
			s := len(argv)
			argv = append(argv, c.Argv...)
			c.Argv = argv[s:len(argv):len(argv)]
			r.Commands[i] = c
		}
	}
	if n := len(a.res.Findings); n > 0 {
		// Room for the caller's own findings (permission appends them).
		r.Findings = append(make([]risk.Finding, 0, n+1), a.res.Findings...)
	}
	if len(a.res.Accesses) > 0 {
		r.Accesses = slices.Clone(a.res.Accesses)
	}
	if len(a.res.Repos) > 0 {
		r.Repos = slices.Clone(a.res.Repos)
	}
	return r
}

// flows raises to credential when the command both reads a secret and talks
// to the network: the secret can reach the network through a pipe, a file,
// an argument or the environment, and following each path is not worth the
// risk of missing one.
func (a *analyzer) flows() {
	if !a.net.set || !a.cred.set {
		return
	}
	what := a.net.what
	if what == "" {
		what = quote(a.text(a.net.sp))
	}
	a.find(risk.Credential, a.net.sp, what+" talks to the network in the same command that reads "+a.cred.what+", so the secret can be sent away")
}
