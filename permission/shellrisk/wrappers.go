package shellrisk

import (
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// wrapperFor returns the handler of a program that runs another command.
// Transparent wrappers (env, nice, timeout, ...) are not listed in
// Result.Commands themselves: a policy rule is about what finally runs. Those
// with an effect of their own (sudo, chroot, flock, ...) are listed as well.
func wrapperFor(name string) rule {
	switch name {
	case "sudo", "doas", "run0", "pkexec":
		return wrapSudo
	case "env":
		return wrapEnv
	case "nice", "ionice", "timeout", "gtimeout", "nohup", "stdbuf", "setsid", "unbuffer",
		"chrt", "taskset", "torsocks", "proxychains", "proxychains4", "caffeinate", "catchsegv", "unshare", "systemd-run", "firejail", "bwrap":
		return wrapSimple
	case "command", "builtin", "exec":
		return wrapBuiltin
	case "time":
		return wrapTime
	case "xargs":
		return wrapXargs
	case "parallel":
		return wrapParallel
	case "watch":
		return wrapWatch
	case "flock":
		return wrapFlock
	case "strace", "ltrace":
		return wrapStrace
	case "chroot":
		return wrapChroot
	case "su", "runuser", "sg":
		return wrapSu
	}
	return nil
}

// simpleWrappers gives the options taking a value for wrappers whose only
// effect is to run their operands (after a fixed number of leading operands).
//
// The tables of the GNU and util-linux wrappers are complete (every option,
// with GNU abbreviations): an option they do not list makes the command
// Opaque, since its value would otherwise be taken for the program
// (`timeout --sig KILL 5 rm`). The others list what they take a value for.
func simpleOpts(name string) (opts, int) {
	hv := []string{"help", "version"}
	switch name {
	case "nice":
		return opts{short: "n", long: []string{"adjustment"}, flagsLong: hv, complete: true, numeric: true, stop: true}, 0
	case "ionice":
		return opts{short: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}, flags: "thV",
			flagsLong: []string{"ignore", "help", "version"}, complete: true, stop: true}, 0
	case "timeout", "gtimeout":
		return opts{short: "sk", long: []string{"signal", "kill-after"}, flags: "pv",
			flagsLong: []string{"foreground", "preserve-status", "verbose", "help", "version"}, complete: true, stop: true}, 1
	case "stdbuf":
		return opts{short: "ioe", long: []string{"input", "output", "error"}, flagsLong: hv, complete: true, stop: true}, 0
	case "nohup":
		return opts{flagsLong: hv, complete: true, stop: true}, 0
	case "setsid":
		return opts{flags: "cfwhV", flagsLong: []string{"ctty", "fork", "wait", "help", "version"}, complete: true, stop: true}, 0
	case "chrt":
		return opts{short: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"}, flags: "abdfiormpRvhV",
			flagsLong: []string{"all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "max", "pid", "reset-on-fork", "verbose", "help", "version"},
			complete:  true, stop: true}, 1
	case "taskset":
		return opts{flags: "apchV", flagsLong: []string{"all-tasks", "pid", "cpu-list", "help", "version"}, complete: true, stop: true}, 1
	case "caffeinate":
		return opts{short: "tw", stop: true}, 0
	case "unshare":
		return opts{short: "SGRwt", long: []string{"setuid", "setgid", "root", "wd", "propagation", "setgroups", "map-user", "map-group"}, stop: true}, 0
	case "systemd-run":
		return opts{short: "pEM", long: []string{"unit", "property", "description", "slice", "setenv", "working-directory", "uid", "gid", "on-calendar", "machine"}, stop: true}, 0
	}
	return opts{stop: true}, 0
}

func wrapSimple(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	o, skip := simpleOpts(name)
	os, rest := a.scan(o, c.args)
	if !o.complete {
		// Without a complete table an option may take the next word as
		// its value, so the program is not known for sure.
		for _, op := range os {
			if !strings.Contains(o.short, op.name[1:]) && !slices.Contains(o.long, strings.TrimPrefix(op.name, "--")) {
				a.unknownOpt(c.args[0], op)
				break
			}
		}
	}
	if name == "ionice" && has(os, "-p", "-P", "-u", "--pid", "--pgid", "--uid") {
		a.command(c.args, c.sp, false)
		return
	}
	if name == "taskset" && has(os, "-p", "--pid") {
		a.command(c.args, c.sp, false)
		return
	}
	if name == "torsocks" || strings.HasPrefix(name, "proxychains") {
		a.network(c.sp, quote(name), quote(name)+" sends the command's traffic through a proxy")
	}
	if len(rest) < skip {
		return
	}
	a.inner(c, rest[skip:], c.cwd, false)
}

func wrapSudo(a *analyzer, c *call) {
	o := opts{short: "ugCDhprtUTR", long: []string{"user", "group", "close-from", "chdir", "host", "prompt",
		"role", "type", "other-user", "command-timeout", "chroot"}, stop: true}
	os, rest := a.scan(o, c.args)
	a.command(c.args, c.sp, false)
	name := programName(c.args[0].s)
	a.find(risk.Execute, c.sp, name+" runs the command as another user, root by default")
	cwd := c.cwd
	if d, ok := val(os, "-D", "--chdir"); ok {
		cwd = a.chdir(d, cwd)
	}
	switch {
	case has(os, "-e", "--edit"):
		for _, f := range rest {
			a.access(f, cwd, true, false)
		}
		return
	case has(os, "-l", "-v", "-k", "-K", "-V", "--list", "--validate", "--reset-timestamp", "--remove-timestamp", "--version"):
		if len(rest) == 0 {
			return
		}
	}
	if len(rest) == 0 && has(os, "-s", "-i", "--shell", "--login") {
		a.shellStdin(c, "a root shell")
		return
	}
	a.inner(c, rest, cwd, false)
}

func wrapEnv(a *analyzer, c *call) {
	// GNU env 9, complete: a lone "-" is -i, and --u abbreviates --unset.
	o := opts{short: "uCS", long: []string{"unset", "chdir", "split-string"}, flags: "i0v",
		flagsLong: []string{"ignore-environment", "null", "list-signal-handling", "debug", "help", "version"},
		optional:  []string{"block-signal", "default-signal", "ignore-signal"}, dash: "-i", complete: true, stop: true}
	os, rest := a.scan(o, c.args)
	cwd := c.cwd
	if d, ok := val(os, "-C", "--chdir"); ok {
		cwd = a.chdir(d, cwd)
	}
	for len(rest) > 0 && !rest[0].dyn && isAssignment(rest[0].s) {
		name, value, _ := strings.Cut(rest[0].s, "=")
		if a.dangerousVar(name, rest[0].sp) {
			a.varCode(name, arg{s: value, sp: rest[0].sp}, rest[0].sp)
		}
		if isSideDoorVar(name) {
			a.sideDoorAssign(name, arg{s: value, sp: rest[0].sp}, rest[0].sp)
		}
		rest = rest[1:]
	}
	if s, ok := val(os, "-S", "--split-string"); ok {
		if s.dyn {
			a.opaque(s.sp, "env -S splits a string built at run time into a command")
			return
		}
		code := s.s
		for _, r := range rest {
			code += " " + a.text(r.sp)
		}
		a.reparse(code, s.sp, false)
		return
	}
	if len(rest) == 0 {
		a.command(c.args, c.sp, false)
		a.credSource(c.sp, "the environment")
		a.find(risk.Credential, c.sp, "env without a command prints every environment variable, which may hold secrets")
		return
	}
	a.inner(c, rest, cwd, false)
}

func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if !(ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

func wrapBuiltin(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	var o opts
	switch name {
	case "command":
		o = opts{stop: true}
	case "exec":
		o = opts{short: "a", stop: true}
	default:
		o = opts{stop: true}
	}
	os, rest := a.scan(o, c.args)
	if name == "command" && has(os, "-v", "-V") {
		a.command(c.args, c.sp, false) // only looks the name up
		return
	}
	a.inner(c, rest, c.cwd, false)
}

func wrapTime(a *analyzer, c *call) {
	// GNU time, complete.
	os, rest := a.scan(opts{short: "fo", long: []string{"format", "output"}, flags: "apvqV",
		flagsLong: []string{"append", "portability", "verbose", "quiet", "version", "help"}, complete: true, stop: true}, c.args)
	if f, ok := val(os, "-o", "--output"); ok {
		a.access(f, c.cwd, true, false)
	}
	a.inner(c, rest, c.cwd, false)
}

func wrapXargs(a *analyzer, c *call) {
	// GNU findutils xargs, complete: -e, -i and -l take an optional
	// attached value.
	o := opts{short: "aEILnPsd", long: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
		optShort: "eil", flags: "0oprtx",
		flagsLong: []string{"null", "interactive", "no-run-if-empty", "open-tty", "show-limits", "verbose", "exit", "help", "version"},
		optional:  []string{"eof", "replace", "max-lines"}, complete: true, stop: true}
	os, rest := a.scan(o, c.args)
	if f, ok := val(os, "-a", "--arg-file"); ok {
		a.access(f, c.cwd, false, false)
	}
	repl := ""
	for _, op := range os {
		switch {
		case op.name == "-I":
			repl = op.val.s
		case op.name == "-i" || op.name == "--replace":
			repl = "{}"
			if op.val.s != "" {
				repl = op.val.s
			}
		}
	}
	if len(rest) == 0 {
		rest = []arg{{s: "echo", sp: c.sp}}
	}
	if repl != "" {
		if a.templateShell(c, rest, repl) {
			return
		}
		rest = markDyn(rest, repl)
	}
	a.inner(c, rest, c.cwd, true)
}

// markDyn marks the words holding a placeholder that is replaced at run time.
func markDyn(args []arg, placeholder string) []arg {
	out := make([]arg, len(args))
	for i, x := range args {
		if strings.Contains(x.s, placeholder) {
			x.dyn = true
		}
		out[i] = x
	}
	return out
}

func wrapParallel(a *analyzer, c *call) {
	os, rest := a.scan(opts{short: "jSaIEdnNX", long: []string{"jobs", "sshlogin", "arg-file", "delimiter", "eof", "max-args", "workdir", "sshloginfile"}, stop: true}, c.args)
	holder := ""
	if v, ok := val(os, "-I"); ok {
		holder = v.s
	}
	if has(os, "-S", "--sshlogin", "--sshloginfile") {
		a.network(c.sp, "parallel", "parallel -S runs the jobs on other hosts over ssh")
	}
	var code strings.Builder
	for _, r := range rest {
		if r.s == ":::" || r.s == "::::" || r.s == ":::+" || r.s == "::::+" {
			break
		}
		if code.Len() > 0 {
			code.WriteByte(' ')
		}
		if r.dyn {
			a.opaque(r.sp, "parallel runs a command built at run time")
			return
		}
		code.WriteString(r.s)
	}
	if code.Len() == 0 {
		a.command(c.args, c.sp, true)
		a.opaque(c.sp, "parallel without a command runs each input line as a command")
		return
	}
	a.parallelCode(code.String(), c.sp, holder)
}

func wrapWatch(a *analyzer, c *call) {
	// procps watch, complete.
	os, rest := a.scan(opts{short: "nq", long: []string{"interval", "equexit"}, flags: "bcCdegptwxrhv",
		flagsLong: []string{"beep", "color", "no-color", "errexit", "chgexit", "precise", "no-title", "no-wrap", "exec",
			"no-rerun", "help", "version"}, optional: []string{"differences"}, complete: true, stop: true}, c.args)
	if has(os, "-x", "--exec") {
		a.inner(c, rest, c.cwd, false)
		return
	}
	a.shellWords(c, rest)
}

// shellWords runs operands the way a program that joins them with spaces
// and hands them to sh -c does.
func (a *analyzer) shellWords(c *call, words []arg) {
	if len(words) == 0 {
		return
	}
	var code strings.Builder
	for i, r := range words {
		if r.dyn {
			a.command(words, c.sp, true)
			a.opaque(r.sp, "the shell code is built at run time")
			return
		}
		if i > 0 {
			code.WriteByte(' ')
		}
		code.WriteString(r.s)
	}
	sp := risk.Span{Start: words[0].sp.Start, End: words[len(words)-1].sp.End}
	if sp.Start > sp.End || len(words) == 1 {
		sp = words[0].sp
		if len(words) > 1 {
			sp = c.sp
		}
	}
	a.reparse(code.String(), sp, false)
}

func wrapFlock(a *analyzer, c *call) {
	os, rest := a.scan(opts{short: "wEc", long: []string{"timeout", "wait", "conflict-exit-code", "command"}, stop: true}, c.args)
	a.command(c.args, c.sp, false)
	if len(rest) == 0 {
		return
	}
	if !isDigits(rest[0].s) {
		a.access(rest[0], c.cwd, true, false)
	}
	if cmd, ok := val(os, "-c", "--command"); ok {
		a.shellWords(c, []arg{cmd})
		return
	}
	// flock FILE -c CMD: -c after the lock file is still the shell command
	// (flock checks the word after the file for it).
	if len(rest) > 2 && !rest[1].dyn && (rest[1].s == "-c" || rest[1].s == "--command") {
		a.shellWords(c, rest[2:3])
		return
	}
	if len(rest) > 1 && rest[1].dyn {
		a.command(rest[1:], c.sp, true)
		a.opaque(rest[1].sp, "flock runs a command whose first word is only known at run time")
		return
	}
	a.inner(c, rest[1:], c.cwd, false)
}

func wrapStrace(a *analyzer, c *call) {
	os, rest := a.scan(opts{short: "abeEIoOpPsSuUX", long: []string{"output", "attach", "user", "env", "trace"}, stop: true}, c.args)
	a.command(c.args, c.sp, false)
	if f, ok := val(os, "-o", "--output"); ok {
		a.access(f, c.cwd, true, false)
	}
	if has(os, "-p", "--attach") {
		a.find(risk.Credential, c.sp, "tracing a running process can read its memory and secrets")
	}
	a.inner(c, rest, c.cwd, false)
}

func wrapChroot(a *analyzer, c *call) {
	_, rest := a.scan(opts{long: []string{"userspec", "groups"}, stop: true}, c.args)
	a.command(c.args, c.sp, false)
	a.find(risk.Execute, c.sp, "chroot runs a command with a different root directory")
	if len(rest) == 0 {
		return
	}
	if len(rest) == 1 {
		a.shellStdin(c, "a shell in the new root")
		return
	}
	// Paths inside the new root cannot be mapped to the host.
	a.inner(c, rest[1:], "", false)
}

func wrapSu(a *analyzer, c *call) {
	os, rest := a.scan(opts{short: "cgGsuwC", long: []string{"command", "group", "supp-group", "shell", "user", "whitelist-environment", "session-command"}, stop: true}, c.args)
	a.command(c.args, c.sp, false)
	name := programName(c.args[0].s)
	a.find(risk.Execute, c.sp, name+" runs a command as another user")
	if cmd, ok := val(os, "-c", "--command", "--session-command"); ok {
		a.shellWords(c, []arg{cmd})
		return
	}
	if name == "runuser" && len(rest) > 0 && has(os, "-u", "--user") {
		a.inner(c, rest, c.cwd, false)
		return
	}
	a.shellStdin(c, "a shell as another user")
}

// chdir returns the directory a cd-like option leads to from cwd.
func (a *analyzer) chdir(d arg, cwd string) string {
	if d.dyn {
		return ""
	}
	return resolve(d.s, cwd)
}
