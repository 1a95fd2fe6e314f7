package permission

import (
	_ "embed"
	"encoding/json"
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/permission/shellrisk"
)

// The built-in rules (issue 16) allow read-only shell commands without a
// question: ls, cat, grep, git status, go list and the others listed in
// builtin/rules.json, a file in the policy file format compiled into the
// binary. They sit at LevelBuiltin, below every other level: a deny or ask
// rule of any level beats them, and an allow rule of another level, when
// it matches, decides instead of them.
//
// A built-in rule is not a command prefix. It names a read-only form
// (shellrisk.ReadOnly) and covers a call only when all of these hold:
//   - the analyser understood every word: the call is not Opaque, and no
//     simple command is Dynamic or run through a wrapper or assignments;
//   - every simple command has a read-only form with a built-in rule (so a
//     compound of reads, `git status && git diff --stat`, is covered, and
//     `cat a | sh` is not); `cd DIR` only as the first command and only
//     into the working directory itself;
//   - the analysis found nothing: no finding at all, so nothing raised the
//     risk above the shell tool's own (execute) and nothing was noted
//     (a pager named in the environment, a secret printed, a command run);
//   - every access is a read (no redirection writes, nothing deleted),
//     known, inside the working directory in both its written and its
//     resolved form, and needs no naming (not credential, not protected);
//     a glob must have been expanded by the caller (Request.Expanded), so
//     that every file it reads was judged where it leads;
//   - every unquoted glob of every command lists names inside the working
//     directory (echo ~/.* lists the home's);
//   - a recursive read (grep -r, rg) only of a tree the caller scanned
//     whole and found holding no secret (Request.Trees; .git counts unless
//     the command leaves it out, see treeClean);
//   - the call is a shell call with no URL.
//
// When a built-in rule decides, the decision is sourcedFrom override, its
// rule is the built-in rule of the first simple command, and the reason
// says "read-only command inside the project".

// Package policy loads these rules from Go values generated from the file
// (policy/builtin_gen.go): run go generate ./policy after changing it.
//
//go:embed builtin/rules.json
var builtinJSON []byte

// BuiltinJSON returns the built-in rules file, in the policy file format
// (docs/reference/policy.md), as compiled into the binary.
func BuiltinJSON() []byte { return append([]byte(nil), builtinJSON...) }

// BuiltinSource is the Source of every built-in rule.
const BuiltinSource = "built-in"

var builtinOnce = sync.OnceValue(func() []Rule {
	var f struct {
		Rules []struct {
			ID       string  `json:"id"`
			Tool     string  `json:"tool"`
			Command  string  `json:"command"`
			Decision Verdict `json:"decision"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(builtinJSON, &f); err != nil {
		panic("permission: builtin/rules.json: " + err.Error())
	}
	out := make([]Rule, len(f.Rules))
	for i, r := range f.Rules {
		out[i] = Rule{ID: r.ID, Level: LevelBuiltin, Source: BuiltinSource, Tool: r.Tool, Command: r.Command, Decision: r.Decision}
	}
	if _, err := Compile(out); err != nil {
		panic("permission: builtin/rules.json: " + err.Error())
	}
	return out
})

// BuiltinRules returns the built-in rules at LevelBuiltin, in file order.
// The file is parsed once; the slice is a copy.
func BuiltinRules() []Rule {
	return append([]Rule(nil), builtinOnce()...)
}

// builtinKey is the form a built-in rule's command names, as
// shellrisk.ReadOnly spells it: its words joined by single spaces.
func builtinKey(cmd []string) string { return strings.Join(cmd, " ") }

// builtinFit reports whether the call as a whole is one built-in rules may
// cover (every condition but the forms of its commands), and if not, why.
func (j *judge) builtinFit() (bool, string) {
	switch {
	case !j.shell || j.url != nil:
		return false, "built-in rules cover shell commands only"
	case j.opaque:
		return false, "what the call does cannot be judged statically"
	case len(j.findings) > 0:
		return false, "the analysis found something beyond a plain read: " + j.findings[0].Why
	case j.level > j.req.Tool.Risk:
		return false, "the call is judged " + j.level.String() + ", above the tool's own risk"
	case j.protected || j.urlSecret:
		return false, "the call writes where code runs later, or holds a secret"
	case len(j.commands) == 0:
		return false, "the call runs no command"
	}
	cwd := j.req.Cwd
	if cwd == "" {
		return false, "the working directory is unknown"
	}
	for _, d := range j.repos {
		if ok, why := j.gitConfigClean(d); !ok {
			return false, why
		}
	}
	if ok, why := j.globsWithin(); !ok {
		return false, why
	}
	for i := range j.paths {
		p := &j.paths[i]
		switch {
		case p.write:
			return false, "it writes " + quoteText(p.raw)
		case p.canon == "" || p.need:
			return false, "it reads " + quoteText(p.raw) + ", which is unknown, a credential or protected"
		case p.committed:
			return false, "it prints files as git holds them committed (a revision, the staged index or an object), which are not checked for secret files"
		case p.tracked:
			if ok, why := j.repoClean(p); !ok {
				return false, why
			}
		case p.deep:
			if ok, why := j.treeClean(p); !ok {
				return false, why
			}
		case !pathrisk.Within(p.canon, cwd) || p.resolved != "" && !pathrisk.Within(p.resolved, cwd):
			return false, "it reads " + quoteText(p.raw) + ", outside the working directory"
		case p.glob && strings.ContainsAny(p.canon, "*?[") && !j.globExpanded(p.canon):
			return false, "the files " + quoteText(p.raw) + " matches were not checked"
		}
	}
	return true, ""
}

// treeClean reports whether a recursive read may be covered: the caller
// scanned the tree (Request.Trees) whole and found no credential file the
// program would read and no symbolic link. grep -r reads everything,
// .git included; rg, ag and git grep leave .git out.
func (j *judge) treeClean(p *pathFact) (bool, string) {
	t, ok := j.req.Trees[p.canon]
	dir := quoteText(p.raw)
	if p.canon == j.req.Cwd {
		dir = "the working directory" // often read without being named (rg foo)
	}
	switch {
	case strings.Contains(p.canon+"/", "/.git/"):
		// Every git directory has a config, which may hold tokens (an
		// extraheader, a URL with a password): a search of it is never a
		// plain read, whatever the scan found.
		return false, "it reads everything beneath " + dir + ", inside a .git directory, whose config may hold tokens"
	case !ok || !t.Complete:
		return false, "it reads everything beneath " + dir + ", which was not checked for secret files"
	case t.Secret != "":
		return false, "it reads everything beneath " + dir + ", which holds " + quoteText(t.Secret)
	case t.Link != "":
		return false, "it reads everything beneath " + dir + ", where " + quoteText(t.Link) + " is a symbolic link"
	case t.GitSecret != "" && t.Unignore != "":
		return false, "it reads everything beneath " + dir + ", where the ignore file " + quoteText(t.Unignore) + " negates a pattern, so .git, which holds " + quoteText(t.GitSecret) + ", may be searched"
	case t.GitSecret != "" && !j.skipsGitDir(p):
		return false, "it reads everything beneath " + dir + ", .git included, which holds " + quoteText(t.GitSecret)
	}
	return true, ""
}

// repoClean reports whether a read of what a git repository tracks may be
// covered: the caller read the repository's index (Request.Repos) whole
// and found no credential file tracked in it.
func (j *judge) repoClean(p *pathFact) (bool, string) {
	r, ok := j.req.Repos[p.canon]
	switch {
	case ok && !r.Checked && r.Why != "":
		return false, "it prints files the git repository tracks, and " + r.Why
	case !ok || !r.Checked:
		return false, "it prints files the git repository tracks, which were not checked for secret files"
	case r.Secret != "":
		return false, "it prints files the git repository tracks, among them " + quoteText(r.Secret)
	}
	return true, ""
}

// gitConfigClean reports whether git may be run in dir by a built-in rule:
// the caller read the configuration of the repository holding it
// (Request.GitConfigs) and found nothing with which git runs a program or
// reads outside the repository.
func (j *judge) gitConfigClean(dir string) (bool, string) {
	c, ok := j.req.GitConfigs[dir]
	switch {
	case dir == "":
		return false, "git is pointed at a repository by --git-dir or --work-tree, or at a directory known only when it runs, whose configuration was not read"
	case !ok:
		return false, "git reads the configuration of the repository it runs in, which can make it run programs and was not checked"
	case c != "":
		return false, "in the repository git runs in, " + c
	}
	return true, ""
}

// skipsGitDir reports whether the command that reads p leaves .git
// directories out: git grep (it reads what git tracks), and rg as it
// runs by default (shellrisk.SkipsGitDir), unless p is a .git directory or
// inside one, which rg searches when it is named.
func (j *judge) skipsGitDir(p *pathFact) bool {
	if strings.Contains(p.canon+"/", "/.git/") || p.resolved != "" && strings.Contains(p.resolved+"/", "/.git/") {
		return false
	}
	for k := range j.commands {
		c := &j.commands[k]
		if c.Span.Start > p.span.Start || p.span.End > c.Span.End || len(c.Argv) == 0 {
			continue
		}
		return shellrisk.SkipsGitDir(c)
	}
	return false
}

// globExpanded reports whether the caller expanded a glob access: its
// pattern, or the pattern it is the directory of, is in Request.Expanded.
func (j *judge) globExpanded(pattern string) bool {
	if _, ok := j.req.Expanded[pattern]; ok {
		return true
	}
	for k := range j.req.Expanded {
		if globRoot(k) == pattern {
			return true
		}
	}
	return false
}

// builtinForm returns the built-in rule key of the k-th simple command,
// or "" when it has no read-only form or is a cd that moves.
func (j *judge) builtinForm(k int) string {
	c := &j.commands[k]
	form := shellrisk.ReadOnly(c)
	if form == "cd" {
		// cd only where the command already is: the analysis follows cd,
		// but a command without operands (ls, git status) reads the
		// directory it is in, which is no access of its own.
		dir, ok := pathrisk.Canonical(c.Argv[1], j.env)
		if k != 0 || !ok || dir != j.req.Cwd {
			return ""
		}
		if r, ok := j.req.Resolved[dir]; ok && r != dir {
			return ""
		}
	}
	return form
}

// readsOnly reports whether the call, as the analyser understood it, only
// reads (Decision.ReadOnly): judged read, or a shell command whose every
// simple command has a read-only form, with no write access.
func (j *judge) readsOnly() bool {
	if j.level != risk.Unknown && j.level <= risk.Read {
		return true
	}
	if !j.shell || j.opaque || j.url != nil || len(j.commands) == 0 || j.level > j.req.Tool.Risk {
		return false
	}
	for i := range j.paths {
		if j.paths[i].write {
			return false
		}
	}
	for k := range j.commands {
		if j.builtinForm(k) == "" {
			return false
		}
	}
	return true
}

// sandboxedBuiltins are the built-in rules that hold only where the
// read-only sandbox confines the call (Request.Sandbox): go version, env,
// list and doc may download a toolchain or modules and run them, which the
// sandbox's empty network and read-only file system rule out. Without it
// (a hook, check, --sandbox off) they do not apply and the call is asked.
var sandboxedBuiltins = map[string]bool{
	"builtin:go-version": true, "builtin:go-env": true, "builtin:go-list": true, "builtin:go-doc": true,
}

// builtinMatch returns the index of the built-in rule that decides the
// call (the rule of its first simple command) when built-in rules cover
// every simple command, and -1 otherwise.
func (p *Policy) builtinMatch(j *judge) int {
	if len(p.builtin) == 0 || !j.shell {
		return -1
	}
	if ok, _ := j.builtinFit(); !ok {
		return -1
	}
	first := -1
	for k := range j.commands {
		i, ok := p.builtin[j.builtinForm(k)]
		if !ok || !p.rules[i].tool.match(j.req.Tool.Name) {
			return -1
		}
		if sandboxedBuiltins[p.rules[i].rule.ID] && !j.req.Sandbox.Enforced() {
			return -1
		}
		if first < 0 {
			first = i
		}
	}
	return first
}

// builtinNote says, for a call the default table asks, why the built-in
// rule of its read-only form did not allow it (`git diff` in a repository
// that tracks a key, `rg` over a tree holding .env), so that the person
// asked knows; "" when no command of the call has a built-in rule, or when
// the call is a plain read and another of its commands has none.
func (p *Policy) builtinNote(j *judge) string {
	if p == nil || len(p.builtin) == 0 || !j.shell {
		return ""
	}
	for k := range j.commands {
		i, ok := p.builtin[j.builtinForm(k)]
		if !ok {
			continue
		}
		if fit, why := j.builtinFit(); !fit {
			return " The built-in rule " + quoteText(p.rules[i].rule.ID) + " covers only plain reads inside the working directory, and " + why + "."
		}
		return ""
	}
	return ""
}

// builtinMatches is compiled.matches for a built-in rule, for Explain:
// matchYes when the built-in rules cover the call and this rule covers one
// of its commands, matchUnfit when this rule covers one of its commands
// but the call is not a plain read, matchNo otherwise.
func (c *compiled) builtinMatches(j *judge, p *Policy) matchOutcome {
	mine, named := false, false
	for k := range j.commands {
		if j.builtinForm(k) == c.key {
			mine = true
			break
		}
		named = named || hasWordPrefix(j.commands[k].Argv, c.cmd, false)
	}
	if !mine {
		if named {
			// git log --output=x: the program, but not a read-only form.
			return matchUnfit
		}
		return matchNo
	}
	if p.builtinMatch(j) < 0 {
		return matchUnfit
	}
	return matchYes
}

// builtinWhy says why a built-in rule that names one of the call's
// commands does not cover it.
func (p *Policy) builtinWhy(j *judge) string {
	if ok, why := j.builtinFit(); !ok {
		return why
	}
	for k := range j.commands {
		if _, ok := p.builtin[j.builtinForm(k)]; !ok {
			return "the command " + quoteText(strings.Join(j.commands[k].Argv, " ")) + " is not a read-only form with a built-in rule"
		}
	}
	return "it does not cover the call"
}

// BuiltinReasonPrefix starts the reason of every decision a built-in rule
// made, and no other reason: a renderer that has only the reason (the
// permission.resolved event) can tell such a decision apart by it.
const BuiltinReasonPrefix = "Read-only command inside the project"

// builtinReason is the reason of a decision a built-in rule made.
func builtinReason(r *Rule) string {
	// No finding is possible here (builtinFit), so the judged risk is the
	// tool's own: saying "judged execute" of a read would mislead.
	return BuiltinReasonPrefix + ": it only reads, so the built-in rule " + quoteText(r.ID) + " allows it."
}

// globsWithin reports whether every unquoted glob of every command lists
// names inside the working directory only. A glob the program does not
// read as a file (echo /*, basename ~/.*, printf's operands) is no access,
// yet bash expands it to the names of the directory it points at: echo
// ~/.* or echo /home/*/.ssh/* tells what is outside, which no read-only
// rule for the project promises.
func (j *judge) globsWithin() (bool, string) {
	cwd := j.req.Cwd
	for k := range j.commands {
		c := &j.commands[k]
		for i, w := range c.Argv {
			if i == 0 || c.Globs&(1<<min(i, 63)) == 0 {
				continue
			}
			p, ok := pathrisk.Canonical(w, j.env)
			if !ok || !pathrisk.Within(p, cwd) {
				return false, "the pattern " + quoteText(w) + " lists names outside the working directory"
			}
			if r, ok := j.req.Resolved[globRoot(p)]; ok && !pathrisk.Within(r, cwd) {
				return false, "the pattern " + quoteText(w) + " lists names in " + quoteText(r) + ", outside the working directory"
			}
		}
	}
	return true, ""
}
