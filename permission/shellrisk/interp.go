package shellrisk

import (
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// shellStdin judges a shell that reads its code from standard input.
func (a *analyzer) shellStdin(c *call, what string) {
	switch c.in.kind {
	case inHere, inPipe:
		if !c.in.known {
			a.opaque(c.sp, what+" runs code that is built at run time or arrives through a pipe, which cannot be checked before it runs")
			return
		}
		a.reparse(c.in.text, c.in.sp, false)
	case inFile:
		a.find(risk.Execute, c.sp, what+" runs a script read from a file, whose contents are not checked")
	}
}

// ruleShell judges bash, sh and the other shells: -c strings are re-parsed,
// scripts are named, code from standard input is re-parsed or Opaque.
func ruleShell(a *analyzer, c *call) {
	args, ok := a.shellArgs(c)
	if !ok {
		return
	}
	a.shellWith(c, programName(args[0].s), scanShell(args))
}

// shellArgs returns the words of a shell call starting at the shell itself:
// busybox sh ... is sh, busybox rm ... is rm (judged here, ok false).
func (a *analyzer) shellArgs(c *call) ([]arg, bool) {
	args := c.args
	if programName(args[0].s) != "busybox" {
		return args, true
	}
	if len(args) < 2 || args[1].dyn {
		return nil, false
	}
	if args[1].s != "sh" && args[1].s != "ash" {
		a.inner(c, args[1:], c.cwd, false)
		return nil, false
	}
	return args[1:], true
}

// shellCall is how a shell's words read: its options, and the operands
// after them.
type shellCall struct {
	cflag, sflag bool
	rest         []arg // the operands
	rcfiles      []rcfile
	dyn          *arg // a word built at run time where an option may stand; it starts rest
	unknown      *arg // a long option the analyser does not know
}

// rcfile is a file given to --rcfile or --init-file.
type rcfile struct {
	opt  string
	file arg
}

// scanShell reads the options of bash and the shells like it.
func scanShell(args []arg) shellCall {
	var sc shellCall
	i := 1
	for ; i < len(args); i++ {
		s := args[i].s
		if args[i].dyn {
			// It may be an option: nothing after it is known. Side doors
			// (a process substitution, a template) look at it as the
			// first operand.
			sc.dyn = &args[i]
			break
		}
		if s == "--" || s == "-" {
			i++
			break
		}
		if len(s) < 2 || (s[0] != '-' && s[0] != '+') {
			break
		}
		switch s {
		case "-o", "+o", "-O", "+O":
			i++
			continue
		case "--rcfile", "--init-file":
			if i+1 < len(args) {
				i++
				sc.rcfiles = append(sc.rcfiles, rcfile{opt: s, file: args[i]})
			}
			continue
		}
		if s[1] == '-' {
			if !slices.Contains(shellLongOpts, s[2:]) && sc.unknown == nil {
				sc.unknown = &args[i]
			}
			continue
		}
		if strings.IndexByte(s[1:], 'c') >= 0 {
			sc.cflag = true
		}
		if strings.ContainsAny(s[1:], "si") && s[0] == '-' {
			sc.sflag = true // -s: commands come from standard input; -i too
		}
	}
	sc.rest = args[min(i, len(args)):]
	return sc
}

// shellWith judges a shell call read by scanShell.
func (a *analyzer) shellWith(c *call, name string, sc shellCall) {
	if sc.dyn != nil {
		a.opaque(sc.dyn.sp, name+" is given an option built at run time")
		return
	}
	for _, rc := range sc.rcfiles {
		// The file is read as startup code of an interactive shell.
		a.access(rc.file, c.cwd, false, false)
		a.opaque(rc.file.sp, name+" "+rc.opt+" runs the file "+quote(rc.file.s)+" as shell code, whose contents are not checked")
	}
	if sc.unknown != nil {
		a.opaque(sc.unknown.sp, name+" is given the option "+quote(sc.unknown.s)+", which the analyser does not know")
	}
	rest := sc.rest
	switch {
	case sc.sflag && !sc.cflag:
		// bash -s ARGS: the words are positional parameters, the code is
		// what arrives on standard input.
		a.shellStdin(c, name)
	case sc.cflag:
		if len(rest) == 0 {
			return
		}
		if rest[0].dyn {
			a.opaque(rest[0].sp, name+" -c runs code built at run time")
			return
		}
		a.reparse(rest[0].s, rest[0].sp, false)
	case len(rest) > 0:
		script := rest[0]
		if script.dyn {
			a.opaque(script.sp, name+" runs a script whose name is only known at run time")
			return
		}
		a.access(script, c.cwd, false, false)
		a.find(risk.Execute, c.sp, name+" runs the script "+quote(script.s)+", whose contents are not checked")
	default:
		a.shellStdin(c, name)
	}
}

// interpFlags are interpreter options that take no value and load no code
// (-I only for python: perl and ruby take a directory with it).
var interpFlags = []string{"-u", "-B", "-E", "-s", "-S", "-O", "-OO", "-q", "-b", "-bb", "-I", "-P", "-v", "-V", "--version",
	"-h", "--help", "-w", "-W", "--no-warnings", "--enable-source-maps", "--trace-warnings", "--trace-uncaught", "--trace-deprecation"}

// shellLongOpts are the long options of bash and other shells that change
// nothing the analysis relies on.
var shellLongOpts = []string{"norc", "noprofile", "login", "posix", "restricted", "verbose", "version", "help",
	"noediting", "debugger", "dump-strings", "dump-po-strings", "pretty-print"}

// ruleEval re-parses the words eval joins into code.
func ruleEval(a *analyzer, c *call) {
	if len(c.args) < 2 {
		return
	}
	var code strings.Builder
	for i, x := range c.args[1:] {
		if x.dyn {
			a.opaque(x.sp, "eval runs code built at run time")
			return
		}
		if i > 0 {
			code.WriteByte(' ')
		}
		code.WriteString(x.s)
	}
	sp := risk.Span{Start: c.args[1].sp.Start, End: c.args[len(c.args)-1].sp.End}
	if sp.End < sp.Start {
		sp = c.sp
	}
	a.reparse(code.String(), sp, true)
}

// ruleSource: a sourced file can change anything about the shell that runs
// the commands after it, so nothing after it can be judged.
func ruleSource(a *analyzer, c *call) {
	if len(c.args) < 2 {
		return
	}
	a.access(c.args[1], c.cwd, false, false)
	a.opaque(c.sp, "sourcing "+quote(a.text(c.args[1].sp))+" runs a file's code in this shell, which can change what every later command does")
}

// ruleAlias: with expand_aliases an alias body runs as code; judge it.
func ruleAlias(a *analyzer, c *call) {
	for _, x := range c.args[1:] {
		_, body, ok := strings.Cut(x.s, "=")
		if !ok {
			continue
		}
		if x.dyn {
			a.opaque(x.sp, "an alias defined from a value built at run time")
			continue
		}
		a.reparse(body, x.sp, false)
	}
}

// ruleTrap: the trap's action is code run later.
func ruleTrap(a *analyzer, c *call) {
	args := c.args[1:]
	if len(args) > 0 && !args[0].dyn && len(args[0].s) > 1 && args[0].s[0] == '-' {
		switch {
		case args[0].s == "--":
			args = args[1:]
		case strings.Trim(args[0].s[1:], "lpP") != "":
			a.opaque(args[0].sp, "trap is given the option "+quote(args[0].s)+", which the analyser does not know")
			return
		default:
			return // -l, -p and -P only print
		}
	}
	if len(args) < 2 || args[0].s == "-" && !args[0].dyn {
		return // trap SIG and trap - SIG reset; they run nothing
	}
	x := args[0]
	if x.dyn {
		a.opaque(x.sp, "trap runs code built at run time")
		return
	}
	a.reparse(x.s, x.sp, false)
}

// interpreterRule returns the rule of a language interpreter.
func interpreterRule(name string) rule {
	switch {
	case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "pypy"),
		name == "node", name == "nodejs", name == "deno", name == "bun",
		strings.HasPrefix(name, "perl"), strings.HasPrefix(name, "ruby"),
		strings.HasPrefix(name, "php"), strings.HasPrefix(name, "lua"), name == "luajit",
		name == "Rscript", name == "R", name == "osascript", name == "pwsh", name == "powershell",
		name == "tclsh", name == "wish", name == "jshell", name == "irb", name == "groovy", name == "scala",
		name == "julia", name == "elixir", name == "erl", name == "swift", name == "guile", name == "racket",
		name == "sbcl", name == "ghci", name == "runghc", name == "expect", name == "gdb", name == "vim",
		name == "nvim", name == "emacs", name == "ed", name == "ex":
		return ruleInterpreter
	}
	return nil
}

// isInline reports whether an interpreter option hands it code inline:
// python -c, node -e/-p/--eval, perl -e/-ne, ruby -e, php -r, pwsh -Command,
// deno eval, vim +cmd / -c, emacs --eval, gdb -ex...
func isInline(name, s string) bool {
	switch s {
	case "--eval", "--print", "-Command", "-command", "-EncodedCommand", "-enc", "-ec", "--command",
		"-ex", "--eval-command", "-batch", "--batch", "-x", "eval", "-eval":
		return true
	}
	if strings.HasPrefix(s, "--eval=") || strings.HasPrefix(s, "--print=") || strings.HasPrefix(s, "--command=") {
		return true
	}
	if (name == "vim" || name == "nvim" || name == "ex") && strings.HasPrefix(s, "+") {
		return true
	}
	if len(s) < 2 || s[0] != '-' || s[1] == '-' || len(s) > 6 || strings.Contains(s, "=") {
		return false
	}
	letters := "ceEr"
	if name == "node" || name == "nodejs" || name == "bun" {
		letters = "ceErp"
	}
	return strings.ContainsAny(s[1:], letters)
}

// ruleInterpreter: code handed inline to an interpreter cannot be judged,
// nor can code read from a pipe; a script file is named as such.
func ruleInterpreter(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	for i, x := range c.args[1:] {
		s := x.s
		if x.dyn && i == 0 {
			a.opaque(x.sp, name+" is given arguments built at run time")
			return
		}
		inline := isInline(name, s)
		if inline {
			a.opaque(c.sp, name+" is handed code inline ("+quote(a.text(x.sp))+"), which is not analysed")
			return
		}
		if s == "-" {
			break
		}
		if s == "-m" && i+2 < len(c.args) {
			mod := c.args[i+2]
			if mod.s == "pip" || mod.s == "ensurepip" || mod.s == "http.server" {
				a.network(c.sp, quote(name+" -m "+mod.s), name+" -m "+mod.s+" may download or serve over the network")
			}
			a.find(risk.Execute, c.sp, name+" runs the module "+quote(mod.s)+", whose code is not checked")
			return
		}
		if !strings.HasPrefix(s, "-") {
			a.access(x, c.cwd, false, false)
			a.find(risk.Execute, c.sp, name+" runs "+quote(s)+", whose code is not checked")
			return
		}
		if !slices.Contains(interpFlags, s) || s == "-I" && !strings.HasPrefix(name, "python") {
			// -r MODULE, --import, -I DIR, -l LANG …: a value, or code
			// loaded before the script; which word is the script is then
			// not known.
			a.opaque(x.sp, name+" is given the option "+quote(s)+", which the analyser does not know (it may load code or take the next word as its value)")
			return
		}
	}
	switch c.in.kind {
	case inPipe:
		a.opaque(c.sp, name+" runs code that arrives through a pipe, which cannot be checked before it runs")
	case inHere:
		a.opaque(c.sp, name+" runs code from a here-document, which is not analysed")
	case inFile:
		a.find(risk.Execute, c.sp, name+" runs a script read from a file, whose contents are not checked")
	}
}

// ruleDecode: decoders are harmless alone; a decoded payload is only a
// danger when it is run, which the shell reading a pipe makes Opaque.
func ruleDecode(a *analyzer, c *call) {
	_, operands := a.scan(opts{short: "io", long: []string{"input", "output"}}, c.args)
	name := programName(c.args[0].s)
	if name == "openssl" || name == "gpg" {
		if len(operands) > 0 && !operands[0].dyn && (operands[0].s == "s_client" || operands[0].s == "s_server") {
			a.network(c.sp, "openssl", "openssl "+operands[0].s+" opens a network connection")
		}
		return
	}
	for _, x := range operands {
		a.access(x, c.cwd, false, false)
	}
}

// ruleCd moves the effective working directory for the commands after it.
func ruleCd(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	os, ops := a.scan(opts{}, c.args)
	if c.cwd != a.cwd {
		return // cd inside a wrapper or -C does not move the shell
	}
	switch {
	case name == "popd" || len(ops) > 0 && (ops[0].s == "-" || strings.HasPrefix(ops[0].s, "+") || strings.HasPrefix(ops[0].s, "-")):
		a.cwd, a.pwdRaw = "", ""
	case len(ops) == 0:
		if name == "cd" {
			a.cwd, a.pwdRaw = a.env.Home, ""
		}
	case ops[0].dyn:
		a.cwd, a.pwdRaw = "", ""
		a.find(risk.Execute, ops[0].sp, name+" moves to a directory known only at run time, so later relative paths cannot be judged")
	default:
		to := ops[0].s
		physical := has(os, "-P")
		if physical || a.pwdRaw != "" {
			// cd -P follows links before "..", and once it has, $PWD is
			// the physical path, so every later cd does too: the caller
			// must resolve the path in order.
			switch {
			case strings.HasPrefix(to, "/"):
				a.pwdRaw = to
			case a.pwdRaw != "":
				a.pwdRaw += "/" + to
			case a.cwd != "":
				a.pwdRaw = a.cwd + "/" + to
			}
		}
		a.cwd = resolve(to, a.cwd)
		if a.cwd == "" {
			a.pwdRaw = ""
		}
	}
}

// ruleEnvDump: env, printenv, set and compgen print variables.
func ruleEnvDump(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	dumps := false
	switch name {
	case "printenv":
		// printenv NAME prints that variable only: a secret only when
		// its name says so (printenv PATH is none).
		dumps = printenvDumps(c.args[1:])
	case "env":
		dumps = true // only reached when wrapEnv found no command
	case "set":
		dumps = len(c.args) == 1
	case "compgen":
		for _, x := range c.args[1:] {
			if x.s == "-v" || x.s == "-e" || x.s == "-A" {
				dumps = true
			}
		}
	}
	if dumps {
		a.credSource(c.sp, "the environment")
		a.find(risk.Credential, c.sp, name+" prints environment variables, which may hold secrets")
	}
}

// rulePs: ps e and ps -E show the environment of other processes.
func rulePs(a *analyzer, c *call) {
	for _, x := range c.args[1:] {
		if !strings.HasPrefix(x.s, "-") && strings.ContainsRune(x.s, 'e') || x.s == "-E" {
			a.credSource(c.sp, "process environments")
			a.find(risk.Credential, c.sp, "ps with e shows the environment of running processes, which may hold secrets")
			return
		}
	}
}

// ruleSystem: stopping services and processes or the machine.
func ruleSystem(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	switch name {
	case "shutdown", "reboot", "halt", "poweroff":
		a.find(risk.Destructive, c.sp, name+" stops the machine and everything running on it")
	case "systemctl", "service", "launchctl":
		for _, x := range c.args[1:] {
			switch x.s {
			case "stop", "disable", "mask", "kill", "poweroff", "reboot", "halt", "isolate", "unload", "bootout", "remove":
				a.find(risk.Destructive, c.sp, name+" "+x.s+" stops or removes a system service")
				return
			}
		}
	}
}

// varCode judges the value of a variable that other programs run as a
// shell command (GIT_SSH_COMMAND, PAGER, PROMPT_COMMAND, ...).
func (a *analyzer) varCode(name string, x arg, sp risk.Span) {
	if strings.HasPrefix(name, "GIT_CONFIG") || strings.HasPrefix(name, "GIT_TRACE") {
		a.gitEnv(name, x, sp)
		return
	}
	switch name {
	case "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PROXY_COMMAND",
		"PAGER", "EDITOR", "VISUAL", "MANPAGER", "PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE", "BROWSER",
		"GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "npm_config_script_shell":
	default:
		return
	}
	if x.dyn {
		a.opaque(sp, name+" is set to a command built at run time")
		return
	}
	a.reparse(strings.TrimLeft(x.s, "|"), sp, false)
}

// npmHarmlessConfig are npm settings (lower case, after npm_config_) that
// change output only.
var npmHarmlessConfig = []string{"loglevel", "yes", "fund", "audit", "update_notifier", "update-notifier", "progress", "color", "unicode", "cache_min"}

// buildVars are variables build tools read to name the programs and flags
// they run.
var buildVars = []string{"CC", "CXX", "CPP", "LD", "AR", "AS", "NM", "RANLIB", "STRIP", "OBJCOPY", "OBJDUMP", "FC", "F77",
	"CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LDLIBS", "GOENV", "GOROOT", "RUSTC", "RUSTC_WRAPPER",
	"RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS", "RUSTDOCFLAGS", "MAVEN_OPTS", "GRADLE_OPTS", "JAVA_OPTS", "SBT_OPTS", "CMAKE_C_COMPILER_LAUNCHER",
	"CMAKE_CXX_COMPILER_LAUNCHER", "HOSTCC", "CROSS_COMPILE", "PKG_CONFIG", "YACC", "LEX", "M4", "MAKE"}

// dangerousVar flags assignments to variables that change what runs and
// reports whether it did.
func (a *analyzer) dangerousVar(name string, sp risk.Span) bool {
	why := ""
	switch {
	case name == "PATH":
		why = "setting PATH changes which programs the names in the command run"
	case strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_"):
		why = "setting " + name + " makes programs load other code"
	case name == "BASH_ENV" || name == "ENV" || name == "PROMPT_COMMAND" || name == "PS4" || name == "SHELLOPTS" ||
		name == "BASHOPTS" || name == "IFS" || name == "CDPATH" || name == "GLOBIGNORE" || strings.HasPrefix(name, "BASH_FUNC_"):
		why = "setting " + name + " changes how the shell runs code"
	case name == "GIT_SSH_COMMAND" || name == "GIT_SSH" || name == "GIT_EXTERNAL_DIFF" || name == "GIT_EXEC_PATH" ||
		name == "GIT_PAGER" || name == "GIT_EDITOR" || name == "GIT_ASKPASS" || name == "GIT_PROXY_COMMAND" ||
		name == "GIT_SEQUENCE_EDITOR" || strings.HasPrefix(name, "GIT_CONFIG") || name == "GIT_DIR" || name == "GIT_WORK_TREE" ||
		name == "GIT_TEMPLATE_DIR" || name == "GIT_CEILING_DIRECTORIES" || name == "GIT_COMMON_DIR" || name == "GIT_INDEX_FILE":
		why = "setting " + name + " makes git run other programs or use other configuration"
	case name == "HOME" || name == "XDG_CONFIG_HOME" || name == "XDG_CONFIG_DIRS" || name == "ZDOTDIR" || name == "INPUTRC" ||
		name == "GNUPGHOME" || name == "CARGO_HOME" || name == "RUSTUP_HOME" || name == "GOTOOLCHAIN" ||
		name == "NPM_CONFIG_USERCONFIG" || name == "npm_config_userconfig" || name == "PIP_CONFIG_FILE" || name == "CURL_HOME" ||
		name == "WGETRC" || name == "SSH_CONFIG" || name == "KUBECONFIG" || name == "DOCKER_CONFIG":
		why = "setting " + name + " makes programs read their configuration, which can name code they run, from elsewhere"
	case name == "PAGER" || name == "EDITOR" || name == "VISUAL" || name == "MANPAGER" || name == "LESSOPEN" ||
		name == "LESSCLOSE" || name == "SSH_ASKPASS" || name == "SUDO_ASKPASS" || name == "BROWSER" ||
		name == "RSYNC_RSH" || name == "RSYNC_CONNECT_PROG":
		why = "setting " + name + " names a program that other programs run"
	case name == "PYTHONPATH" || name == "PYTHONSTARTUP" || name == "PYTHONHOME" || name == "NODE_OPTIONS" ||
		name == "NODE_PATH" || name == "PERL5OPT" || name == "PERL5LIB" || name == "PERLLIB" || name == "RUBYOPT" ||
		name == "RUBYLIB" || name == "JAVA_TOOL_OPTIONS" || name == "_JAVA_OPTIONS" || name == "GCONV_PATH" ||
		name == "npm_config_script_shell" || name == "MAKEFLAGS" || name == "GNUMAKEFLAGS" || name == "MAKEFILES" ||
		name == "MFLAGS" || name == "MAVEN_OPTS" || name == "MAVEN_ARGS" || name == "GRADLE_OPTS" || name == "JAVA_OPTS":
		why = "setting " + name + " makes an interpreter load other code"
	case name == "BASH_ALIASES" || name == "BASH_CMDS" || name == "BASH_LOADABLES_PATH":
		why = "setting " + name + " changes what command names run"
	case strings.HasPrefix(name, "GIT_TRACE"):
		why = "setting " + name + " can make git write its trace to a file it names"
	case len(name) > len("npm_config_") && strings.EqualFold(name[:len("npm_config_")], "npm_config_") &&
		!slices.Contains(npmHarmlessConfig, strings.ToLower(name[len("npm_config_"):])):
		// npm reads its configuration from these variables whatever their
		// case: node-options, script-shell, userconfig and more run code.
		why = "setting " + name + " changes npm's configuration, which can name code npm runs"
	case slices.Contains(buildVars, name) || strings.HasPrefix(name, "CARGO_") && strings.Contains(name, "WRAPPER") ||
		strings.HasPrefix(name, "CGO_") && strings.HasSuffix(name, "FLAGS"):
		why = "setting " + name + " changes the programs or flags a build runs (make, go, cargo and compilers read it)"
	}
	if why == "" {
		return false
	}
	if strings.HasPrefix(name, "GIT_TRACE") {
		return true // varCode judges where the trace goes
	}
	switch name {
	case "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PROXY_COMMAND",
		"PAGER", "EDITOR", "VISUAL", "MANPAGER", "PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE", "BROWSER",
		"GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "npm_config_script_shell":
		// varCode judges the command the variable names.
		a.find(risk.Execute, sp, why)
	default:
		// What runs now depends on files or values this analysis does not
		// read (a config file under the new HOME, a library on the new
		// path): no allow rule may allow it.
		a.opaque(sp, why+"; what that runs cannot be judged statically")
	}
	return true
}
