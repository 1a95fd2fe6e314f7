package shellrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Programs that run another command of the caller's choosing: project
// runners (uv run, poetry run, bundle exec, ...), environment loaders
// (direnv exec, nix-shell --run, dotenv), pagers and viewers with a shell
// escape (man -P, less +!cmd), and programs with a helper program option
// (sort --compress-program). The command they run is judged by its own
// rules and listed in Result.Commands, so an allow rule for the runner
// does not cover it.

// runnerOpts gives the options taking a value of the project runners that
// run their operands as a command, and where the command starts.
func runnerOpts(name, sub string) (opts, bool) {
	switch {
	case name == "uv" && sub == "run":
		return opts{short: "pw", long: []string{"with", "with-editable", "with-requirements", "python", "project", "directory",
			"env-file", "extra", "group", "only-group", "no-group", "package", "index", "index-url", "extra-index-url",
			"find-links", "config-file", "cache-dir", "script", "module", "refresh-package", "reinstall-package", "upgrade-package",
			"exclude-newer", "index-strategy", "keyring-provider", "resolution", "prerelease", "link-mode", "compile-bytecode",
			"python-preference", "color", "allow-insecure-host"}, stop: true}, true
	case (name == "poetry" || name == "pdm" || name == "hatch" || name == "pipenv" || name == "rye") && sub == "run":
		return opts{short: "PCe", long: []string{"directory", "project", "env", "venv", "python"}, stop: true}, true
	case (name == "conda" || name == "mamba" || name == "micromamba") && sub == "run":
		return opts{short: "np", long: []string{"name", "prefix", "cwd"}, stop: true}, true
	case name == "bundle" && sub == "exec", name == "bundler" && sub == "exec":
		return opts{long: []string{"gemfile"}, stop: true}, true
	case name == "cargo" && sub == "exec":
		return opts{stop: true}, true
	}
	return opts{}, false
}

// projectRunner sees through `uv run`, `poetry run`, `bundle exec`, ...:
// the words after the runner's options run as a command. subAt is the
// index of the subcommand in c.args. It reports whether it handled c.
func (a *analyzer) projectRunner(c *call, name, sub string, subAt int) bool {
	o, ok := runnerOpts(name, sub)
	if !ok {
		return false
	}
	os, rest := a.scan(o, c.args[subAt:])
	cwd := c.cwd
	if d, ok := val(os, "--directory", "--project", "--cwd"); ok && name != "poetry" {
		cwd = a.chdir(d, cwd)
	}
	if name == "uv" && has(os, "-m", "--module") {
		return true // python -m MODULE: judged as running project code
	}
	a.inner(c, rest, cwd, false)
	return true
}

// ruleDirenv: direnv exec DIR CMD loads DIR's .envrc, which is shell code,
// then runs CMD.
func ruleDirenv(a *analyzer, c *call) {
	_, ops := a.scan(opts{stop: true}, c.args)
	if len(ops) == 0 || ops[0].s != "exec" {
		return
	}
	if len(ops) < 2 {
		return
	}
	a.find(risk.Execute, c.sp, "direnv exec loads the directory's .envrc, which is shell code")
	a.access(arg{s: ops[1].s + "/.envrc", dyn: ops[1].dyn, sp: ops[1].sp, w: ops[1].w}, c.cwd, false, false)
	a.inner(c, ops[2:], c.cwd, false)
}

// ruleNixShell: nix-shell --run/--command CMD runs shell code; nix develop
// -c/--command and nix shell -c run a command; nix run runs a package.
func ruleNixShell(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	args := c.args
	if name == "nix" {
		sub, subAt := "", 0
		for i, x := range args[1:] {
			if !strings.HasPrefix(x.s, "-") {
				sub, subAt = x.s, i+1
				break
			}
		}
		switch sub {
		case "develop", "shell", "run", "print-dev-env":
		default:
			rulePackage(a, c)
			return
		}
		a.network(c.sp, quote("nix "+sub), "nix "+sub+" evaluates Nix code and may download and build packages")
		for i := subAt + 1; i < len(args); i++ {
			x := args[i]
			switch {
			case x.s == "-c" || x.s == "--command":
				a.inner(c, args[i+1:], c.cwd, false)
				return
			case x.s == "--":
				if sub == "run" {
					return // arguments of the package's program
				}
			}
		}
		if sub == "run" {
			a.find(risk.Execute, c.sp, "nix run runs a package's program")
		} else if sub != "print-dev-env" {
			a.shellStdin(c, "nix "+sub)
		}
		return
	}
	// nix-shell
	a.network(c.sp, quote(name), name+" evaluates Nix code and may download and build packages")
	for i := 1; i < len(args); i++ {
		x := args[i]
		if x.s == "--run" || x.s == "--command" {
			a.find(risk.Execute, x.sp, name+" "+x.s+" runs shell code in the environment")
			if i+1 < len(args) {
				a.runValue(args[i+1], name+" "+x.s, false)
			}
			return
		}
		if strings.HasPrefix(x.s, "--run=") || strings.HasPrefix(x.s, "--command=") {
			v, _, _ := optValue(args, i)
			a.runValue(v, name+" --run", false)
			return
		}
	}
	a.shellStdin(c, name)
}

// ruleDotenv: dotenv-cli (`dotenv [-e file] [--] cmd`) and python-dotenv
// (`dotenv [-f file] run cmd`) load a file of variables and run a command.
func ruleDotenv(a *analyzer, c *call) {
	os, rest := a.scan(opts{short: "ecvfp", long: []string{"file", "export"}, stop: true}, c.args)
	for _, o := range os {
		if o.name == "-e" || o.name == "-f" || o.name == "--file" {
			a.access(o.val, c.cwd, false, false)
		}
	}
	switch {
	case len(rest) > 0 && !rest[0].dyn && rest[0].s == "run":
		_, rest = a.scan(opts{stop: true}, rest)
	case len(rest) > 0 && !rest[0].dyn && (rest[0].s == "get" || rest[0].s == "list" || rest[0].s == "set" || rest[0].s == "unset"):
		if rest[0].s == "get" || rest[0].s == "list" {
			a.credSource(c.sp, "a dotenv file")
			a.find(risk.Credential, c.sp, "dotenv "+rest[0].s+" prints the values in the .env file, which may be secrets")
		}
		return
	}
	a.inner(c, rest, c.cwd, false)
}

// ruleMan: -P/--pager and --html name programs man runs; -C reads a
// configuration that can name others.
func ruleMan(a *analyzer, c *call) {
	os, ops := a.scan(opts{short: "PCMLmSsEeRpH", long: []string{"pager", "config-file", "manpath", "locale", "systems",
		"sections", "extension", "encoding", "preprocessor", "prompt", "recode"}, abbrev: []string{"pager", "config-file",
		"manpath", "locale", "systems", "sections", "extension", "encoding", "preprocessor", "prompt", "recode", "html",
		"local-file", "where", "path", "location", "catman", "debug", "default", "whatis", "apropos", "all", "update",
		"no-subpages", "nh", "nj", "no-hyphenation", "no-justification", "gxditview", "ditroff", "troff", "troff-device",
		"regex", "wildcard", "names-only", "match-case", "ignore-case", "help", "usage", "version"}}, c.args)
	for _, o := range os {
		switch o.name {
		case "-P", "--pager":
			a.find(risk.Execute, o.x.sp, "man "+o.name+" names the program that shows the page, which runs")
			a.runValue(o.val, "man "+o.name, false)
		case "-H", "--html":
			a.find(risk.Execute, o.x.sp, "man --html runs a browser")
			if o.val.s != "" {
				a.runValue(o.val, "man --html", true)
			}
		case "-C", "--config-file":
			a.access(o.val, c.cwd, false, false)
			a.opaque(o.x.sp, "man -C reads a configuration file, which can name programs man runs")
		case "-p", "--preprocessor":
		case "-l", "--local-file":
			for _, x := range ops {
				a.access(x, c.cwd, false, false)
			}
		}
	}
}

// ruleLess: less reads its operands; +cmd runs less commands at start
// (+!cmd a shell command), -o/-O/--log-file write, and a lesskey file
// binds keys to commands.
func ruleLess(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	long := []string{"log-file", "LOG-FILE", "lesskey-file", "lesskey-src", "lesskey-content", "tag-file", "tag", "pattern",
		"prompt", "shift", "tabs", "window", "max-back-scroll", "max-forw-scroll", "buffers", "color", "line-num-width",
		"status-col-width", "rscroll", "wordwrap", "header", "intr", "mouse-lines", "quotes", "search-options", "status-line",
		"use-color"}
	os, ops := a.scan(opts{short: "bhjkoOpPtTxyz#D", long: long}, c.args)
	for _, o := range os {
		switch o.name {
		case "-o", "-O", "--log-file", "--LOG-FILE":
			a.access(o.val, c.cwd, true, false)
		case "-k", "--lesskey-file", "--lesskey-src":
			a.access(o.val, c.cwd, false, false)
			a.opaque(o.x.sp, name+" "+o.name+" reads key bindings from a file, which can bind keys to shell commands")
		case "--lesskey-content":
			a.opaque(o.x.sp, name+" --lesskey-content binds keys to commands, which can run shell commands")
		}
	}
	for _, x := range ops {
		if cmd, ok := strings.CutPrefix(x.s, "+"); ok && !x.dyn {
			a.lessCommand(name, x, strings.TrimPrefix(cmd, "+"))
			continue
		}
		a.access(x, c.cwd, false, false)
	}
}

// lessCommand judges a command less runs at start (+cmd, ++cmd).
func (a *analyzer) lessCommand(name string, x arg, cmd string) {
	if sh, ok := strings.CutPrefix(cmd, "!"); ok {
		a.find(risk.Execute, x.sp, name+" +! runs a shell command")
		a.runValue(arg{s: strings.TrimPrefix(sh, "!"), sp: x.sp, w: x.w}, name+" +!", false)
		return
	}
	if cmd == "" || strings.HasPrefix(cmd, "/") || strings.HasPrefix(cmd, "?") {
		return // a search
	}
	for i := 0; i < len(cmd); i++ {
		ch := cmd[i]
		if ch >= '0' && ch <= '9' || strings.IndexByte("gGpFnN%eEjkfbdu", ch) >= 0 {
			continue
		}
		a.opaque(x.sp, name+" runs the command "+quote(cmd)+" at start, which can write files or run programs")
		return
	}
}

// npmSub judges npm subcommands that run code: explore runs a shell
// command in a package's directory; pkg set writes scripts that npm runs
// later.
func (a *analyzer) npmSub(c *call, sub string, subAt int) {
	rest := c.args[subAt+1:]
	switch sub {
	case "explore":
		for i, x := range rest {
			if x.s == "--" {
				a.find(risk.Execute, x.sp, "npm explore runs a shell command in the package's directory")
				a.shellWords(c, rest[i+1:])
				return
			}
		}
		a.shellStdin(c, "npm explore")
	case "pkg":
		if len(rest) == 0 || rest[0].s != "set" {
			return
		}
		for _, x := range rest[1:] {
			if x.dyn {
				a.opaque(x.sp, "npm pkg set is given a value built at run time, which may be a script")
				continue
			}
			key, value, ok := strings.Cut(x.s, "=")
			if !ok {
				continue
			}
			k := strings.ToLower(key)
			switch {
			case strings.HasPrefix(k, "scripts.") || strings.HasPrefix(k, "scripts["):
				a.find(risk.Execute, x.sp, "npm pkg set "+key+" writes a script into package.json, which npm runs later")
				a.access(arg{s: "package.json", sp: x.sp}, c.cwd, true, false)
				a.runValue(arg{s: value, sp: x.sp, w: x.w}, "the script "+key, false)
			case k == "scripts" || k == "husky" || k == "simple-git-hooks" || k == "lint-staged" || k == "pre-commit" ||
				k == "githooks" || strings.HasPrefix(k, "husky.") || strings.HasPrefix(k, "simple-git-hooks.") ||
				strings.HasPrefix(k, "lint-staged.") || strings.HasPrefix(k, "config."):
				a.access(arg{s: "package.json", sp: x.sp}, c.cwd, true, false)
				a.opaque(x.sp, "npm pkg set "+key+" writes commands into package.json that run later")
			}
		}
	}
}
