package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/permission/shellrisk"
	"github.com/custom-agent/custom-agent/secrets"
	"github.com/custom-agent/custom-agent/support/resolve"
)

// SessionRuleFor proposes the rule an "allow for this session" answer to a
// call of tool t with args would create, to be shown to the user before it
// is made (and then given to AddSession). It reports false when no rule
// should be offered: for a destructive call; for a shell command that
// cannot be judged statically, builds its program at run time, or runs
// several programs; for a path outside the working directory or a
// credential or protected location; for a call whose arguments hold what
// looks like a secret (package secrets), and for a rule that would hold
// one, since a rule is logged, shown and written in plain text; and
// whenever the rule, once made, would not allow this very call.
//
// The shapes: for a shell command, its program and subcommand ("npm test",
// "go test", "git status"), with the program's global options before the
// subcommand as written ("git -C . log", "docker --context x ps"), read
// with the shell analyser's option tables (shellrisk.Subcommand), for the
// programs in narrow (git, npm, go, cargo, docker …), whose rule's breadth
// must not follow how the model spelled the call; the program alone, or
// with its first word, only for plainTools (ls, grep …); never a rule for
// an interpreter such as bash or python alone. Only a known local
// subcommand is proposed as a prefix, and any other call (git push, npm
// install, make test, curl URL, a call judged network, options that cannot
// be read with certainty) gets a rule for that exact command (its words as the command
// matcher and the whole command as an args matcher: permission.ExactCommand),
// offered only for a call of one simple command; for a
// file tool, a glob of the file's directory relative to the working
// directory ("src/**"), or the file itself at the top; for an HTTP tool,
// the URL's host; for a tool whose arguments the engine does not analyse
// (an MCP tool), the tool itself.
func (s *Store) SessionRuleFor(t permission.ToolInfo, args map[string]any) (permission.Rule, bool) {
	return s.ruleFor(permission.LevelSession, t, args)
}

// ProjectRuleFor proposes the rule an "always allow in this project" answer
// would write (given to AddProject). The shapes and refusals are those of
// SessionRuleFor.
func (s *Store) ProjectRuleFor(t permission.ToolInfo, args map[string]any) (permission.Rule, bool) {
	return s.ruleFor(permission.LevelProject, t, args)
}

func (s *Store) ruleFor(level permission.RuleLevel, t permission.ToolInfo, args map[string]any) (permission.Rule, bool) {
	if !secrets.CollectValue(args).Empty() {
		return permission.Rule{}, false
	}
	env := s.env
	req := permission.Request{Tool: t, Args: args, Cwd: env.Cwd, Home: env.Home, ConfigHome: env.ConfigHome}
	req.Resolved = resolve.Map(permission.PathsToResolve(req))
	var eng permission.Engine
	d := eng.Check(req)
	if d.RiskAtDecision >= risk.Destructive {
		return permission.Rule{}, false
	}
	// A call judged network (or above) gets a rule for that exact command
	// only: the list of network programs in narrow is never complete
	// (sendmail, dig, websocat …), and their bare name or first word
	// would let the model send anything anywhere.
	onlyExact := d.RiskAtDecision >= risk.Network
	r := permission.Rule{Level: level, Tool: t.Name, Decision: permission.Allow}
	var what string
	switch {
	case t.CommandArg != "":
		cmd, ok := args[t.CommandArg].(string)
		if !ok {
			return r, false
		}
		var exact bool
		if r.Command, exact, ok = commandPrefix(cmd, env, onlyExact); !ok {
			return r, false
		}
		what = r.Command
		if exact {
			// Only this command, word for word: the command matcher
			// alone would also match it with more words after it
			// (curl URL --data @file URL2).
			r.Args = map[string]string{t.CommandArg: permission.QuoteGlob(cmd)}
			what = exactID(cmd, r.Command)
		}
	case t.URLArg != "":
		raw, ok := args[t.URLArg].(string)
		if !ok {
			return r, false
		}
		if r.URL, ok = urlHost(raw); !ok {
			return r, false
		}
		what = r.URL
	case len(t.PathArgs) > 0 || t.PatchArg != "":
		var ok bool
		if r.Path, ok = pathGlob(t, args, env); !ok {
			return r, false
		}
		what = strings.TrimSuffix(r.Path, "/**")
	}
	r.ID = slug(t.Name, what)
	if ruleHoldsSecret(FromPermission(r)) {
		return permission.Rule{}, false
	}
	pol, err := permission.Compile([]permission.Rule{r})
	if err != nil {
		return r, false
	}
	req.Policy = pol
	if d := eng.Check(req); d.Decision != permission.Allow || d.Rule == nil || d.Rule.ID != r.ID {
		return r, false
	}
	return r, true
}

// ruleHoldsSecret reports whether any field of a rule holds what looks
// like a secret: a shell word the parser joined from quoted pieces
// (sk-proj-"…") shows none in the arguments, but would in the rule.
func ruleHoldsSecret(r Rule) bool {
	raw, err := json.Marshal(r)
	return err != nil || secrets.Holds(raw)
}

// bareless are programs whose name alone allows running anything: they
// are only proposed with a subcommand or script (an interpreter's script:
// "python tools/gen.py"). The package managers, network tools and
// container CLIs are in narrow.
var bareless = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true,
	"python": true, "python2": true, "python3": true, "node": true,
	"perl": true, "ruby": true, "php": true, "lua": true, "env": true, "sudo": true, "doas": true,
	"xargs": true, "eval": true, "exec": true, "command": true, "nohup": true, "nice": true,
	"timeout": true, "time": true, "watch": true,
}

// plainTools are the programs proposed by their name alone ("ls -la"
// proposes "ls"): tools that read, compare, print or move files and run
// nothing they are given. Options of theirs that do run or write
// elsewhere are judged by the shell analyser on every call.
var plainTools = func() map[string]bool {
	m := map[string]bool{}
	// Not here, though they look plain: xxd (-r writes its second
	// operand), yq (-i, load(), env()), jq (env), date (-f and -r read
	// any file), chmod (--reference), ln (a link out of the project).
	for _, p := range strings.Fields("ls cat head tail wc grep egrep fgrep rg ag tree du df stat file diff cmp " +
		"sort uniq cut tr paste join comm fold fmt column nl od hexdump strings echo printf pwd which " +
		"basename dirname realpath readlink seq true false touch mkdir rmdir cp mv tee " +
		"md5sum sha1sum sha256sum sha512sum b2sum cksum base64") {
		m[p] = true
	}
	return m
}()

// narrow are programs whose name alone, or with a subcommand of the
// model's choosing, would allow talking to the network, installing
// packages or running code fetched or named at will (git push, npm
// install, go run, curl --data @file). For them a rule is proposed only as
// the program with its options up to a subcommand (or target, or script)
// listed here, "git -C . log", "npm run build"; any other call of them
// gets a rule for that exact command. The value is the number of words
// after the subcommand the rule names as well (npm run SCRIPT).
var narrow = func() map[string]map[string]int {
	subs := func(words string, run ...string) map[string]int {
		m := map[string]int{}
		for _, w := range strings.Fields(words) {
			m[w] = 0
		}
		for _, w := range run {
			m[w] = 1
		}
		return m
	}
	// git subcommands that work on the local repository only: no fetch,
	// push, clone, remote, submodule, archive --remote, configuration
	// (config can make git run programs later), nor those that run a
	// program of the call's choosing (bisect run, rebase --exec,
	// difftool, filter-branch, merge -s X running git-merge-X, init
	// --template copying hooks, help --web starting a browser).
	git := subs("status log diff show blame annotate shortlog describe rev-parse rev-list ls-files ls-tree cat-file " +
		"grep branch tag add commit stash switch checkout restore reset cherry-pick revert mv rm reflog " +
		"show-ref merge-base for-each-ref check-ignore format-patch apply version")
	// Running the project's own tests and scripts, by name.
	js := subs("test t tst ls list", "run", "run-script")
	// make takes targets and options in any order (make test -f evil.mk,
	// make test deploy), deno test runs remote modules, pip list
	// --index-url asks any host: these get the exact command. (go doc
	// -http, which runs pkgsite, is opaque to the analyser.)
	m := map[string]map[string]int{
		"git": git,
		"npm": js, "pnpm": js, "yarn": js, "bun": js,
		"go":    subs("test build vet fmt version doc"),
		"cargo": subs("build b check c test t fmt clippy doc d bench"),
		"deno":  subs("fmt lint check"),
		"pip":   subs("show freeze check"), "pip3": subs("show freeze check"),
		"docker": subs("ps images version info inspect logs stats top port history"),
	}
	m["podman"], m["nerdctl"] = m["docker"], m["docker"]
	// Every other program outside plainTools (curl, ssh, npx, kubectl,
	// make …) gets its exact command: see proposedWords.
	return m
}()

// commandPrefix returns the program and subcommand every simple command of
// cmd shares, if they share one. exact is set when the call gets no
// prefix but a rule for this one command (one simple command only).
//
// onlyExact proposes the exact rule or nothing.
func commandPrefix(cmd string, env Env, onlyExact bool) (prefix string, exact, ok bool) {
	res := shellrisk.Analyze(cmd, shellrisk.Env{Cwd: env.Cwd, Home: env.Home})
	if res.Opaque || len(res.Commands) == 0 {
		return "", false, false
	}
	for i := range res.Commands {
		c := &res.Commands[i]
		if c.Dynamic || len(c.Argv) == 0 || c.Argv[0] == "" {
			return "", false, false
		}
		words, ok := proposedWords(c)
		if !ok {
			return "", false, false
		}
		if onlyExact {
			words = nil
		}
		if words == nil {
			if len(res.Commands) != 1 {
				return "", false, false
			}
			// The words of the exact rule's command matcher: as many
			// as a command prefix can hold.
			words = c.Argv
			for j, w := range words {
				if w == "" || strings.TrimSpace(w) != w || strings.ContainsAny(w, " \t\n") {
					words = words[:j]
					break
				}
			}
			return strings.Join(words, " "), true, len(words) > 0
		}
		for _, w := range words {
			if strings.TrimSpace(w) != w || strings.ContainsAny(w, " \t\n") {
				return "", false, false
			}
		}
		p := strings.Join(words, " ")
		if prefix != "" && p != prefix {
			return "", false, false
		}
		prefix = p
	}
	return prefix, false, true
}

// proposedWords returns the command prefix one simple command proposes,
// or nil when only the exact command may be proposed; ok is false when
// nothing may be.
func proposedWords(c *shellrisk.Command) (words []string, ok bool) {
	argv := c.Argv
	subs, isNarrow := narrow[argv[0]]
	if !isNarrow {
		words = argv[:1]
		if len(argv) > 1 && argv[1] != "" && !strings.HasPrefix(argv[1], "-") {
			words = argv[:2]
		}
		if len(words) == 1 && bareless[words[0]] {
			return nil, false
		}
		if !plainTools[words[0]] {
			// A program's name alone, or with its first word, allows
			// every option it has, and most programs have one that runs
			// code (java -jar, gdb ./a.out -x, hg status --config hooks…,
			// tmux ls \; run-shell): only the plain tools below are
			// proposed as a prefix; any other gets its exact command.
			return nil, true
		}
		return words, true
	}
	i, ok := shellrisk.Subcommand(c)
	if !ok || i >= len(argv) {
		return nil, true
	}
	n, benign := subs[argv[i]]
	end := i + 1 + n
	if !benign || end > len(argv) || n > 0 && (argv[end-1] == "" || strings.HasPrefix(argv[end-1], "-")) {
		return nil, true
	}
	return argv[:end], true
}

// exactID is what names an exact-command rule in its id: the start of
// its command and a digest of the whole, so that two such rules get two
// ids.
func exactID(cmd, prefix string) string {
	sum := sha256.Sum256([]byte(cmd))
	if len(prefix) > 64 {
		prefix = prefix[:64]
	}
	return prefix + " " + hex.EncodeToString(sum[:4])
}

// urlHost returns "host[:port]", or "scheme://host[:port]" for a scheme
// other than http and https.
func urlHost(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || u.User != nil {
		return "", false
	}
	host := strings.ToLower(u.Host)
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return host, true
	case "":
		return "", false
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// pathGlob returns the glob of the directory, inside cwd, that holds every
// path the call touches.
func pathGlob(t permission.ToolInfo, args map[string]any, env Env) (string, bool) {
	penv := pathrisk.Env{Cwd: env.Cwd, Home: env.Home, ConfigHome: env.ConfigHome}
	dirTool := t.PathDefaultsToCwd || t.PathsRecursive
	var paths []string
	for i, name := range t.PathArgs {
		v, ok := args[name]
		if !ok {
			if i == 0 && t.PathDefaultsToCwd {
				paths = append(paths, ".")
			}
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", false
		}
		paths = append(paths, s)
	}
	if t.PatchArg != "" {
		s, _ := args[t.PatchArg].(string)
		pp := permission.PatchPaths(s)
		if len(pp) == 0 {
			return "", false
		}
		for _, p := range pp {
			paths = append(paths, p.Path)
		}
	}
	if len(paths) == 0 {
		return "", false
	}
	common, file := "", ""
	for _, raw := range paths {
		c, ok := pathrisk.Canonical(raw, penv)
		if !ok || !pathrisk.Within(c, env.Cwd) || c == env.Cwd && !dirTool {
			return "", false
		}
		if pathrisk.Sensitive(c, penv, t.PathsWrite || t.PatchArg != "") != nil {
			return "", false
		}
		dir := c
		if !dirTool {
			dir, file = filepath.Dir(c), c
		}
		if common == "" {
			common = dir
		}
		for !pathrisk.Within(dir, common) {
			common = filepath.Dir(common)
		}
	}
	if common == env.Cwd {
		// A glob of the whole tree would be a bare "**": offer the one file
		// at the top instead, or nothing.
		if dirTool || len(paths) != 1 {
			return "", false
		}
		rel, _ := filepath.Rel(env.Cwd, file)
		return rel, true
	}
	rel, err := filepath.Rel(env.Cwd, common)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return filepath.ToSlash(rel) + "/**", true
}

// slug makes a rule id from the tool and what the rule names:
// "shell-npm-test", "write_file-src", "http_get-api.github.com".
func slug(tool, what string) string {
	var b strings.Builder
	b.WriteString(tool)
	dash := true
	if what != "" {
		b.WriteByte('-')
	}
	for _, r := range strings.ToLower(what) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// SuggestID returns an id for a rule made without one, from its tool and
// first matcher: "shell-npm-test", "read_file-docs".
func SuggestID(r Rule) string {
	what := r.Command
	switch {
	case what != "":
	case r.Path != "":
		what = strings.TrimSuffix(r.Path, "/**")
	case r.URL != "":
		what = r.URL
	case len(r.Args) > 0:
		keys := make([]string, 0, len(r.Args))
		for k := range r.Args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		what = keys[0] + "-" + r.Args[keys[0]]
	}
	return slug(r.Tool, what)
}
