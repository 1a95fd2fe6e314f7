package permission

import (
	"path"
	"strings"

	"github.com/custom-agent/custom-agent/permission/netrisk"
	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// matched is the outcome of matching a policy against a judged call.
type matched struct {
	// rule is the strictest matching rule, nil if none matched.
	rule *Rule
	// unfit is an allow or ask rule that matched the tool but could not
	// loosen this call, kept so the reason can say why it did not apply.
	unfit *Rule
}

// match applies the combining rule: among all rules that match, deny beats
// ask beats allow, and between rules of the same decision the earlier wins.
func (p *Policy) match(j *judge, skipTightenOnly bool) matched {
	var m matched
	if p == nil || len(p.rules) == 0 {
		return m
	}
	best := -1
	// askUnfit is the earliest ask rule that matched but may not turn a
	// credential call's denial into a question: it still beats an allow
	// rule that names the call (deny beats ask beats allow).
	askUnfit := -1
	name := j.req.Tool.Name
	consider := func(i int) {
		c := p.rules[i]
		if skipTightenOnly && c.rule.TightenOnly {
			return
		}
		if best >= 0 {
			bs, cs := p.rules[best].rule.Decision.strictness(), c.rule.Decision.strictness()
			if cs < bs || cs == bs && i > best {
				return
			}
		}
		switch c.matches(j) {
		case matchYes:
			best = i
		case matchUnfit:
			if m.unfit == nil {
				m.unfit = c.rule
			}
			if c.rule.Decision == Ask && (askUnfit < 0 || i < askUnfit) {
				askUnfit = i
			}
		}
	}
	for _, i := range p.byTool[name] {
		consider(i)
	}
	if tree := p.byCmd[name]; tree != nil && j.shell {
		// Only rules whose prefix one of the commands starts with can
		// match (matchCommand compares word by word, ignoring case for
		// deny and ask). consider is idempotent, so a rule reached
		// through two commands is harmless.
		for k := range j.commands {
			tree.walk(j.commands[k].Argv, consider)
		}
	}
	for _, i := range p.wild {
		if p.rules[i].tool.match(name) {
			consider(i)
		}
	}
	if best < 0 {
		// The built-in rules count only when no rule of another level
		// matched: any deny or ask beats them, and another allow decides
		// in their place.
		best = p.builtinMatch(j)
	}
	if best >= 0 && askUnfit >= 0 && p.rules[best].rule.Decision == Allow {
		best = askUnfit
	}
	if best >= 0 {
		m.rule = p.rules[best].rule
	}
	return m
}

type matchOutcome uint8

const (
	matchNo matchOutcome = iota
	matchYes
	// matchUnfit: an allow rule matched by its matchers but may not loosen
	// the call (opaque, or credential without naming the arguments), or an
	// ask rule would turn a credential call's denial into a question
	// without naming it.
	matchUnfit
)

// matches reports whether the rule's matchers all match the call. The tool
// name has been matched already.
func (c *compiled) matches(j *judge) matchOutcome {
	allow := c.rule.Decision == Allow
	if allow && j.shell && len(c.cmd) == 0 && (c.rule.Path != "" || len(c.args) > 0) {
		return matchNo
	}
	if len(c.cmd) > 0 && !c.matchCommand(j, allow) {
		return matchNo
	}
	if c.rule.Path != "" && !c.matchPaths(j, allow) {
		return matchNo
	}
	if c.url != nil && (j.url == nil || !c.url.match(j.url)) {
		return matchNo
	}
	for i := range c.args {
		if !c.matchArg(j, &c.args[i]) {
			return matchNo
		}
	}
	if allow && (j.opaque || !c.coversPaths(j) || (j.protected || touchesCredential(j)) && !c.namesCall(j)) {
		return matchUnfit
	}
	if allow && j.cwdArg != "" && c.rule.Level != LevelBuiltin && !c.namesArg(j.cwdArg) {
		// A rule someone wrote or an answer made allows a command where
		// it was meant to run: the same words run in another directory
		// (cwd: ~/other-project) read, send or change what the rule never
		// named. Only a rule naming that directory allows it there.
		return matchUnfit
	}
	if c.rule.Decision == Ask && touchesCredential(j) && !c.namesCredentialParts(j) {
		// "shell: always ask" is meant to tighten; a credential call is
		// denied by default, and only a rule that names it may turn that
		// into a question.
		return matchUnfit
	}
	return matchYes
}

// namesCredentialParts reports whether an ask rule names every part of a
// credential call a question would be about: it names the call as an
// allow rule would (namesCall), names each location that needs naming (a
// path matcher for src/** does not name ~/.ssh/id_rsa beside src/a), and,
// as a command rule, matches every simple command (git push does not name
// the cat ~/.ssh/id_rsa after it), since an ask rule otherwise needs to
// match only one.
func (c *compiled) namesCredentialParts(j *judge) bool {
	if !c.namesCall(j) {
		return false
	}
	for i := range j.paths {
		if p := &j.paths[i]; p.need && !c.namesPath(j, p) {
			return false
		}
	}
	return len(c.cmd) == 0 || c.matchCommand(j, true)
}

// touchesCredential reports whether the call is of credential risk or has
// a credential part (a destructive call may, too).
func touchesCredential(j *judge) bool {
	return j.level == risk.Credential || credentialFinding(j) != nil
}

// coversPaths applies design rule (a) and (b) of DESIGN.md §4 to an allow
// rule: its verdict covers the call only if the rule names every location
// that needs naming — a credential or protected location in either form,
// or a write outside the working directory (pathFact.need), redirection
// targets included. A path matcher names a location when its wildcard-free
// text holds the components that make it sensitive (".git/hooks", ".ssh",
// ".env"; "**" names nothing); a command matcher when one of its words is
// that path, and only when the path was written plainly: not through a
// glob, and not through a symbolic link, whose target the words do not
// name. Locations that need no naming (reads of ordinary files, writes
// inside the working directory) are covered by any matching rule.
func (c *compiled) coversPaths(j *judge) bool {
	for i := range j.paths {
		p := &j.paths[i]
		if !p.need {
			continue
		}
		if !c.namesPath(j, p) {
			return false
		}
	}
	return true
}

// namesPath reports whether the rule names one location that needs naming.
func (c *compiled) namesPath(j *judge, p *pathFact) bool {
	if c.rule.Path != "" {
		if p.sens != nil && !c.pathNamesLiterally(p.sens) {
			return false
		}
		if p.viaLink && p.sensRes != nil && !c.pathNamesLiterally(p.sensRes) {
			return false
		}
		return p.canon != "" && !p.glob
	}
	for _, a := range c.args {
		if !hasMeta(a.g.pat) && p.canon != "" && !p.glob && !p.viaLink {
			if cp, ok := pathrisk.Canonical(a.g.pat, j.env); ok && strings.EqualFold(cp, p.canon) {
				return true
			}
		}
	}
	if len(c.cmd) == 0 || p.canon == "" || p.glob || p.viaLink {
		return false
	}
	for _, w := range c.cmd[1:] {
		if w == p.raw {
			return true
		}
		if cp, ok := pathrisk.Canonical(w, j.env); ok && cp == p.canon {
			return true
		}
	}
	return false
}

// pathNamesLiterally reports whether the rule's path glob holds the
// sensitive components sens in a row, each as literal text (a "*" in sens
// stands for any component of the location, such as a process id).
func (c *compiled) pathNamesLiterally(sens []string) bool {
	pat := strings.ToLower(c.rule.Path)
	comps := strings.Split(pat, "/")
	for i := 0; i+len(sens) <= len(comps); i++ {
		ok := true
		for k, s := range sens {
			pc := comps[i+k]
			if s == "*" {
				if pc == "**" {
					ok = false
				}
			} else if hasMeta(pc) || pc != s {
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// matchCommand: an allow needs every simple command to match, a deny or
// ask one of them.
func (c *compiled) matchCommand(j *judge, allow bool) bool {
	if !j.shell || len(j.commands) == 0 {
		return false
	}
	for i := range j.commands {
		cmd := &j.commands[i]
		ok := hasWordPrefix(cmd.Argv, c.cmd, !allow)
		if allow && (!ok || cmd.Dynamic) {
			return false
		}
		if !allow && ok {
			return true
		}
	}
	return allow
}

// hasWordPrefix reports whether argv starts with the words of prefix, word
// by word.
func hasWordPrefix(argv, prefix []string, fold bool) bool {
	if len(argv) < len(prefix) {
		return false
	}
	for i, w := range prefix {
		if argv[i] != w && !(fold && strings.EqualFold(argv[i], w)) {
			return false
		}
	}
	return true
}

// matchPaths: an allow needs every path in both forms to match, a deny or
// ask any path in either form.
func (c *compiled) matchPaths(j *judge, allow bool) bool {
	if len(j.paths) == 0 {
		return false
	}
	j.prepareFold()
	for i := range j.paths {
		p := &j.paths[i]
		if c.first != "" && !p.deep && !p.glob && !c.firstMayMatch(p) {
			// Neither form starts with the rule's literal first
			// component, so neither can match.
			if allow {
				return false
			}
			continue
		}
		if allow {
			if p.canon == "" || !c.matchPath(p.canon, p.canonFold, j) || p.resolved != "" && !c.matchPath(p.resolved, p.resolvedFold, j) {
				return false
			}
			continue
		}
		if p.canon != "" && c.matchPath(p.canon, p.canonFold, j) || p.resolved != "" && c.matchPath(p.resolved, p.resolvedFold, j) {
			return true
		}
		// A recursive read, or a glob, reaches paths it does not spell: it
		// matches a deny or ask rule when it may reach what the rule names
		// (search_text over cwd reads secrets/; `cat secr*/x` may be
		// secrets/x).
		if (p.deep || p.glob) && p.canon != "" && c.mayReach(p.canon, p.deep, &j.req) {
			return true
		}
	}
	return allow
}

// mayReach reports whether the glob or the tree under p (deep) may hold a
// path the rule's path glob matches. It compares component by component and
// answers yes when unsure (a "**" on either side), which is the safe answer
// for the deny and ask rules it serves.
func (c *compiled) mayReach(p string, deep bool, req *Request) bool {
	pat := c.path.pat
	switch c.anchor {
	case anchorHome, anchorCwd:
		base := req.Home
		if c.anchor == anchorCwd {
			base = req.Cwd
		}
		if base == "" {
			return false
		}
		pat = strings.TrimSuffix(base, "/") + "/" + pat
	case anchorAnywhere:
		pat = "/" + pat
	}
	if c.path.fold {
		p = strings.ToLower(p)
	}
	pc := strings.Split(strings.TrimPrefix(p, "/"), "/")
	rc := strings.Split(strings.TrimPrefix(pat, "/"), "/")
	for i := 0; ; i++ {
		switch {
		case i == len(pc):
			return deep || i == len(rc)
		case i == len(rc):
			return false
		case pc[i] == "**" || rc[i] == "**":
			return true
		}
		a, b := pc[i], rc[i]
		if !hasMeta(a) && !hasMeta(b) {
			if a != b {
				return false
			}
			continue
		}
		if !hasMeta(a) {
			if ok, err := path.Match(b, a); err == nil && !ok {
				return false
			}
		} else if !hasMeta(b) {
			if ok, err := path.Match(a, b); err == nil && !ok {
				return false
			}
		}
	}
}

// matchPath matches one clean absolute path against the rule's path glob.
// matchPath matches one form of a path; pFold is p lower-cased, for rules
// that ignore case.
func (c *compiled) matchPath(p, pFold string, j *judge) bool {
	if c.path.fold {
		p = pFold
	}
	switch c.anchor {
	case anchorHome, anchorCwd:
		base, baseFold := j.req.Home, j.homeFold
		if c.anchor == anchorCwd {
			base, baseFold = j.req.Cwd, j.cwdFold
		}
		if base == "" {
			return false
		}
		if c.path.fold {
			base = baseFold
		}
		rel, ok := relTo(p, base)
		return ok && c.path.match(rel)
	}
	return c.path.match(p)
}

// firstMayMatch reports whether either form of p, relative to the working
// directory, starts with the rule's literal first component.
func (c *compiled) firstMayMatch(p *pathFact) bool {
	if c.path.fold {
		return p.firstFold[0] == c.first || p.firstFold[1] == c.first
	}
	return p.first[0] == c.first || p.first[1] == c.first
}

// relTo returns p relative to dir ("." for dir itself), if p is within it.
func relTo(p, dir string) (string, bool) {
	if !pathrisk.Within(p, dir) {
		return "", false
	}
	if len(p) == len(dir) {
		return ".", true
	}
	if dir == "/" {
		return p[1:], true
	}
	return p[len(dir)+1:], true
}

// namesArg reports whether the rule has a matcher for argument name.
func (c *compiled) namesArg(name string) bool {
	for i := range c.args {
		if c.args[i].name == name {
			return true
		}
	}
	return false
}

func (c *compiled) matchArg(j *judge, a *argGlob) bool {
	s, ok := j.req.Args[a.name].(string)
	if !ok {
		return false
	}
	if a.g.fold {
		s = strings.ToLower(s)
	}
	return a.g.match(s)
}

// namesCall reports whether the rule names the call's arguments closely
// enough to loosen a credential call or a protected write: by a path, URL or argument matcher,
// or by a command prefix that spells out every simple command whole. A
// prefix of the program name alone ("cat") says nothing about which file is
// read, so it does not let `cat ~/.ssh/id_rsa` through. The locations the
// call touches must be named as well (coversPaths): redirections are not
// words of argv, so `cat README.md > .custom-agent/policy.json` is not
// named by the rule `cat README.md`.
func (c *compiled) namesCall(j *judge) bool {
	if j.urlSecret && !c.url.namesPath() {
		// A secret written in a URL (http_get, curl) is named only by a
		// URL matcher that names where on the host it goes, not by a bare
		// host or a command prefix.
		return false
	}
	if j.url != nil && c.url.wildHost() && netrisk.MetadataHost(j.url.Hostname()) {
		// A cloud metadata service is named only by its own host: a rule
		// for "*.nip.io" allows a developer's wildcard-DNS names, not
		// 169.254.169.254.nip.io.
		return false
	}
	if c.rule.Path != "" || c.url != nil || len(c.args) > 0 {
		return true
	}
	if len(c.cmd) == 0 || len(j.commands) == 0 {
		return false
	}
	for i := range j.commands {
		if len(j.commands[i].Argv) != len(c.cmd) {
			return false
		}
	}
	return true
}
