package shellrisk

import (
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// call is one simple command about to be judged.
type call struct {
	args []arg     // args[0] is the program
	sp   risk.Span // the whole simple command, wrappers included
	in   input     // where its standard input comes from
	cwd  string    // its working directory ("" when unknown)
	dyn  bool      // more arguments are added at run time (xargs, find -exec)
}

// rule judges one program. args[0] of the call is the program.
type rule func(a *analyzer, c *call)

// run judges a simple command: it sees through wrappers and applies the
// program's rule.
func (a *analyzer) run(c *call) {
	if len(c.args) == 0 {
		return
	}
	a.commands++
	a.work += len(c.args)
	if a.commands > maxCommands {
		if a.commands == maxCommands+1 {
			a.opaque(c.sp, "the command holds too many simple commands to check them all")
		}
		return
	}
	prog := c.args[0]
	if prog.dyn || prog.glob {
		a.command(c.args, c.sp, true)
		a.opaque(prog.sp, "the program "+quote(a.text(prog.sp))+" is only known at run time")
		return
	}
	name := programName(prog.s)
	switch name {
	case "printf", "read", "test", "[", "unset", "declare", "typeset", "local", "export", "readonly", "let", "mapfile", "readarray", "wait", "complete", "compgen":
		// Builtins that take variable names evaluate their subscripts.
		for _, x := range c.args[1:] {
			if strings.IndexByte(x.s, '[') >= 0 || name == "let" {
				a.evalCtx = true
			}
			if (name == "complete" || name == "compgen") && (x.s == "-C" || x.s == "-F") {
				a.opaque(x.sp, name+" "+x.s+" names code the shell runs later")
			}
		}
	}
	switch name {
	case "printf":
		// printf -v NAME assigns what it formats: a value known only at
		// run time.
		for i, x := range c.args[1:] {
			if x.s == "-v" && i+2 < len(c.args) && c.cwd == a.cwd {
				if n := c.args[i+2]; !n.dyn {
					a.setVar(strings.TrimSuffix(n.s[:strings.IndexByte(n.s+"[", '[')], ""), "", false)
				}
			}
		}
	case "hash", "enable":
		// hash -p FILE NAME makes NAME run FILE; enable -f loads a builtin
		// from a shared object: either way a name runs what it does not say.
		for _, x := range c.args[1:] {
			if x.dyn || strings.HasPrefix(x.s, "-") && strings.ContainsAny(x.s, "pf") {
				a.opaque(x.sp, name+" "+quote(x.s)+" changes what a command name runs, so later commands are not what they say; no rule allows it")
				break
			}
		}
	case "shopt":
		for _, x := range c.args[1:] {
			if x.dyn || x.s == "expand_aliases" {
				a.opaque(x.sp, "shopt "+quote(x.s)+" turns on aliases, so later command names may run something else")
				break
			}
		}
	}
	if w := wrapperFor(name); w != nil {
		w(a, c)
		return
	}
	a.command(c.args, c.sp, c.dyn)
	if r := ruleFor(name); r != nil {
		r(a, c)
	}
}

// inner runs the command a wrapper hands args to. Wrappers nest by
// recursion; beyond maxWrap levels the rest is Opaque, so that
// `env env env … rm` costs time and memory linear in its length.
func (a *analyzer) inner(c *call, args []arg, cwd string, dyn bool) {
	if len(args) == 0 {
		return
	}
	if a.wrapDepth >= maxWrap {
		if a.wrapDepth == maxWrap {
			a.command(args[:1], c.sp, true)
			a.opaque(c.sp, "wrappers are nested more than 16 deep, so what finally runs was not checked")
		}
		return
	}
	a.wrapDepth++
	a.run(a.newCall(call{args: args, sp: c.sp, in: c.in, cwd: cwd, dyn: c.dyn || dyn}))
	a.wrapDepth--
}

// newCall places a call in the analyzer's arena to spare an allocation.
func (a *analyzer) newCall(c call) *call {
	a.callArena = append(a.callArena, c)
	return &a.callArena[len(a.callArena)-1]
}

// ruleFor returns the rule of a program that runs itself (not a wrapper).
func ruleFor(name string) rule {
	for _, f := range [...]func(string) rule{ruleForDestroy, ruleForLang, ruleForSideDoor, ruleForBuild} {
		if r := f(name); r != nil {
			return r
		}
	}
	switch name {
	case "cd", "pushd", "popd":
		return ruleCd
	case "read", "mapfile", "readarray":
		return ruleReadVars
	case "rm", "unlink", "rmdir", "shred", "srm", "wipe", "rimraf", "del", "del-cli":
		return ruleRm
	case "make", "gmake":
		return ruleMake
	case "at", "batch":
		return ruleAt
	case "script":
		return ruleScript
	case "find":
		return ruleFind
	case "sed", "gsed":
		return ruleSed
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		return ruleAwk
	case "cp", "mv", "ln", "install", "touch", "mkdir", "tee", "truncate", "dd", "patch":
		return ruleWrite
	case "chmod", "chown", "chgrp", "chattr", "setfacl":
		return ruleChmod
	case "mkfs", "fdisk", "sfdisk", "cfdisk", "parted", "wipefs", "blkdiscard", "mkswap", "sgdisk":
		return ruleDisk
	case "tar", "gtar", "bsdtar":
		return ruleTar
	case "zip", "unzip":
		return ruleZip
	case "rsync":
		return ruleRsync
	case "rg", "ripgrep":
		return ruleRg
	case "git":
		return ruleGit
	case "psql", "mysql", "mariadb", "sqlite3", "sqlite", "mongo", "mongosh", "redis-cli", "clickhouse-client", "cqlsh", "duckdb":
		return ruleSQL
	case "kubectl", "oc":
		return ruleKubectl
	case "helm":
		return ruleHelm
	case "terraform", "tofu", "terragrunt":
		return ruleTerraform
	case "docker", "podman", "nerdctl":
		return ruleDocker
	case "gh", "glab", "kind", "minikube", "k3d", "eksctl", "aws", "gcloud", "gsutil", "az", "doctl", "flyctl", "heroku", "vercel", "netlify", "firebase", "pulumi":
		return ruleCloud
	case "crontab":
		return ruleCrontab
	case "man":
		return ruleMan
	case "less":
		return ruleLess
	case "direnv":
		return ruleDirenv
	case "nix-shell", "nix":
		return ruleNixShell
	case "dotenv":
		return ruleDotenv
	case "pipenv", "hatch", "rye", "micromamba", "bundler":
		return rulePackage
	case "env", "printenv", "set", "compgen":
		return ruleEnvDump
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox", "csh", "tcsh", "yash":
		return ruleShell
	case "eval":
		return ruleEval
	case "source", ".":
		return ruleSource
	case "alias":
		return ruleAlias
	case "trap":
		return ruleTrap
	case "base64", "xxd", "uudecode", "openssl", "gpg":
		return ruleDecode
	case "ps":
		return rulePs
	case "security", "secret-tool", "pass", "op", "bw", "vault", "gopass", "keyring":
		return ruleSecretStore
	case "fd", "fdfind":
		return ruleFd
	case "systemctl", "service", "launchctl", "shutdown", "reboot", "halt", "poweroff", "kill", "killall", "pkill":
		return ruleSystem
	}
	if r := networkRule(name); r != nil {
		return r
	}
	if r := interpreterRule(name); r != nil {
		return r
	}
	if isMkfs(name) {
		return ruleDisk
	}
	if readsOperands(name) {
		return ruleRead
	}
	return nil
}

// quote puts s in backquotes for a Why sentence, shortening long text.
func quote(s string) string {
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return "`" + s + "`"
}

// opts describes a program's options for scanOpts.
type opts struct {
	short string   // short options that take a value ("u" for -u root)
	long  []string // long options that take a value, without "--"
	// stop is set for programs whose options end at the first operand (the
	// wrappers); others allow options after operands, as GNU programs do.
	stop bool
	// abbrev lists every long option of the program (without "--"): a
	// unique prefix of one of them is taken as that option, as GNU
	// getopt_long does, and reported by its full name. A complete table
	// needs none: its abbreviations come from long, flagsLong and optional.
	abbrev []string
	// exact is set for programs that take long options only in full
	// (Go's pflag, as docker's): a complete table then gives no
	// abbreviations.
	exact bool

	// complete marks a table that lists every option of the program: the
	// short ones taking no value in flags, the long ones in flagsLong, and
	// long ones whose value is optional (--color[=WHEN], given only with
	// "=") in optional. An option not listed is not understood, and
	// makes the command Opaque: it may take a value the analysis would
	// read as an operand, or do anything at all.
	complete  bool
	flags     string
	flagsLong []string
	optional  []string
	// optShort are short options whose value is optional and only given
	// attached (od -w8, -w alone).
	optShort string
	// dash is the option a lone "-" stands for ("-i" for env), if any.
	dash string
	// numeric is set when -N (digits) is an option, as nice -10 and
	// head -5.
	numeric bool

	// wordFlags and wordValue are options of several letters given
	// after one dash, as commons-cli reads them (mvn -am, -pl): those in
	// wordValue take a value, the next word or one attached after "="
	// (-pl=core). A word that is not one of them is read as short
	// options.
	wordFlags, wordValue []string
	// noCluster is set for programs that read one short option a word
	// (commons-cli, Gradle): what follows a short option that takes a
	// value is its value (-DskipTests, -T4); after one that takes none,
	// the word is not understood.
	noCluster bool
	// boolValue is set for programs that take a value attached to a long
	// option that needs none (pflag's --rm=false, bazel's
	// --keep_going=yes): it is returned as the option's value, where a
	// complete table would refuse the option.
	boolValue bool
}

// longNames returns every long option of a complete table, for
// abbreviations.
func (o opts) longNames() []string {
	if len(o.abbrev) > 0 || !o.complete || o.exact {
		return o.abbrev
	}
	all := make([]string, 0, len(o.long)+len(o.flagsLong)+len(o.optional))
	all = append(all, o.long...)
	all = append(all, o.flagsLong...)
	return append(all, o.optional...)
}

// knownLong reports whether name is a long option of a complete table.
func (o opts) knownLong(name string) bool {
	return slices.Contains(o.long, name) || slices.Contains(o.flagsLong, name) || slices.Contains(o.optional, name)
}

// fullLong returns the long option name (without "--") that name
// abbreviates among o.abbrev: itself when exact or unknown, else the one
// option it is a prefix of.
func (o opts) fullLong(name string) string {
	names := o.longNames()
	if len(names) == 0 {
		return name
	}
	full := ""
	for _, l := range names {
		if l == name {
			return name
		}
		if strings.HasPrefix(l, name) {
			if full != "" {
				return name // ambiguous: getopt refuses it
			}
			full = l
		}
	}
	if full == "" {
		return name
	}
	return full
}

// opt is one option found by scanOpts.
type opt struct {
	name string // "-f" or "--force"; a cluster "-rf" yields "-r" and "-f"
	val  arg    // its value, if it takes one
	x    arg    // the word the option came from
	// attached is set when val was part of x (-Tfoo, --file=F), not the
	// next word.
	attached bool
	// unknown is set for an option a complete table does not list.
	unknown bool
}

// scan splits args[1:] into options and operands. A word that is built at
// run time in an option position is returned as an operand with dyn set, so
// rules can treat it as "could be anything". The slices come from the
// analyzer's arenas and must not be appended to in place (their capacity is
// their length, so append copies).
func (a *analyzer) scan(o opts, args []arg) ([]opt, []arg) {
	os, operands := a.scanQuiet(o, args)
	if o.complete {
		for _, op := range os {
			if op.unknown {
				a.unknownOpt(args[0], op)
				break
			}
		}
	}
	return os, operands
}

// scanQuiet is scan for rules that take some options a complete table
// does not list (a task's options after it, a family of flags named by a
// prefix): it marks an unknown option but does not record it.
func (a *analyzer) scanQuiet(o opts, args []arg) ([]opt, []arg) {
	o0, a0 := len(a.optArena), len(a.argArena)
	os, operands, tail := o.scanInto(a.optArena, a.argArena, args)
	a.optArena = os
	if len(operands) == a0 {
		// Only the operands after the options: share them with args rather
		// than copy, so that nested wrappers stay linear.
		return os[o0:len(os):len(os)], tail[:len(tail):len(tail)]
	}
	operands = append(operands, tail...)
	a.argArena = operands
	return os[o0:len(os):len(os)], operands[a0:len(operands):len(operands)]
}

// scanSplit is scanQuiet for a table without stop that keeps apart the
// words after a "--" that ended the options (a target's or a tool's own
// arguments): tail, nil when no "--" did. A "--" taken as an option's
// value does not end them.
func (a *analyzer) scanSplit(o opts, args []arg) (os []opt, operands, tail []arg) {
	o0, a0 := len(a.optArena), len(a.argArena)
	os, operands, tail = o.scanInto(a.optArena, a.argArena, args)
	a.optArena, a.argArena = os, operands
	return os[o0:len(os):len(os)], operands[a0:len(operands):len(operands)], tail[:len(tail):len(tail)]
}

// unknownOpt records an option the program's table does not list.
func (a *analyzer) unknownOpt(prog arg, op opt) {
	a.opaque(op.x.sp, programName(prog.s)+" is given the option "+quote(op.name)+", which the analyser does not know, so it cannot tell what the words after it are; no rule allows it")
}

// scanInto appends options to os and operands to operands; with o.stop or
// after "--", the rest of args is returned as tail, uncopied.
func (o opts) scanInto(os []opt, operands []arg, args []arg) ([]opt, []arg, []arg) {
	for i := 1; i < len(args); i++ {
		x := args[i]
		s := x.s
		switch {
		case s == "-" && o.dash != "" && !x.dyn:
			os = append(os, opt{name: o.dash, x: x})
		case o.numeric && !x.dyn && len(s) > 1 && s[0] == '-' && isDigits(s[1:]):
			os = append(os, opt{name: s, x: x})
		case x.dyn || len(s) < 2 || s[0] != '-':
			if o.stop {
				return os, operands, args[i:]
			}
			operands = append(operands, x)
		case s == "--":
			return os, operands, args[i+1:]
		case strings.HasPrefix(s, "--"):
			name, val, hasVal := strings.Cut(s, "=")
			if full := o.fullLong(name[2:]); full != name[2:] {
				name = "--" + full // an abbreviation, given in full
			}
			op := opt{name: name, x: x, unknown: o.complete && !o.knownLong(name[2:])}
			if hasVal {
				op.val, op.attached = arg{s: val, sp: x.sp, w: x.w}, true
				if o.complete && !o.boolValue && slices.Contains(o.flagsLong, name[2:]) {
					op.unknown = true // getopt refuses a value for a flag
				}
			} else if o.takesLong(name[2:]) && i+1 < len(args) {
				i++
				op.val = args[i]
			}
			os = append(os, op)
		default:
			if len(o.wordFlags)+len(o.wordValue) > 0 {
				w, v, hasVal := strings.Cut(s[1:], "=")
				valued := slices.Contains(o.wordValue, w)
				if valued || slices.Contains(o.wordFlags, w) {
					op := opt{name: s[:1+len(w)], x: x}
					switch {
					case hasVal:
						op.val, op.attached = arg{s: v, sp: x.sp, w: x.w}, true
						op.unknown = o.complete && !valued // commons-cli makes the value a word of its own
					case valued && i+1 < len(args):
						i++
						op.val = args[i]
					}
					os = append(os, op)
					continue
				}
			}
			for j := 1; j < len(s); j++ {
				op := opt{name: shortName(s[j]), x: x}
				if strings.IndexByte(o.optShort, s[j]) >= 0 {
					if j+1 < len(s) {
						op.val, op.attached = arg{s: s[j+1:], sp: x.sp, w: x.w}, true
					}
					os = append(os, op)
					break
				}
				if o.complete && strings.IndexByte(o.short, s[j]) < 0 && strings.IndexByte(o.flags, s[j]) < 0 {
					op.unknown = true
				}
				if strings.IndexByte(o.short, s[j]) >= 0 {
					if j+1 < len(s) {
						op.val, op.attached = arg{s: s[j+1:], sp: x.sp, w: x.w}, true
					} else if i+1 < len(args) {
						i++
						op.val = args[i]
					}
					os = append(os, op)
					break
				}
				if o.noCluster && j+1 < len(s) {
					// Not a cluster of flags: the whole word is not
					// understood.
					op.name, op.unknown = s, true
					os = append(os, op)
					break
				}
				os = append(os, op)
			}
		}
	}
	return os, operands, nil
}

// shortNames holds "-" and each byte in turn, so that a short option's
// name is a slice of it instead of a new string for every option read.
var shortNames = func() string {
	b := make([]byte, 2*256)
	for i := range 256 {
		b[2*i], b[2*i+1] = '-', byte(i)
	}
	return string(b)
}()

// shortName returns "-" + string(c).
func shortName(c byte) string { return shortNames[2*int(c) : 2*int(c)+2] }

func (o opts) takesLong(name string) bool {
	for _, l := range o.long {
		if l == name {
			return true
		}
	}
	return false
}

// has reports whether any of the option names was given.
func has(os []opt, names ...string) bool {
	for _, o := range os {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

// val returns the value of the last of the named options given.
func val(os []opt, names ...string) (arg, bool) {
	for i := len(os) - 1; i >= 0; i-- {
		for _, n := range names {
			if os[i].name == n {
				return os[i].val, true
			}
		}
	}
	return arg{}, false
}

// longOpt reports whether s abbreviates the long option full: GNU getopt
// and git accept any unique prefix, so "--forc" is "--force". min is the
// shortest prefix treated as meaning full, to keep apart options sharing a
// start.
func longOpt(s, full string, min int) bool {
	s, _, _ = strings.Cut(s, "=")
	return len(s) >= min && len(s) <= len(full) && strings.HasPrefix(full, s)
}
