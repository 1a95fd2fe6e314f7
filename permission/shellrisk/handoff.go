package shellrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Code handed to another program in an option or argument (rg --pre CMD,
// tar --to-command=CMD, rsync -e CMD, git --upload-pack=CMD, ssh -o
// ProxyCommand=CMD, at <<< CMD, ...) runs as surely as the program itself.
// It is re-parsed as a shell command, so what it runs is judged by its own
// rules and listed in Result.Commands: an allow rule for the outer program
// does not cover it. A value that is a script path becomes a command of its
// own ("./evil.sh"); a value built at run time is Opaque.

// runValue judges a value the program runs as a command. appended is set
// when the program adds arguments of its own at run time (a file name, a
// host), which makes the commands it lists Dynamic.
func (a *analyzer) runValue(v arg, what string, appended bool) {
	if v.dyn {
		a.opaque(v.sp, what+" is given a command built at run time, which cannot be checked")
		return
	}
	code := strings.TrimSpace(v.s)
	if code == "" {
		return
	}
	old := a.appended
	a.appended = old || appended
	a.reparse(code, v.sp, false)
	a.appended = old
}

// optValue returns the value of the option at args[i]: the text after "="
// when there is one, else the next word. next reports that the next word
// was used.
func optValue(args []arg, i int) (v arg, next, ok bool) {
	x := args[i]
	if _, after, found := strings.Cut(x.s, "="); found && strings.HasPrefix(x.s, "-") {
		return arg{s: after, dyn: x.dyn, sp: x.sp, w: x.w}, false, true
	}
	if i+1 < len(args) {
		return args[i+1], true, true
	}
	return arg{}, false, false
}

// makeTable is GNU make 4's options, complete. -j and -l take an optional
// number (a target "4" after -j is harmless as a target).
var makeTable = opts{short: "CfIoWE", long: []string{"directory", "file", "makefile", "include-dir",
	"old-file", "assume-old", "what-if", "new-file", "assume-new", "eval"}, optShort: "jl",
	flags: "bBdehikLnpqrRsStvw",
	flagsLong: []string{"always-make", "environment-overrides", "help", "ignore-errors", "keep-going", "no-keep-going",
		"check-symlink-times", "just-print", "dry-run", "recon", "print-data-base", "question", "no-builtin-rules",
		"no-builtin-variables", "silent", "quiet", "no-silent", "stop", "touch", "trace", "version", "print-directory",
		"no-print-directory", "warn-undefined-variables"},
	optional: []string{"jobs", "load-average", "output-sync", "debug", "shuffle", "jobserver-style"}, complete: true}

// ruleMake: make --eval and a makefile on standard input hand make code of
// its own. Recipes are shell commands and are judged as such, but make's
// own syntax ($(shell ...), variables) is not shell, so the call is Opaque.
// SHELL=prog names the program recipes run with.
func ruleMake(a *analyzer, c *call) {
	os, ops := a.scan(makeTable, c.args)
	for _, o := range os {
		switch o.name {
		case "-E", "--eval":
			a.find(risk.Execute, o.x.sp, "make --eval runs make code given on the command line")
			a.runValue(o.val, "make --eval", false)
			a.opaque(o.val.sp, "make code is not shell: its functions and variables ($(shell ...)) are not analysed")
		case "-f", "--file", "--makefile":
			switch {
			case o.val.s == "-" || isStdinPath(o.val.s):
				a.makeStdin(c)
			case strings.HasPrefix(o.val.s, "/dev/fd/") || strings.HasPrefix(o.val.s, "/proc/"):
				// Another descriptor (3<<'…'): a makefile the command
				// itself holds, as from standard input.
				a.opaque(o.val.sp, "make -f "+quote(o.val.s)+" reads a makefile from a file descriptor the command sets up: its recipes are not analysed")
			default:
				a.access(o.val, c.cwd, false, false)
			}
		case "-C", "--directory":
			// make runs the makefile it finds there.
			a.access(o.val, c.cwd, false, false)
		}
	}
	for _, x := range ops {
		name, value, ok := strings.Cut(x.s, "=")
		if !ok || x.dyn && !strings.Contains(name, "$") && !isName(name) {
			continue
		}
		name = strings.TrimRight(name, ":+?!")
		if name == "SHELL" || name == "MAKESHELL" || name == ".SHELLFLAGS" {
			a.find(risk.Execute, x.sp, "make "+name+"= changes the program every recipe runs with")
			a.runValue(arg{s: value, dyn: x.dyn, sp: x.sp, w: x.w}, "make "+name, true)
			continue
		}
		// Any variable may be part of a recipe ($(CC), $(RM), $(TEST)):
		// what the makefile does with the value is not read here.
		a.opaque(x.sp, "make "+name+"= overrides a makefile variable, and recipes may run its value ("+quote(value)+") as a command; no rule allows it")
	}
}

// makeStdin judges a makefile read from standard input.
func (a *analyzer) makeStdin(c *call) {
	switch {
	case (c.in.kind == inHere || c.in.kind == inPipe) && c.in.known:
		a.reparse(c.in.text, c.in.sp, false)
		a.opaque(c.in.sp, "make code is not shell: its functions and variables ($(shell ...)) are not analysed")
	default:
		a.opaque(c.sp, "make reads a makefile from its input, which cannot be checked before it runs")
	}
}

// ruleAt: at and batch run the commands they read from standard input or
// from -f FILE later, outside this session.
func ruleAt(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	os, _ := a.scan(opts{short: "qft"}, c.args)
	switch {
	case has(os, "-c"):
		a.credSource(c.sp, "the environment of a queued job")
		a.find(risk.Credential, c.sp, name+" -c prints queued jobs with the environment they run in, which may hold secrets")
		return
	case has(os, "-l", "-r", "-d", "-V"):
		return
	}
	a.find(risk.Execute, c.sp, name+" schedules commands that run later, outside this session")
	if f, ok := val(os, "-f"); ok {
		a.access(f, c.cwd, false, false)
		if f.dyn {
			a.opaque(f.sp, name+" runs a script whose name is only known at run time")
			return
		}
		// The script is what runs: list it, so a rule for at does not
		// cover it.
		a.command([]arg{f}, c.sp, false)
		a.find(risk.Execute, f.sp, name+" runs the script "+quote(f.s)+", whose contents are not checked")
		return
	}
	a.shellStdin(c, name)
}

// ruleScript: script -c CMD runs a shell command line; without -c it runs
// an interactive shell (BSD script: the words after the file). The files it
// logs to are written.
func ruleScript(a *analyzer, c *call) {
	// Options end at the first operand: BSD script runs the words after the
	// file as a command, options included.
	os, ops := a.scan(opts{short: "cEIOBTmo", long: []string{"command", "echo", "log-in", "log-out", "log-io",
		"log-timing", "logging-format", "output-limit"}, stop: true}, c.args)
	for _, o := range os {
		switch o.name {
		case "-I", "-O", "-B", "-T", "--log-in", "--log-out", "--log-io", "--log-timing":
			a.access(o.val, c.cwd, true, false)
		}
	}
	if len(ops) > 0 {
		a.access(ops[0], c.cwd, true, false)
	}
	if v, ok := val(os, "-c", "--command"); ok {
		a.runValue(v, "script -c", false)
		return
	}
	if len(ops) > 1 {
		a.inner(c, ops[1:], c.cwd, false)
		return
	}
	a.shellStdin(c, "the shell script starts")
}

// runner sees through package runners (npx, pnpx, bunx, uvx, npm exec,
// pnpm dlx, yarn dlx, pipx run): the package's program runs with the words
// after it. args[0] is the runner or its subcommand.
func (a *analyzer) runner(c *call, args []arg) {
	os, rest := a.scan(opts{short: "pcw", long: []string{"package", "call", "workspace", "registry", "cache", "userconfig",
		"prefix", "node-options", "from", "with", "python", "index-url", "extra-index-url", "spec", "pip-args"}, stop: true}, args)
	if v, ok := val(os, "-c", "--call"); ok {
		a.runValue(v, programName(c.args[0].s)+" -c", false)
		return
	}
	if len(rest) == 0 {
		return
	}
	pkg := rest[0]
	prog := arg{s: packageProgram(pkg.s), dyn: pkg.dyn, glob: pkg.glob, sp: pkg.sp, w: pkg.w}
	inner := make([]arg, 0, len(rest))
	inner = append(inner, prog)
	inner = append(inner, rest[1:]...)
	a.inner(c, inner, c.cwd, false)
}

// packageProgram is the program a package spec runs: the name without its
// version ("rimraf@5" → "rimraf", "@scope/x@1" → "@scope/x", "ruff==0.4"
// → "ruff").
func packageProgram(spec string) string {
	from := 0
	if strings.HasPrefix(spec, "@") {
		from = 1
	}
	if i := strings.IndexAny(spec[from:], "@=<>~![ "); i >= 0 {
		return spec[:from+i]
	}
	return spec
}

// patchTargets records the files a unified diff fed on standard input
// writes (git apply <<EOF, patch <<EOF). strip is the number of leading
// path components the program removes by default; with strip < 0 both the
// written path and the path with its first component removed are recorded.
func (a *analyzer) patchTargets(c *call, cwd string, strip int) {
	if c.in.kind != inHere && c.in.kind != inPipe || !c.in.known {
		return
	}
	for line := range strings.Lines(c.in.text) {
		p, ok := strings.CutPrefix(line, "+++ ")
		if !ok {
			p, ok = strings.CutPrefix(line, "--- ")
		}
		n := strip
		if !ok {
			if p, ok = strings.CutPrefix(line, "rename to "); !ok {
				p, ok = strings.CutPrefix(line, "copy to ")
			}
			n = 0 // git's extended headers name the path as is
		}
		if !ok {
			continue
		}
		p = strings.TrimRight(p, "\r\n")
		if i := strings.IndexByte(p, '\t'); i >= 0 {
			p = p[:i]
		}
		p = strings.Trim(strings.TrimSpace(p), `"`)
		if p == "" || p == "/dev/null" {
			continue
		}
		a.access(arg{s: stripComps(p, max(n, 0)), sp: c.in.sp}, cwd, true, false)
		if n < 0 {
			a.access(arg{s: stripComps(p, 1), sp: c.in.sp}, cwd, true, false)
		}
	}
}

func stripComps(p string, n int) string {
	for ; n > 0; n-- {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return p
		}
		p = p[i+1:]
	}
	return p
}
