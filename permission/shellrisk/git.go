package shellrisk

import (
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// gitGlobal reads git's options before the subcommand. It returns the index
// of the subcommand and the working directory git will use.
func (a *analyzer) gitGlobal(c *call) (int, string) {
	i, cwd, physical, elsewhere := a.gitGlobalOpts(c)
	if i < len(c.args) {
		// A subcommand runs, reading the configuration of the repository
		// holding the directory it runs in, or of one the options name.
		switch {
		case elsewhere || cwd == "":
			a.gitRepo("")
		case physical != "":
			a.gitRepo(physical)
		default:
			a.gitRepo(cwd)
		}
	}
	return i, cwd
}

// hasDotDot reports whether the slash-separated path p has a ".."
// component.
func hasDotDot(p string) bool {
	for p != "" {
		var c string
		c, p, _ = strings.Cut(p, "/")
		if c == ".." {
			return true
		}
	}
	return false
}

// gitRepo records a directory git runs in (Result.Repos).
func (a *analyzer) gitRepo(dir string) {
	if len(a.res.Repos) >= maxListed {
		a.tooMany()
		return
	}
	a.work += len(a.res.Repos)
	if slices.Contains(a.res.Repos, dir) {
		return
	}
	a.res.Repos = append(a.res.Repos, dir)
}

// gitGlobalOpts reads the options before the subcommand. cwd is where git
// runs, read lexically as the shell reads paths; physical is set when that
// differs from where git really goes: git -C changes directory as chdir(2)
// does, following a link before a ".." after it (git -C link/..), and so
// does a shell that moved with cd -P. physical is then the path as joined,
// "..", links and all, for the caller to resolve in order. elsewhere is set
// when the options make git find its repository otherwise than from the
// directory it runs in (--git-dir, --work-tree).
func (a *analyzer) gitGlobalOpts(c *call) (i int, cwd, physical string, elsewhere bool) {
	cwd = c.cwd
	raw := cwd
	if a.pwdRaw != "" && cwd == a.cwd {
		raw = a.pwdRaw
	}
	args := c.args
	i = 1
	for ; i < len(args); i++ {
		x := args[i]
		s := x.s
		if x.dyn {
			a.opaque(x.sp, "git is given an option built at run time")
			return len(args), cwd, "", true
		}
		if !strings.HasPrefix(s, "-") {
			break
		}
		next := func() (arg, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return arg{}, false
		}
		switch {
		case s == "-C":
			if d, ok := next(); ok {
				a.access(d, cwd, false, false)
				cwd = a.chdir(d, cwd)
				switch {
				case d.dyn || cwd == "":
					raw = ""
				case strings.HasPrefix(d.s, "/"):
					raw = d.s
				case raw != "":
					raw += "/" + d.s
				}
			}
		case s == "-c":
			if kv, ok := next(); ok {
				a.gitConfig(kv, kv.s, true)
			}
		case strings.HasPrefix(s, "-c") && len(s) > 2:
			a.gitConfig(x, s[2:], true)
		case strings.HasPrefix(s, "--config-env"):
			a.opaque(x.sp, "git --config-env sets configuration from the environment, which can make git run programs")
			kv := sub(x, strings.TrimPrefix(s, "--config-env="))
			if !strings.Contains(s, "=") {
				kv, _ = next()
			}
			a.gitConfigEnv(kv)
		case strings.HasPrefix(s, "--exec-path="):
			a.find(risk.Execute, x.sp, "git --exec-path makes git run its subcommands from another directory")
		case s == "--git-dir" || s == "--work-tree" || s == "--namespace" || s == "--super-prefix" || s == "--list-cmds":
			d, _ := next()
			if s == "--git-dir" || s == "--work-tree" {
				a.access(d, cwd, false, false)
				elsewhere = true
			}
			if s == "--work-tree" {
				cwd = a.chdir(d, cwd)
			}
		case strings.HasPrefix(s, "--git-dir="):
			a.access(arg{s: s[len("--git-dir="):], sp: x.sp}, cwd, false, false)
			elsewhere = true
		case strings.HasPrefix(s, "--work-tree="):
			d := arg{s: s[len("--work-tree="):], sp: x.sp}
			a.access(d, cwd, false, false)
			cwd = a.chdir(d, cwd)
			elsewhere = true
		}
	}
	if raw != "" && raw != cwd && hasDotDot(raw) {
		physical = raw
	}
	return i, cwd, physical, elsewhere
}

// gitConfig judges a configuration key=value given to git -c or set with
// git config. Many keys name programs git runs.
func (a *analyzer) gitConfig(x arg, kv string, transient bool) {
	key, value, _ := strings.Cut(kv, "=")
	key = strings.ToLower(key)
	how := "git -c " + quote(key)
	if !transient {
		how = "setting " + quote(key)
	}
	if x.dyn {
		a.opaque(x.sp, how+" with a value built at run time can make git run anything")
		return
	}
	switch {
	case strings.HasPrefix(key, "alias.") && strings.HasPrefix(strings.TrimSpace(value), "!"):
		a.find(risk.Execute, x.sp, how+" defines an alias that runs a shell command")
		a.reparse(strings.TrimSpace(value)[1:], x.sp, false)
		return
	case gitRunsKey(key):
		a.find(risk.Execute, x.sp, how+" makes git run the program "+quote(value))
		a.reparse(value, x.sp, false) // most of these values are shell commands
		return
	case strings.HasPrefix(key, "remote.") && strings.HasSuffix(key, ".push") && strings.HasPrefix(strings.TrimSpace(value), "+"),
		strings.HasPrefix(key, "remote.") && strings.HasSuffix(key, ".push") && strings.HasPrefix(strings.TrimSpace(value), ":"):
		a.find(risk.Destructive, x.sp, how+" sets the push refspec "+quote(value)+", which force-pushes or deletes remote branches")
	case strings.HasPrefix(key, "trace2.") && strings.HasSuffix(key, "target") && strings.HasPrefix(strings.TrimSpace(value), "/"):
		a.access(sub(x, strings.TrimSpace(value)), a.cwd, true, false)
		a.find(risk.Write, x.sp, how+" makes git append its trace to "+quote(value))
	case strings.HasPrefix(key, "remote.") && strings.HasSuffix(key, ".mirror") && gitTrue(value),
		key == "push.default" && strings.EqualFold(strings.TrimSpace(value), "mirror"):
		a.find(risk.Destructive, x.sp, how+" makes a push mirror every ref, deleting remote branches that are not local")
	}
	if transient {
		a.find(risk.Execute, x.sp, "git -c changes git's configuration for this command, which can change what it runs")
	}
}

// gitTrue reports a git boolean that is true ("" counts: -c key alone).
func gitTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on", "1":
		return true
	}
	return false
}

// gitRunsKey reports configuration keys whose value is a program git runs
// or a place it loads code from.
func gitRunsKey(key string) bool {
	switch key {
	case "core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "core.hookspath", "core.askpass",
		"core.gitproxy", "core.worktree", "diff.external", "sequence.editor", "credential.helper",
		"gpg.program", "gpg.ssh.program", "gpg.x509.program", "interactive.difffilter", "pager.log", "pager.diff",
		"protocol.allow", "protocol.ext.allow", "uploadpack.packobjectshook", "include.path", "web.browser",
		"http.proxy", "https.proxy", "remote.origin.uploadpack", "remote.origin.receivepack", "ssh.variant",
		"init.templatedir", "safe.directory", "receive.procreceiverefs":
		return true
	}
	for _, suffix := range [...]string{".command", ".textconv", ".clean", ".smudge", ".process", ".cmd",
		".uploadpack", ".receivepack", ".proxy", ".helper", ".tool", ".path", ".program", ".sshcommand"} {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return strings.HasPrefix(key, "pager.") || strings.HasPrefix(key, "includeif.") || strings.HasPrefix(key, "hook.")
}

// gopt reports whether s spells the long option full, accepting the unique
// prefixes git's option parser accepts (at least min bytes, dashes included).
func gopt(s, full string, min int) bool {
	if !strings.HasPrefix(s, "--") {
		return false
	}
	return longOpt(s, full, min)
}

// gitShort reports whether a short-option cluster like -fdx holds letter.
func gitShort(s string, letter byte) bool {
	return len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.IndexByte(s[1:], letter) >= 0
}

// ruleGit judges git by its subcommand and options.
func ruleGit(a *analyzer, c *call) {
	i, cwd := a.gitGlobal(c)
	if i >= len(c.args) {
		return
	}
	sub := c.args[i].s
	rest := c.args[i+1:]
	g := gitCall{a: a, c: c, sub: sub, rest: rest, cwd: cwd}
	for j := 0; j < len(rest); j++ {
		x := rest[j]
		if x.dyn && (sub == "push" || sub == "reset" || sub == "clean" || sub == "branch" || sub == "checkout" || sub == "config") {
			a.opaque(x.sp, "git "+sub+" is given an argument built at run time, which could be an option that destroys work")
		}
		switch {
		case gopt(x.s, "--output", 5), x.s == "-o" && (sub == "diff" || sub == "log" || sub == "show" || sub == "format-patch" || sub == "archive"):
			// The value is the file, given with "=" or as the next word.
			if v, next, ok := optValue(rest, j); ok {
				a.access(v, cwd, true, false)
				if next {
					j++
				}
			}
			a.find(risk.Write, x.sp, "git "+sub+" --output writes a file")
		case sub != "rebase" && (gopt(x.s, "--upload-pack", 4) || gopt(x.s, "--receive-pack", 4) || x.s == "--exec" ||
			strings.HasPrefix(x.s, "--exec=") || x.s == "-u" && sub == "clone" || strings.HasPrefix(x.s, "-u") && sub == "clone" && len(x.s) > 2):
			a.find(risk.Execute, x.sp, "git "+sub+" "+x.s+" runs a program on the remote side or locally")
			v, next, ok := optValue(rest, j)
			if x.s[1] != '-' && len(x.s) > 2 {
				v, next, ok = arg{s: x.s[2:], dyn: x.dyn, sp: x.sp, w: x.w}, false, true
			}
			if ok {
				a.runValue(v, "git "+sub+" "+x.s, true) // the repository's path is added
			}
			if next {
				j++
			}
		case sub == "clone" && (x.s == "-c" || gopt(x.s, "--config", 5) || strings.HasPrefix(x.s, "-c") && len(x.s) > 2):
			a.find(risk.Execute, x.sp, "git "+sub+" "+x.s+" can make git run another program")
			v, next, ok := optValue(rest, j)
			if x.s[1] != '-' {
				v, next, ok = optValueShort(rest, j)
			}
			if ok {
				a.gitConfig(v, v.s, true)
			}
			if next {
				j++
			}
		case sub == "difftool" && (x.s == "-x" || strings.HasPrefix(x.s, "--extcmd")):
			a.find(risk.Execute, x.sp, "git difftool "+x.s+" runs the given command on each changed file")
			if v, next, ok := optValue(rest, j); ok {
				a.runValue(v, "git difftool --extcmd", true) // the files compared are added
				if next {
					j++
				}
			}
		case sub == "grep" && (strings.HasPrefix(x.s, "-O") || gopt(x.s, "--open-files-in-pager", 6)):
			a.find(risk.Execute, x.sp, "git grep "+x.s+" opens the matching files with a pager program")
			// The value is optional and must be attached: -Oless, --open-files-in-pager=less.
			v, attached := arg{s: x.s[min(2, len(x.s)):], dyn: x.dyn, sp: x.sp, w: x.w}, len(x.s) > 2 && x.s[1] == 'O'
			if _, after, found := strings.Cut(x.s, "="); found && x.s[1] == '-' {
				v.s, attached = after, true
			}
			if attached {
				a.runValue(v, "git grep -O", true) // the matching files are added
			}
		case gopt(x.s, "--ext-diff", 5), strings.HasPrefix(x.s, "--extcmd"), gopt(x.s, "--template", 5) && sub == "clone":
			a.find(risk.Execute, x.sp, "git "+sub+" "+x.s+" can make git run another program")
		case strings.HasPrefix(x.s, "ext::") || strings.HasPrefix(x.s, "fd::"):
			a.find(risk.Execute, x.sp, "the git URL "+quote(x.s)+" runs a command instead of connecting to a server")
			a.res.Opaque = true
		}
	}
	g.judge()
}

// optValueShort returns the value of a short option: the rest of the word
// after the letter (-ckey=value), else the next word.
func optValueShort(args []arg, i int) (v arg, next, ok bool) {
	x := args[i]
	if len(x.s) > 2 {
		return arg{s: x.s[2:], dyn: x.dyn, sp: x.sp, w: x.w}, false, true
	}
	if i+1 < len(args) {
		return args[i+1], true, true
	}
	return arg{}, false, false
}

type gitCall struct {
	a    *analyzer
	c    *call
	sub  string
	rest []arg
	cwd  string
}

func (g gitCall) destroy(sp risk.Span, why string) { g.a.find(risk.Destructive, sp, why) }
func (g gitCall) write(why string)                 { g.a.find(risk.Write, g.c.sp, why) }
func (g gitCall) net() {
	g.a.network(g.c.sp, "git "+g.sub, "git "+g.sub+" talks to a remote repository over the network")
}

// gitContent is what a git diff, show, log or whatchanged prints of the
// files git holds.
type gitContent int

const (
	// contentNone: names, statistics and messages only.
	contentNone gitContent = iota
	// contentIndex: the working tree's changes against the index (git
	// diff with no revision): files the index tracks.
	contentIndex
	// contentCommitted: files as some revision, the staged index, a
	// submodule or an object id holds them, or a search of them (-G, -S).
	contentCommitted
)

// grepsCommitted reports whether git grep searches more than the working
// tree below cwd: --cached, an operand that may be a revision (any beyond
// the pattern before --), or pathspec magic (":/" is the whole repository).
func (g gitCall) grepsCommitted() bool {
	o, ok := gitTables.get()["grep"]
	if !ok {
		return true
	}
	os, ops, tail := roScan(o, append([]arg{{s: "grep"}}, g.rest...))
	patterns := 0
	for _, op := range os {
		switch op.name {
		case "--cached", "--untracked", "--no-index", "--recurse-submodules":
			return true
		case "-e", "--regexp", "-f", "--file":
			patterns++
		}
	}
	if patterns == 0 && len(ops) > 0 {
		ops = ops[1:] // the pattern
	}
	if len(ops) > 0 {
		return true
	}
	for _, x := range append(ops, tail...) {
		if strings.HasPrefix(x.s, ":") {
			return true
		}
	}
	return false
}

// revPath splits a REV:path operand where git does: at the first colon
// outside braces, so that in HEAD^{/fix: x}:.aws/credentials the path is
// .aws/credentials, not x}:.aws/credentials (get_oid_with_context_1). An
// operand starting with a colon (:path, :N:path) splits at it, but for
// :/TEXT, which names a commit by its message and no path.
func revPath(s string) (rev, path string, ok bool) {
	if strings.HasPrefix(s, ":/") {
		return s, "", false // :/TEXT: a commit, by its message
	}
	if strings.HasPrefix(s, ":") {
		// :N:path is stage N (0 to 3) of path in the index.
		if len(s) >= 3 && s[1] >= '0' && s[1] <= '3' && s[2] == ':' {
			return s[:3], s[3:], true
		}
		return "", s[1:], true
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case c == ':' && depth == 0:
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// content judges what the command prints, reading its options with the
// subcommand's complete table, so that an option's value (--until --stat)
// is not taken for an option.
func (g gitCall) content() gitContent {
	switch g.sub {
	case "show":
		// git show prints commits' patches, and a blob by its id
		// whatever its options (-s and --stat do not apply to blobs).
		// REV:path is no exception: the path may be a gitlink in REV's
		// tree, for which git prints the commit it names, patch and all,
		// and :/TEXT names the newest commit whose message matches TEXT;
		// what REV's tree holds is not read here.
		return contentCommitted
	case "diff", "log":
	default:
		return contentCommitted // whatchanged, with no table here
	}
	o, ok := gitTables.get()[g.sub]
	if !ok {
		return contentCommitted
	}
	args := append([]arg{{s: g.sub}}, g.rest...)
	os, ops, tail := roScan(o, args)
	patch, only, committed, oracle := false, false, false, false
	for _, op := range os {
		n := op.name
		switch {
		case op.unknown:
			oracle = true // an option the table does not list: anything
		case n == "-p" || n == "-u" || n == "-U" || n == "-W" || n == "-L" || n == "-c" || n == "-m" ||
			strings.HasPrefix(n, "--patch") || n == "--unified" || n == "--cc" || n == "--binary" || n == "--check" ||
			strings.HasPrefix(n, "--word-diff") || n == "--color-words" || n == "--function-context" ||
			n == "--ext-diff" || n == "--textconv" || n == "--dd" || n == "--line-range":
			patch = true
		case n == "--diff-merges":
			if v := op.val.s; v != "off" && v != "none" {
				patch = true
			}
		case n == "--remerge-diff":
			patch, committed = true, true
		case n == "-G" || n == "-S" || strings.HasPrefix(n, "--pickaxe") || n == "--find-object":
			oracle = true // a search of the files' content answers what they hold
		case strings.HasPrefix(n, "--submodule"):
			committed = true // a submodule's patches: its index is not read
		case g.sub == "diff" && (n == "--cached" || n == "--staged" || n == "--merge-base" || n == "--no-index"):
			committed = true
		case n == "-s" || n == "--no-patch" || strings.HasPrefix(n, "--stat") || n == "--numstat" || n == "--shortstat" ||
			n == "--name-only" || n == "--name-status" || strings.HasPrefix(n, "--dirstat") || n == "--summary" ||
			n == "--raw" || n == "--quiet" || n == "--compact-summary":
			only = true
		}
	}
	for _, x := range tail {
		if strings.HasPrefix(x.s, ":") {
			committed = true // pathspec magic (:/ is the whole repository)
		}
	}
	prints := patch
	if g.sub == "diff" {
		prints = patch || !only
		if len(ops) > 0 {
			committed = true // an operand may be a revision
		}
	}
	switch {
	case oracle:
		return contentCommitted
	case !prints:
		return contentNone
	case committed || g.sub == "log":
		return contentCommitted
	}
	return contentIndex
}

func (g gitCall) has(pred func(s string) bool) (arg, bool) {
	for _, x := range g.rest {
		if x.s == "--" {
			break
		}
		if pred(x.s) {
			return x, true
		}
	}
	return arg{}, false
}

func (g gitCall) judge() {
	a, c := g.a, g.c
	switch g.sub {
	case "push":
		g.net()
		g.push()
	case "fetch", "pull", "clone", "ls-remote", "send-email", "request-pull":
		g.net()
		if g.sub == "pull" {
			g.write("git pull merges remote changes into the working tree")
		}
	case "submodule":
		if len(g.rest) > 0 {
			switch g.rest[0].s {
			case "update", "add", "sync", "init":
				g.net()
			case "foreach":
				g.net()
				a.shellWords(c, g.rest[1:])
			case "deinit":
				g.destroy(c.sp, "git submodule deinit removes the submodule's working tree")
			}
		}
	case "remote":
		if len(g.rest) > 0 && (g.rest[0].s == "update" || g.rest[0].s == "prune" || g.rest[0].s == "show") {
			g.net()
		}
	case "archive":
		if _, ok := g.has(func(s string) bool { return gopt(s, "--remote", 5) }); ok {
			g.net()
		}
	case "reset":
		if x, ok := g.has(func(s string) bool { return gopt(s, "--hard", 4) || gopt(s, "--merge", 4) || gopt(s, "--keep", 4) }); ok {
			g.destroy(x.sp, "git reset "+x.s+" throws away uncommitted changes in the working tree")
		}
	case "clean":
		if _, dry := g.has(func(s string) bool { return gitShort(s, 'n') || gopt(s, "--dry-run", 4) }); !dry {
			g.destroy(c.sp, "git clean deletes untracked files, which are in no commit and cannot be recovered")
		}
	case "branch":
		force := false
		del := false
		for _, x := range g.rest {
			s := x.s
			if gitShort(s, 'D') || gitShort(s, 'M') || gitShort(s, 'C') || gitShort(s, 'f') || gopt(s, "--force", 4) {
				force = true
			}
			if gitShort(s, 'd') || gitShort(s, 'D') || gopt(s, "--delete", 4) {
				del = true
			}
		}
		switch {
		case force:
			g.destroy(c.sp, "git branch with force deletes or overwrites a branch even if its commits are not merged")
		case del:
			g.write("git branch -d deletes a branch")
		}
	case "checkout":
		g.checkout()
	case "switch":
		if x, ok := g.has(func(s string) bool {
			return gitShort(s, 'f') || gopt(s, "--force", 4) || gopt(s, "--discard-changes", 4)
		}); ok {
			g.destroy(x.sp, "git switch "+x.s+" throws away uncommitted changes")
		} else {
			g.write("git switch changes the files in the working tree")
		}
	case "restore":
		staged, worktree := false, false
		for _, x := range g.rest {
			if gitShort(x.s, 'S') || gopt(x.s, "--staged", 5) {
				staged = true
			}
			if gitShort(x.s, 'W') || gopt(x.s, "--worktree", 4) {
				worktree = true
			}
		}
		if staged && !worktree {
			g.write("git restore --staged changes the index")
		} else {
			g.destroy(c.sp, "git restore overwrites files in the working tree, throwing away uncommitted changes")
		}
	case "stash":
		if len(g.rest) > 0 && (g.rest[0].s == "drop" || g.rest[0].s == "clear") {
			g.destroy(c.sp, "git stash "+g.rest[0].s+" deletes stashed changes")
		} else {
			g.write("git stash changes the working tree")
		}
	case "filter-branch", "filter-repo":
		g.destroy(c.sp, "git "+g.sub+" rewrites the history of the repository")
	case "reflog":
		if len(g.rest) > 0 && (g.rest[0].s == "expire" || g.rest[0].s == "delete") {
			g.destroy(c.sp, "git reflog "+g.rest[0].s+" deletes the records needed to recover lost commits")
		}
	case "gc", "prune":
		if x, ok := g.has(func(s string) bool { return strings.HasPrefix(s, "--prune") || gopt(s, "--aggressive", 4) }); ok || g.sub == "prune" {
			if !ok {
				x = g.c.args[0]
				x.sp = c.sp
			}
			g.destroy(x.sp, "git "+g.sub+" deletes unreachable commits for good")
		}
	case "update-ref":
		if _, ok := g.has(func(s string) bool { return s == "-d" || gopt(s, "--stdin", 4) }); ok {
			g.destroy(c.sp, "git update-ref can delete or move refs, losing commits")
		} else {
			g.write("git update-ref moves a ref")
		}
	case "worktree":
		if len(g.rest) > 0 && (g.rest[0].s == "remove" || g.rest[0].s == "prune") {
			g.destroy(c.sp, "git worktree "+g.rest[0].s+" deletes a working tree")
		}
	case "rm":
		if _, cached := g.has(func(s string) bool { return gopt(s, "--cached", 4) }); cached {
			g.write("git rm --cached removes files from the index")
		} else {
			g.destroy(c.sp, "git rm deletes files from the working tree")
		}
	case "rebase":
		for i, x := range g.rest {
			if x.s == "-x" || x.s == "--exec" || strings.HasPrefix(x.s, "--exec=") {
				a.find(risk.Execute, x.sp, "git rebase --exec runs a shell command after each commit")
				code := arg{s: strings.TrimPrefix(x.s, "--exec="), sp: x.sp, dyn: x.dyn}
				if !strings.HasPrefix(x.s, "--exec=") && i+1 < len(g.rest) {
					code = g.rest[i+1]
				}
				a.shellWords(c, []arg{code})
			}
		}
		g.write("git rebase rewrites commits of the current branch")
	case "bisect":
		if len(g.rest) > 1 && g.rest[0].s == "run" {
			a.inner(c, g.rest[1:], g.cwd, false)
		}
	case "config":
		g.config()
	case "credential", "credential-store", "credential-cache":
		a.credSource(c.sp, "git credentials")
		a.find(risk.Credential, c.sp, "git "+g.sub+" reads or stores stored passwords and tokens")
	case "daemon", "instaweb", "http-backend":
		a.network(c.sp, "git "+g.sub, "git "+g.sub+" serves the repository over the network")
	case "difftool", "mergetool", "hook":
		a.find(risk.Execute, c.sp, "git "+g.sub+" runs a configured external program")
	case "diff", "show", "log", "cat-file", "blame", "annotate", "grep", "whatchanged", "format-patch":
		g.reads()
		if g.sub == "grep" {
			// git grep searches the files of the working tree below cwd;
			// given a revision, --cached, or a pathspec reaching out of
			// cwd (:/), what git holds committed.
			a.accessDeep(arg{s: ".", sp: c.sp}, g.cwd)
			// It also reads the index's copy of a file the index marks
			// assume-unchanged (missing on disk, a tarball's index may
			// hold one), and with submodule.recurse in any configuration
			// the submodules' files too: what the index tracks is judged
			// as for git diff, submodules included.
			a.accessTracked(arg{s: ".", sp: c.sp}, g.cwd, false)
			if g.grepsCommitted() {
				a.accessTracked(arg{s: ".", sp: c.sp}, g.cwd, true)
			}
		}
		switch g.sub {
		case "diff", "show", "log", "whatchanged":
			switch g.content() {
			case contentIndex:
				// The changes of whatever files the index tracks,
				// anywhere in the repository, a tracked .env too.
				a.accessTracked(arg{s: ".", sp: c.sp}, g.cwd, false)
			case contentCommitted:
				a.accessTracked(arg{s: ".", sp: c.sp}, g.cwd, true)
			}
		}
	case "commit", "merge", "cherry-pick", "revert", "am", "apply", "add", "mv", "tag", "notes", "init", "replace", "mktag", "commit-tree", "read-tree", "checkout-index", "update-index", "sparse-checkout":
		if g.sub == "tag" && gitTagLists(g.rest) {
			break // git tag, git tag -l PATTERN: a listing
		}
		g.write("git " + g.sub + " changes the repository or working tree")
		if g.sub == "apply" || g.sub == "am" {
			g.patchInput()
		}
		if g.sub == "init" {
			if x, ok := g.has(func(s string) bool { return gopt(s, "--template", 3) }); ok {
				g.a.opaque(x.sp, "git init --template copies the hooks of the directory it names into .git/hooks, which run with the next git command; no rule allows it")
			}
		}
		if g.sub == "merge" {
			g.mergeStrategy()
		}
		if g.sub == "tag" || g.sub == "replace" || g.sub == "notes" {
			if x, ok := g.has(func(s string) bool { return gitShort(s, 'f') || gopt(s, "--force", 4) }); ok {
				g.destroy(x.sp, "git "+g.sub+" --force overwrites existing refs")
			}
		}
	}
}

// mergeStrategy judges git merge -s X: a strategy git does not ship runs
// the program git-merge-X found on PATH.
func (g gitCall) mergeStrategy() {
	for i, x := range g.rest {
		if x.s == "--" {
			return
		}
		var v string
		switch {
		case x.s == "-s" || gopt(x.s, "--strategy", 8) && !strings.Contains(x.s, "="):
			if i+1 >= len(g.rest) {
				return
			}
			v = g.rest[i+1].s
			if g.rest[i+1].dyn {
				v = ""
			}
		case strings.HasPrefix(x.s, "-s") && !strings.HasPrefix(x.s, "--"):
			v = x.s[2:]
		case strings.HasPrefix(x.s, "--") && strings.Contains(x.s, "="):
			name, val, _ := strings.Cut(x.s, "=")
			if !gopt(name, "--strategy", 8) || strings.HasPrefix(name, "--strategy-") {
				continue
			}
			v = val
		default:
			continue
		}
		switch v {
		case "ort", "recursive", "resolve", "octopus", "ours", "subtree":
		default:
			g.a.opaque(x.sp, "git merge -s "+quote(v)+" runs the program git-merge-"+v+" from PATH; no rule allows a strategy git does not ship")
			return
		}
	}
}

// patchInput records the files a patch on standard input writes: git apply
// <<EOF can plant a hook as well as any write_file can.
func (g gitCall) patchInput() {
	strip, dir := 1, ""
	apply, checkOnly := false, false
	for _, x := range g.rest {
		switch {
		case strings.HasPrefix(x.s, "-p") && isDigits(x.s[2:]):
			strip = int(x.s[2] - '0')
			if len(x.s) > 3 {
				strip = 9 // more components than any patch here has
			}
		case strings.HasPrefix(x.s, "--directory="):
			dir = strings.TrimSuffix(x.s[len("--directory="):], "/") + "/"
		case x.s == "--check" || x.s == "--stat" || x.s == "--numstat" || x.s == "--summary":
			checkOnly = true
		case x.s == "--apply":
			apply = true
		}
	}
	if checkOnly && !apply {
		return
	}
	cwd := g.cwd
	if dir != "" {
		cwd = resolve(dir, cwd)
	}
	g.a.patchTargets(g.c, cwd, strip)
}

// reads records the files git reads for show, diff, log and the like: paths
// after --, the path of REV:path, both operands of diff --no-index, and
// every other operand, which may name a path.
// Committed files are read from the repository, where a secret may have been
// committed, so they count as reads of the path in the working tree.
func (g gitCall) reads() {
	noIndex := false
	after := false
	for _, x := range g.rest {
		switch {
		case x.s == "--":
			after = true
		case x.s == "--no-index":
			noIndex = true
		case after || noIndex && !strings.HasPrefix(x.s, "-"):
			g.a.access(x, g.cwd, false, false)
		case !strings.HasPrefix(x.s, "-") && strings.Contains(x.s, ":"):
			_, p, ok := revPath(x.s)
			if !ok {
				// Every colon inside braces (HEAD^{/a:b}): a revision;
				// judged as a path too, as any other operand.
				g.a.access(x, g.cwd, false, false)
			} else if p != "" && !strings.Contains(p, "://") {
				y := x
				y.s = strings.TrimPrefix(p, "./")
				g.a.access(y, g.cwd, false, false)
			}
		case !strings.HasPrefix(x.s, "-"):
			// Without "--" an operand is a revision or a path, as the
			// repository decides (git blame .env, git log -p id_rsa): judge
			// it as a path too. A revision read as a file inside the
			// working directory changes nothing.
			g.a.access(x, g.cwd, false, false)
		}
	}
}

// push: forcing, deleting and mirroring rewrite or remove remote history.
func (g gitCall) push() {
	_, ops := g.a.scan(opts{short: "o", long: []string{"push-option", "repo", "receive-pack", "exec", "signed", "recurse-submodules"}}, append([]arg{{}}, g.rest...))
	for _, x := range g.rest {
		s := x.s
		if s == "--" {
			break
		}
		switch {
		case gitShort(s, 'f') && !strings.HasPrefix(s, "-o"), gopt(s, "--force", 4), gopt(s, "--force-with-lease", 4), gopt(s, "--force-if-includes", 4):
			g.destroy(x.sp, "git push "+s+" overwrites the remote branch's history")
		case gitShort(s, 'd') && !strings.HasPrefix(s, "-o"), gopt(s, "--delete", 4):
			g.destroy(x.sp, "git push "+s+" deletes remote branches or tags")
		case gopt(s, "--mirror", 4), gopt(s, "--prune", 4):
			g.destroy(x.sp, "git push "+s+" deletes remote refs that do not exist locally")
		}
	}
	for i, x := range ops {
		if i == 0 || x.dyn {
			continue // the remote
		}
		switch {
		case strings.HasPrefix(x.s, "+"):
			g.destroy(x.sp, "the refspec "+quote(x.s)+" force-pushes, overwriting the remote branch's history")
		case strings.HasPrefix(x.s, ":"):
			g.destroy(x.sp, "the refspec "+quote(x.s)+" deletes the remote branch")
		}
	}
}

// checkout: restoring paths overwrites uncommitted changes; switching
// branches only changes files git can restore.
func (g gitCall) checkout() {
	a, c := g.a, g.c
	if x, ok := g.has(func(s string) bool {
		return gitShort(s, 'f') || gitShort(s, 'B') || gopt(s, "--force", 4) || gopt(s, "--patch", 4) ||
			gopt(s, "--theirs", 4) || gopt(s, "--ours", 4) || gopt(s, "--pathspec-from-file", 4)
	}); ok {
		g.destroy(x.sp, "git checkout "+x.s+" overwrites files or a branch, throwing away uncommitted changes")
		return
	}
	cos, ops := a.scan(opts{short: "bB", long: []string{"orphan", "conflict", "pathspec-from-file"}}, append([]arg{{}}, g.rest...))
	dashdash := false
	for _, x := range g.rest {
		if x.s == "--" {
			dashdash = true
		}
	}
	if dashdash || len(ops) > 1 || (len(ops) == 1 && looksLikePath(ops[0].s)) {
		for _, x := range ops {
			a.access(x, g.cwd, true, false)
		}
		g.destroy(c.sp, "git checkout of paths overwrites them with the committed version, throwing away uncommitted changes")
		return
	}
	if len(ops) == 1 && !has(cos, "-b", "-B", "--orphan") && ops[0].s != "-" {
		// git checkout X switches to the branch X, or, when X is a file or
		// directory and no branch, throws away its uncommitted changes:
		// only the repository can say which.
		x := ops[0]
		a.access(x, g.cwd, true, false)
		a.opaque(x.sp, "git checkout "+quote(x.s)+" switches branches, or overwrites the file or directory of that name and throws away its uncommitted changes; which one depends on the repository (git switch names a branch unambiguously)")
	}
	g.write("git checkout changes the files in the working tree")
}

func looksLikePath(s string) bool {
	if s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "/") || strings.ContainsAny(s, "*?[") {
		return true
	}
	base := s[strings.LastIndexByte(s, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	return dot > 0 && dot < len(base)-1 && !strings.ContainsAny(base[dot:], "0123456789")
}

// config: setting keys that name programs is execute.
func (g gitCall) config() {
	var ops []arg
	for _, x := range g.rest {
		if strings.HasPrefix(x.s, "-") {
			switch x.s {
			case "--get", "--get-all", "--get-regexp", "-l", "--list", "--get-urlmatch", "--show-origin", "--name-only":
				return
			}
			continue
		}
		ops = append(ops, x)
	}
	if len(ops) > 0 && (ops[0].s == "get" || ops[0].s == "list") {
		return
	}
	if len(ops) > 0 && (ops[0].s == "set" || ops[0].s == "unset") {
		ops = ops[1:]
	}
	if len(ops) >= 2 {
		kv := ops[0]
		kv.s = ops[0].s + "=" + ops[1].s
		kv.dyn = ops[0].dyn || ops[1].dyn
		g.a.gitConfig(kv, kv.s, false)
		g.write("git config changes git's configuration")
	}
}

// gitConfigEnv judges --config-env=KEY=ENVVAR: the value is the variable's,
// judged like -c KEY=VALUE when this command set it statically (the call
// stays Opaque: the variable may come from the environment).
func (a *analyzer) gitConfigEnv(kv arg) {
	key, env, ok := strings.Cut(kv.s, "=")
	if !ok || kv.dyn {
		return
	}
	if gitRunsKey(strings.ToLower(key)) {
		a.find(risk.Execute, kv.sp, "git --config-env "+quote(key)+" makes git run the program held in $"+env)
	}
	if v, known := a.lookup(env); known {
		a.gitConfig(kv, key+"="+v, true)
	}
}

// gitEnv judges the variables git reads its configuration and trace
// targets from. GIT_CONFIG_PARAMETERS holds -c settings ('key=value' or
// 'key'='value', shell-quoted), judged as -c is; GIT_CONFIG_KEY_n and
// GIT_CONFIG_VALUE_n are one setting split in two, so a value is judged
// as a command git may run (its key may be core.pager). GIT_TRACE* set
// to an absolute path make git append to that file.
func (a *analyzer) gitEnv(name string, x arg, sp risk.Span) {
	if x.dyn {
		a.opaque(sp, name+" is set to a value built at run time")
		return
	}
	v := strings.TrimSpace(x.s)
	switch {
	case name == "GIT_CONFIG_PARAMETERS":
		items, ok := gitConfigParams(v)
		if !ok {
			a.opaque(sp, "GIT_CONFIG_PARAMETERS holds "+quote(v)+", which the analyser cannot split into settings")
			return
		}
		for _, kv := range items {
			a.gitConfig(sub(x, kv), kv, true)
		}
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"):
		if gitRunsKey(strings.ToLower(v)) {
			a.find(risk.Execute, sp, name+" names "+quote(v)+", so the matching GIT_CONFIG_VALUE is a program git runs")
		}
	case strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
		if v == "" {
			return
		}
		a.find(risk.Execute, sp, name+" may be the program of a key such as core.pager, so it is judged as a command")
		a.runValue(x, name, false)
	case strings.HasPrefix(name, "GIT_TRACE"):
		switch {
		case v == "" || isDigits(v) || gitTrue(v) || strings.EqualFold(v, "false") || strings.EqualFold(v, "no") || strings.EqualFold(v, "off"):
			// Off, standard error or an open descriptor.
		case strings.HasPrefix(v, "/"):
			a.access(x, a.cwd, true, false)
			a.find(risk.Write, sp, "setting "+name+" makes git append its trace, which holds the commands and arguments it runs, to "+quote(v))
		default:
			a.opaque(sp, "setting "+name+" to "+quote(v)+" sends git's trace somewhere the analyser does not know (a socket, a directory)")
		}
	}
}

// gitConfigParams splits GIT_CONFIG_PARAMETERS into key=value settings.
// Git writes each as one shell-single-quoted word, or as 'key'='value'.
func gitConfigParams(s string) ([]string, bool) {
	var out []string
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
		if i == len(s) {
			return out, true
		}
		var b strings.Builder
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' {
			switch {
			case s[i] == '\'':
				j := strings.IndexByte(s[i+1:], '\'')
				if j < 0 {
					return nil, false
				}
				b.WriteString(s[i+1 : i+1+j])
				i += j + 2
			case s[i] == '\\' && i+1 < len(s):
				b.WriteByte(s[i+1])
				i += 2
			case s[i] == '=':
				b.WriteByte('=')
				i++
			default:
				return nil, false
			}
		}
		out = append(out, b.String())
	}
}
