package shellrisk

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// networkRule returns the rule of a program that talks to the network.
func networkRule(name string) rule {
	switch name {
	case "curl", "wget", "wget2", "http", "https", "xh", "aria2c", "lynx", "w3m", "links":
		return ruleHTTP
	case "nc", "ncat", "netcat", "socat", "telnet", "ftp", "tftp", "sftp", "lftp", "ssh", "scp", "mosh",
		"openvpn", "websocat", "grpcurl", "ldapsearch", "smbclient", "rclone", "s3cmd", "mail", "sendmail", "mutt", "ssh-copy-id":
		return ruleNetTool
	case "ngrok", "cloudflared", "localtunnel", "lt", "bore", "frpc":
		return ruleNetTool
	case "dig", "nslookup", "host", "ping", "ping6", "traceroute", "tracepath", "whois", "mtr", "drill":
		return ruleDNS
	case "npm", "pnpm", "yarn", "bun", "pip", "pip3", "pipx", "uv", "poetry", "pdm", "go", "cargo", "gem", "bundle",
		"apt", "apt-get", "aptitude", "dnf", "yum", "zypper", "apk", "pacman", "brew", "port", "snap", "flatpak",
		"composer", "mvn", "gradle", "dotnet", "nuget", "conda", "mamba", "nix", "nix-env", "deno", "npx", "pnpx", "bunx", "uvx", "cpan", "cpanm":
		return rulePackage
	}
	return nil
}

// netArgs judges what a network command sends: files it uploads are read
// accesses, and run-time values in its arguments may carry secrets.
func (a *analyzer) netArgs(c *call, what string) {
	for _, x := range c.args[1:] {
		if x.w == nil || !x.dyn {
			continue
		}
		if v, ok := secretVar(x.w); ok {
			a.credSource(x.sp, "the variable $"+v)
			a.find(risk.Credential, x.sp, what+" sends the value of $"+v+", which may be a secret")
		}
	}
}

// secretVar reports a parameter expansion in w of a variable that may hold
// a secret: anything but a short list of well-known harmless ones.
func secretVar(w *syntax.Word) (string, bool) {
	var found string
	var walk func(ps []syntax.WordPart)
	walk = func(ps []syntax.WordPart) {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.DblQuoted:
				walk(p.Parts)
			case *syntax.ParamExp:
				if p.Param != nil && found == "" && !harmlessVar(p.Param.Value) {
					found = p.Param.Value
				}
			}
		}
	}
	walk(w.Parts)
	return found, found != ""
}

func harmlessVar(name string) bool {
	switch name {
	case "HOME", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "HOSTNAME", "TMPDIR", "PATH",
		"RANDOM", "LINENO", "SECONDS", "UID", "EUID", "PPID", "$", "!", "?", "#", "@", "*", "0", "1", "2", "3",
		"4", "5", "6", "7", "8", "9", "_", "BASH_VERSION", "OSTYPE", "HOSTTYPE", "MACHTYPE":
		return true
	}
	return false
}

// uploadData handles curl data arguments: @file and name=@file read a file;
// <file in forms too.
func (a *analyzer) uploadData(v arg, cwd string) {
	s := v.s
	if _, after, ok := strings.Cut(s, "=@"); ok {
		s = "@" + after
	} else if _, after, ok := strings.Cut(s, "=<"); ok {
		s = "@" + after
	}
	if !strings.HasPrefix(s, "@") || s == "@-" {
		return
	}
	file, _, _ := strings.Cut(s[1:], ";")
	a.access(arg{s: file, dyn: v.dyn, glob: v.glob, sp: v.sp, w: v.w}, cwd, false, false)
}

// ruleNetTool: raw sockets, remote shells and copies.
func ruleNetTool(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	a.network(c.sp, quote(name), name+" connects to another machine over the network")
	a.netArgs(c, name)
	switch name {
	case "scp", "rclone", "sftp":
		// Local operands (no host:) are read or written.
		os, ops := a.scan(opts{short: "cFiJlLoPSDBRs", long: nil}, c.args)
		if name != "rclone" {
			a.sshOptions(os, name)
			for _, o := range os {
				if o.name == "-S" || o.name == "-D" && name == "sftp" {
					a.find(risk.Execute, o.x.sp, name+" "+o.name+" runs the given program for the connection")
					a.runValue(o.val, name+" "+o.name, false)
				}
			}
		}
		deep := name == "scp" && has(os, "-r") || name == "rclone"
		for i, x := range ops {
			if isRemote(x.s) || name == "rclone" && i == 0 {
				continue
			}
			write := i == len(ops)-1 && len(ops) > 1
			if deep && !write {
				a.accessDeep(x, c.cwd)
				continue
			}
			a.access(x, c.cwd, write, false)
		}
	case "ssh":
		os, ops := a.scan(opts{short: "BbcDEeFIiJLlmOoPpQRSWw"}, c.args)
		if f, ok := val(os, "-i"); ok {
			a.access(f, c.cwd, false, false)
		}
		a.sshOptions(os, name)
		if len(ops) > 1 {
			a.find(risk.Execute, c.sp, "ssh runs a command on the remote machine")
		}
	case "nc", "ncat", "netcat", "socat":
		for i := 1; i < len(c.args); i++ {
			x := c.args[i]
			var v arg
			found, ok, next := false, false, false
			switch {
			case name == "socat":
				up := strings.ToUpper(x.s)
				j := strings.Index(up, "EXEC:")
				if k := strings.Index(up, "SYSTEM:"); k >= 0 && (j < 0 || k < j) {
					j = k + len("SYSTEM:")
				} else if j >= 0 {
					j += len("EXEC:")
				}
				if j >= 0 {
					code, _, _ := strings.Cut(x.s[j:], ",") // address options follow a comma
					v, ok, found = arg{s: code, dyn: x.dyn, sp: x.sp, w: x.w}, true, true
				}
			case x.s == "-e" || x.s == "-c" || x.s == "--exec" || x.s == "--sh-exec" || x.s == "--lua-exec" ||
				strings.HasPrefix(x.s, "--exec=") || strings.HasPrefix(x.s, "--sh-exec="):
				v, next, ok = optValue(c.args, i)
				found = true
			case len(x.s) > 2 && (strings.HasPrefix(x.s, "-e") || strings.HasPrefix(x.s, "-c")) && x.s[2] == '/':
				v, ok, found = arg{s: x.s[2:], dyn: x.dyn, sp: x.sp, w: x.w}, true, true
			}
			if !found {
				continue
			}
			// The other end of the connection drives the program.
			a.opaque(x.sp, name+" hands a shell or program to the network connection, so what it does is decided remotely")
			if ok && x.s != "--lua-exec" {
				a.runValue(v, name+" "+x.s, false)
			}
			if next {
				i++
			}
		}
	}
}

// sshOptions judges ssh -o options that run local commands: ProxyCommand,
// LocalCommand, KnownHostsCommand. ssh takes "Key=Value" and "Key Value",
// in any case; %h, %p and the like are filled in at run time.
func (a *analyzer) sshOptions(os []opt, name string) {
	for _, o := range os {
		if o.name != "-o" {
			continue
		}
		key, value := o.val.s, ""
		if i := strings.IndexAny(key, "= \t"); i >= 0 {
			key, value = key[:i], strings.TrimLeft(key[i:], "= \t")
		}
		switch strings.ToLower(key) {
		case "proxycommand", "localcommand", "knownhostscommand":
		default:
			continue
		}
		a.find(risk.Execute, o.val.sp, name+" -o "+quote(o.val.s)+" runs a local command")
		if strings.EqualFold(value, "none") {
			continue
		}
		a.runValue(arg{s: value, dyn: o.val.dyn, sp: o.val.sp, w: o.val.w}, name+" -o "+key, strings.Contains(value, "%"))
	}
}

func isRemote(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.ContainsRune(s[:i], '/')
}

// ruleDNS: lookups of names built at run time can carry data out.
func ruleDNS(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	for _, x := range c.args[1:] {
		if x.dyn {
			a.network(x.sp, quote(name), name+" looks up a name built at run time, which can carry data out through DNS")
			a.netArgs(c, name)
			return
		}
	}
	a.network(c.sp, quote(name), name+" sends packets over the network")
}

// rulePackage: installing packages downloads code and usually runs its
// install scripts.
// npmSafeFlags are npm options that change only output or which scripts
// are selected; every other --key[=value] before "--" sets npm
// configuration (--node-options, --script-shell, --userconfig …), which can
// make npm run code.
var npmSafeFlags = []string{"-s", "--silent", "-q", "--quiet", "-d", "--loglevel", "--if-present", "--ignore-scripts",
	"--workspaces", "-ws", "--include-workspace-root", "--no-fund", "--no-audit", "--no-update-notifier", "--color",
	"--no-color", "--json", "--parseable", "-h", "--help", "-v", "--version", "--verbose", "--yes", "-y"}

// npmConfigOpts makes Opaque an npm option that is not known to be
// harmless: npm reads any --key=value before "--" as configuration.
func (a *analyzer) npmConfigOpts(c *call, name string) {
	for _, x := range c.args[1:] {
		if x.s == "--" {
			return // the rest goes to the script
		}
		if x.dyn {
			a.opaque(x.sp, name+" is given a word built at run time, which may be an option that sets its configuration")
			return
		}
		if !strings.HasPrefix(x.s, "-") {
			continue
		}
		opt, _, _ := strings.Cut(x.s, "=")
		if !slices.Contains(npmSafeFlags, opt) && !(opt == "-w" || opt == "--workspace") {
			a.opaque(x.sp, name+" reads "+quote(x.s)+" as a configuration setting, and settings such as --node-options or --script-shell run code; no rule allows it")
			return
		}
	}
}

// goBuildFlags judges go's build flags that run other programs: -exec
// and -toolexec run a program of the caller's choice, -overlay and
// -ldflags=-extld replace what is compiled or linked, -o writes.
func (a *analyzer) goBuildFlags(c *call, sub string, subAt int) {
	args := c.args[subAt+1:]
	for i := 0; i < len(args); i++ {
		x := args[i]
		if x.dyn {
			continue
		}
		s := strings.TrimPrefix(x.s, "-") // go accepts -flag and --flag
		flag, val, hasVal := strings.Cut(s, "=")
		if !strings.HasPrefix(x.s, "-") {
			continue
		}
		switch strings.TrimPrefix(flag, "-") {
		case "http":
			if sub == "doc" {
				a.opaque(x.sp, "go doc -http downloads a documentation server (pkgsite) and runs it; no rule allows it")
				return
			}
		case "exec", "toolexec", "vettool", "overlay", "pgo", "modfile", "C":
			a.opaque(x.sp, "go "+sub+" "+quote(x.s)+" makes go run or build what it names; no rule allows it")
			return
		case "ldflags", "gcflags", "asmflags", "gccgoflags":
			if !hasVal && i+1 < len(args) {
				val = args[i+1].s
			}
			if strings.Contains(val, "extld") || strings.Contains(val, "plugin") || args[min(i+1, len(args)-1)].dyn {
				a.opaque(x.sp, "go "+sub+" "+quote(x.s)+" names a linker or plugin go runs; no rule allows it")
				return
			}
		case "o", "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir",
			"test.coverprofile", "test.cpuprofile", "test.memprofile", "test.blockprofile", "test.mutexprofile", "test.trace", "test.outputdir":
			// Files go writes: a profile holds file names the repository
			// chooses, so one written to ~/.bashrc runs them.
			if hasVal {
				a.access(arg{s: val, sp: x.sp}, c.cwd, true, false)
			} else if i+1 < len(args) {
				a.access(args[i+1], c.cwd, true, false)
			}
		}
	}
}

func rulePackage(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	if len(c.args) < 2 {
		return
	}
	sub, subAt := "", 0
	for i, x := range c.args[1:] {
		if !strings.HasPrefix(x.s, "-") {
			sub, subAt = x.s, i+1
			break
		}
	}
	switch name {
	case "npx", "pnpx", "bunx", "uvx", "pipx":
		if name != "pipx" || sub == "run" || sub == "install" {
			a.network(c.sp, quote(name), name+" downloads a package and runs it")
			switch {
			case name != "pipx":
				a.runner(c, c.args)
			case sub == "run":
				a.runner(c, c.args[subAt:])
			}
			return
		}
	}
	for i := 1; i < len(c.args); i++ {
		if x := c.args[i]; strings.HasPrefix(x.s, "--script-shell") && (name == "npm" || name == "pnpm" || name == "yarn" || name == "bun") {
			a.find(risk.Execute, x.sp, name+" --script-shell runs scripts with another program")
			if v, next, ok := optValue(c.args, i); ok {
				a.runValue(v, name+" --script-shell", true) // -c and the script are added
				if next {
					i++
				}
			}
		}
	}
	if name == "npm" || name == "pnpm" || name == "yarn" || name == "bun" {
		a.npmConfigOpts(c, name)
	}
	if name == "go" && sub != "" {
		a.goBuildFlags(c, sub, subAt)
	}
	if a.projectRunner(c, name, sub, subAt) {
		return
	}
	if name == "npm" && (sub == "explore" || sub == "pkg") {
		a.npmSub(c, sub, subAt)
		return
	}
	if name == "go" {
		switch sub {
		case "get", "install", "mod":
			a.network(c.sp, "go "+sub, "go "+sub+" downloads modules from the network")
		case "run", "generate":
			a.find(risk.Execute, c.sp, "go "+sub+" runs code from the working tree")
		}
		return
	}
	if name == "cargo" && sub == "run" || name == "deno" && sub == "run" {
		return
	}
	switch sub {
	case "install", "i", "add", "ci", "update", "upgrade", "up", "get", "fetch", "sync", "dlx", "exec", "x", "create", "init",
		"download", "restore", "publish", "login", "pull", "push", "require", "remove", "uninstall", "dist-upgrade",
		"full-upgrade", "refresh", "tap", "lock", "clone", "global":
		a.network(c.sp, "", name+" "+sub+" downloads or uploads packages over the network and may run their install scripts")
		if sub == "publish" || sub == "push" {
			a.find(risk.Destructive, c.sp, name+" "+sub+" publishes a package, which cannot be taken back")
		}
	}
	// Runners: npm exec/x, pnpm dlx/exec, yarn dlx/exec, bun x run a
	// package's program with the words after it.
	switch {
	case name == "npm" && (sub == "exec" || sub == "x"),
		name == "pnpm" && (sub == "dlx" || sub == "exec"),
		name == "yarn" && (sub == "dlx" || sub == "exec"),
		name == "bun" && sub == "x":
		if sub == "x" && name == "bun" {
			a.network(c.sp, quote(name+" "+sub), name+" "+sub+" downloads a package and runs it")
		}
		a.runner(c, c.args[subAt:])
	}
}
