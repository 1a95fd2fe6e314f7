package permission

import (
	"strings"

	"cmp"
	"net/url"
	"slices"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/permission/shellrisk"
)

// judge holds what step 2 of spec §3 learnt about a call's arguments: its
// risk, the findings that raised it, and the facts rules are matched on.
type judge struct {
	req   Request // a copy, so that no pointer to the caller's value escapes
	env   pathrisk.Env
	level risk.Level
	// findings explain the raises, sorted highest first by finish.
	findings []risk.Finding
	// paths are every file system location the call touches.
	paths []pathFact
	// shell is set for a call with a command argument; commands are its
	// simple commands.
	shell    bool
	commands []shellrisk.Command
	// repos are the directories git runs in (shellrisk.Result.Repos).
	repos []string
	// opaque is set when something could not be judged statically: no allow
	// rule may then allow the call.
	opaque bool
	// protected is set when the call writes where code runs later (a git
	// hook, a shell rc file) or custom-agent's own configuration.
	protected bool
	url       *url.URL
	// urlSecret is set when a URL carries a secret: only an allow rule
	// whose URL matcher names a path on the host may loosen the call.
	urlSecret bool
	// Lower-cased forms for rules that ignore case, and each path's first
	// component under the working directory, made once per call by
	// prepareFold so that a thousand rules do not each lower-case them.
	foldReady         bool
	cwdFold, homeFold string
	// cwdArg is the argument that moved the command's working directory
	// out of the session's (the shell tool's "cwd"), "" when it did not;
	// set after judgePaths, from cwdAt (its path's index + 1), so that a
	// link's target counts.
	cwdArg string
	cwdAt  int
}

// pathFact is one location a call touches.
type pathFact struct {
	arg      string
	span     risk.Span
	raw      string
	canon    string // "" when unknown
	abs      string // canon before cleaning, when it has ".." (else "")
	resolved string // "" when the caller did not resolve it
	write    bool
	deep     bool // everything beneath the path is read
	tracked  bool // what the git repository holding the path tracks is read
	// committed: with tracked, what is read is what git holds committed
	// (a revision, the staged index, an object): the index does not bound it.
	committed bool
	glob      bool // canon still holds shell glob characters
	// need is set when an allow rule must name this location to cover the
	// call (DESIGN rule (a)): a credential or protected location in either
	// form, or a write outside the working directory. sens and sensRes are
	// pathrisk.Sensitive of each form; viaLink is set when the resolved
	// form differs from the lexical one.
	need          bool
	viaLink       bool
	sens, sensRes []string
	// Set by judge.prepareFold: the forms lower-cased, and the first
	// component of each form ([canon, resolved]) relative to the working
	// directory ("" when outside it), as is and lower-cased.
	canonFold, resolvedFold string
	first, firstFold        [2]string
}

// prepareFold fills the lower-cased forms and first components of the
// working directory, home and every path, once per call.
func (j *judge) prepareFold() {
	if j.foldReady {
		return
	}
	j.foldReady = true
	j.cwdFold, j.homeFold = strings.ToLower(j.req.Cwd), strings.ToLower(j.req.Home)
	for i := range j.paths {
		p := &j.paths[i]
		p.canonFold, p.resolvedFold = strings.ToLower(p.canon), strings.ToLower(p.resolved)
		p.first[0], p.first[1] = firstUnder(p.canon, j.req.Cwd), firstUnder(p.resolved, j.req.Cwd)
		p.firstFold[0], p.firstFold[1] = firstUnder(p.canonFold, j.cwdFold), firstUnder(p.resolvedFold, j.cwdFold)
	}
}

// firstUnder returns the first component of p relative to dir, or "" when p
// is not beneath dir.
func firstUnder(p, dir string) string {
	if p == "" || dir == "" {
		return ""
	}
	rel, ok := relTo(p, dir)
	if !ok || rel == "." {
		return ""
	}
	f, _, _ := strings.Cut(rel, "/")
	return f
}

// run judges the request's arguments. It keeps a copy of *req in j.req
// and reads that one (a Request is large: one copy, not two).
func (j *judge) run(r *Request) {
	j.req = *r
	req := &j.req
	j.env = pathrisk.Env{Cwd: req.Cwd, Home: req.Home, UserHomes: req.UserHomes, ConfigHome: req.ConfigHome, DataDir: req.DataDir}
	t := &req.Tool
	j.level = t.Risk
	if j.level == risk.Unknown || j.level > risk.Destructive {
		j.level = risk.Destructive
		j.find(risk.Destructive, "", risk.Span{}, "", "the tool declares no known risk level, so it is judged at the highest")
	}
	for i, name := range t.PathArgs {
		v, ok := req.Args[name]
		switch s, isStr := v.(string); {
		case !ok && i == 0 && t.PathDefaultsToCwd:
			j.addPath(name, risk.Span{}, ".", t.PathsWrite)
			j.paths[len(j.paths)-1].deep = t.PathsRecursive
		case !ok:
		case isStr:
			j.addPath(name, risk.Span{End: len(s)}, s, t.PathsWrite)
			j.paths[len(j.paths)-1].deep = t.PathsRecursive
		case t.Namespace != "":
			// An MCP tool's path argument may be a list (paths[]): every
			// element is judged like a path.
			j.pathList(t, name, v)
		default:
			j.notString(name)
		}
	}
	if t.GlobArg != "" {
		j.glob(t)
	}
	if t.CommandArg != "" {
		j.shellCall(t)
	}
	if t.PatchArg != "" {
		j.patch(t.PatchArg)
	}
	if t.URLArg != "" {
		switch s, ok := req.Args[t.URLArg].(string); {
		case ok:
			j.url = j.judgeURL(t.URLArg, s)
		default:
			j.notString(t.URLArg)
		}
	}
	if t.ResourceArg != "" {
		switch s, ok := req.Args[t.ResourceArg].(string); {
		case !ok:
			j.notString(t.ResourceArg)
		case !strings.HasPrefix(strings.ToLower(s), "file:"):
			scheme, _, _ := strings.Cut(s, ":")
			j.find(risk.Read, t.ResourceArg, risk.Span{End: len(s)}, s, "is a "+quoteText(scheme+":")+" resource URI, which the MCP server resolves (not a file of this machine): it and what it carries go to that server")
		}
	}
	if t.HeadersArg != "" {
		j.headers(t.HeadersArg, req.Args[t.HeadersArg])
	}
	if t.BodyArg != "" {
		if s, ok := req.Args[t.BodyArg].(string); ok {
			if start, end, what, found := findSecret(s); found {
				j.find(risk.Credential, t.BodyArg, risk.Span{Start: start, End: end}, "", "the body contains "+what+", which would leave the machine")
			}
		}
	}
	j.judgePaths()
	if j.cwdAt > 0 {
		// Resolved only now: a link in the project to a directory
		// outside it moves the command out as much as its target does.
		if p := &j.paths[j.cwdAt-1]; !pathrisk.Within(p.canon, j.req.Cwd) || p.resolved != "" && !pathrisk.Within(p.resolved, j.req.Cwd) {
			j.cwdArg = t.CwdArg
		}
	}
	if len(j.findings) > 1 {
		slices.SortStableFunc(j.findings, func(a, b risk.Finding) int { return cmp.Compare(b.Risk, a.Risk) })
	}
}

// pathList judges every element of a list argument as a path; an argument
// that is not a list of strings cannot be judged.
func (j *judge) pathList(t *ToolInfo, name string, v any) {
	list, ok := v.([]any)
	if !ok {
		j.notString(name)
		return
	}
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			j.notString(name)
			return
		}
		j.addPath(name, risk.Span{}, s, t.PathsWrite)
		j.paths[len(j.paths)-1].deep = t.PathsRecursive
	}
}

// notString records an argument the engine must read but cannot.
func (j *judge) notString(arg string) {
	j.opaque = true
	j.find(risk.Raise(j.req.Tool.Risk), arg, risk.Span{}, "", "the "+quoteText(arg)+" argument is missing or not a string, so the call cannot be judged")
}

// find records a finding and raises the level.
func (j *judge) find(l risk.Level, arg string, sp risk.Span, text, why string) {
	j.level = risk.Max(j.level, l)
	j.findings = append(j.findings, risk.Finding{Risk: l, Arg: arg, Span: sp, Text: text, Why: why})
}

// addPath records a path written in an argument, made canonical.
func (j *judge) addPath(arg string, sp risk.Span, raw string, write bool) {
	c, _ := pathrisk.Canonical(raw, j.env)
	pf := pathFact{arg: arg, span: sp, raw: raw, canon: c, write: write}
	if c != "" && hasDotDot(raw) {
		pf.abs, _ = pathrisk.Absolute(raw, j.env)
	}
	j.paths = append(j.paths, pf)
}

// key returns the form of p the caller resolves: the uncleaned absolute
// path when it has "..", so links before the ".." are followed physically.
func (p *pathFact) key() string {
	if p.abs != "" {
		return p.abs
	}
	return p.canon
}

// judgePaths classifies every path by both its forms.
func (j *judge) judgePaths() {
	for i := range j.paths {
		p := &j.paths[i]
		if p.canon != "" && len(j.req.Resolved) > 0 {
			if r, ok := j.req.Resolved[p.key()]; ok {
				p.resolved = r
			} else if r := physical(p.key(), j.req.Resolved); r != p.canon {
				p.resolved = r
			}
		}
		pf := pathrisk.PathFacts{
			Raw: p.raw, Canonical: p.canon, Resolved: p.resolved, Write: p.write, Recursive: p.deep, Unknown: p.canon == "",
		}
		l, why := pathrisk.Classify(pf, j.env)
		if why != "" {
			j.find(l, p.arg, p.span, p.raw, why)
			j.protected = j.protected || l >= risk.Execute && pathrisk.Protected(pf, j.env)
		}
		p.viaLink = p.resolved != "" && p.resolved != p.canon
		if p.canon == "" {
			p.need = p.write || l >= risk.Credential
			continue
		}
		if l >= risk.Execute {
			// Only a location judged execute or above can be sensitive;
			// plain reads and writes skip the lookup.
			p.sens = pathrisk.Sensitive(p.canon, j.env, p.write)
			if p.viaLink {
				p.sensRes = pathrisk.Sensitive(p.resolved, j.env, p.write)
			}
		}
		outside := !pathrisk.Within(p.canon, j.env.Cwd) || p.viaLink && !pathrisk.Within(p.resolved, j.env.Cwd)
		p.need = p.sens != nil || p.sensRes != nil || l >= risk.Credential || p.write && outside || p.deep && l >= risk.Credential
	}
}

// shellCall analyses the command with shellrisk.
func (j *judge) shellCall(t *ToolInfo) {
	j.shell = true
	cmdText, ok := j.req.Args[t.CommandArg].(string)
	if !ok {
		j.notString(t.CommandArg)
		return
	}
	cwd := j.req.Cwd
	if t.CwdArg != "" {
		if v, present := j.req.Args[t.CwdArg]; present {
			s, isStr := v.(string)
			if !isStr {
				j.notString(t.CwdArg)
				return
			}
			j.addPath(t.CwdArg, risk.Span{End: len(s)}, s, false)
			cwd = j.paths[len(j.paths)-1].canon
			j.cwdAt = len(j.paths)
		}
	}
	res, owned := j.analyzeShell(cmdText, cwd)
	j.level = risk.Max(j.level, res.Risk)
	if j.findings == nil && owned {
		j.findings = res.Findings // Analyze's result is ours to keep
	} else {
		// A shared Analysis is never appended to nor sorted in place.
		j.findings = append(j.findings, res.Findings...)
	}
	j.opaque = j.opaque || res.Opaque
	j.commands = res.Commands // only read, never changed or handed out
	j.repos = res.Repos
	n := len(res.Accesses)
	for _, a := range res.Accesses {
		if a.Glob {
			n++ // its root directory is judged too
		}
	}
	j.paths = slices.Grow(j.paths, n)
	for _, a := range res.Accesses {
		pf := pathFact{arg: t.CommandArg, span: a.Span, raw: a.Raw, canon: a.Path, write: a.Write || a.Delete, glob: a.Glob, deep: a.Recursive, tracked: a.Tracked, committed: a.Committed}
		if a.Path != "" && a.Joined != "" {
			pf.abs = a.Joined
		}
		j.paths = append(j.paths, pf)
		if a.Glob {
			if name, hit := pathrisk.GlobTargetsCredential(a.Raw); hit {
				j.find(risk.Credential, t.CommandArg, a.Span, a.Raw, "matches credential files such as "+quoteText(name))
			} else if a.Path != "" && !a.Write && !a.Delete && pathrisk.GlobMayMatchCredential(a.Path, j.env) {
				j.find(risk.Credential, t.CommandArg, a.Span, a.Raw, "may match a credential location")
			}
		}
		if a.Glob && a.Path != "" {
			// A glob names every file it matches; judge the directory it
			// starts from as well, so `~/.ss*/id_*` is judged under ~.
			if dir := globRoot(a.Path); dir != a.Path {
				j.paths = append(j.paths, pathFact{arg: t.CommandArg, span: a.Span, raw: a.Raw, canon: dir, write: a.Write || a.Delete})
			}
			j.expanded(t.CommandArg, a)
		}
	}
}

// expanded judges every match the caller found for a glob access
// (Request.Expanded), by where it resolves to. The matches are marked as
// glob facts: command words never name them (design rule (b)).
func (j *judge) expanded(arg string, a shellrisk.Access) {
	ms, ok := j.req.Expanded[a.Path]
	if !ok {
		return
	}
	for _, m := range ms {
		if m == "" {
			j.opaque = true
			j.find(risk.Raise(risk.Read), arg, a.Span, a.Raw, "matches more files than were checked, so where they all lead cannot be known")
			continue
		}
		c, ok := pathrisk.Canonical(m, j.env)
		if !ok || c[0] != '/' {
			continue
		}
		j.paths = append(j.paths, pathFact{arg: arg, span: a.Span, raw: a.Raw, canon: c, write: a.Write || a.Delete, glob: true, deep: a.Recursive})
	}
}

// glob judges a file-name glob under the first path argument: a glob aimed
// at credential files is credential, and the directory it starts from is
// judged like a path ("../../.ssh/*" starts in ~/.ssh).
func (j *judge) glob(t *ToolInfo) {
	v, ok := j.req.Args[t.GlobArg]
	if !ok {
		return
	}
	g, isStr := v.(string)
	if !isStr {
		j.notString(t.GlobArg)
		return
	}
	sp := risk.Span{End: len(g)}
	if name, hit := pathrisk.GlobTargetsCredential(g); hit {
		j.find(risk.Credential, t.GlobArg, sp, g, "matches credential files such as "+quoteText(name))
	}
	root := pathrisk.GlobRoot(g)
	if root == "" || len(t.PathArgs) == 0 {
		return
	}
	base := "."
	if s, ok := j.req.Args[t.PathArgs[0]].(string); ok {
		base = s
	}
	dir, ok := pathrisk.Canonical(base, j.env)
	if !ok {
		return
	}
	if root[0] != '/' {
		root = dir + "/" + root
	}
	if c, ok := pathrisk.Canonical(root, j.env); ok {
		j.paths = append(j.paths, pathFact{arg: t.GlobArg, span: sp, raw: g, canon: c})
	}
}

// globRoot returns the longest leading directory of p free of glob
// characters.
func globRoot(p string) string {
	last := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '/':
			last = i
		case '*', '?', '[':
			if last == 0 {
				return "/"
			}
			return p[:last]
		}
	}
	return p
}

// patch judges every file a unified diff names as a write.
func (j *judge) patch(arg string) {
	s, ok := j.req.Args[arg].(string)
	if !ok {
		j.notString(arg)
		return
	}
	pp := PatchPaths(s)
	if len(pp) == 0 {
		j.opaque = true
		j.find(risk.Write, arg, risk.Span{End: len(s)}, "", "the patch names no file this engine can find, so what it changes cannot be known")
		return
	}
	for _, p := range pp {
		j.addPath(arg, p.Span, p.Path, true)
	}
	j.patchDeletions(arg, pp)
}

func quoteText(s string) string { return "`" + s + "`" }

func sortStrings(s []string) { slices.Sort(s) }
