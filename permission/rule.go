package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/custom-agent/custom-agent/permission/netrisk"
)

// RuleLevel is where a rule comes from (spec §7).
type RuleLevel string

const (
	LevelSession RuleLevel = "session"
	LevelProject RuleLevel = "project"
	LevelUser    RuleLevel = "user"
	// LevelFlag is a rule given on the command line (check --policy).
	LevelFlag RuleLevel = "flag"
	// LevelBuiltin is a built-in rule (BuiltinRules), below every other
	// level: it allows a read-only shell command, never anything else, and
	// any deny or ask rule beats it. It names a read-only form of a
	// command (shellrisk.ReadOnly), not a prefix; see builtin.go.
	LevelBuiltin RuleLevel = "builtin"
)

// Rule is one policy rule as a value. It matches a call when its Tool glob
// matches the tool's name and every matcher it sets matches the call's
// arguments; a rule with no matcher matches every call of the tool.
//
// How matchers meet compound calls:
//   - Command is a prefix of whole words ("npm test" matches
//     `npm test -- --watch`, not `npm testx`), compared with every simple
//     command the shell command would run. A deny or ask rule needs one of
//     them to match; an allow rule needs all of them, and never matches a
//     command that cannot be analysed statically (Opaque) or a simple
//     command whose words are only known at run time.
//   - Path is a doublestar glob over canonical absolute paths: "/abs/**",
//     "~/rel/**" (under the user's home) or a relative glob (under the
//     working directory; one that starts with "**/" matches anywhere). A deny
//     or ask rule matches when any path of the call, lexical or resolved,
//     matches, ignoring case; an allow rule only when every path in both
//     forms matches, with case. An allow rule with a path matcher but no
//     command matcher never matches a shell call: paths say nothing about
//     what a command runs.
//   - URL is "[scheme://]host[:port][/path-glob]"; a host "*.example.com"
//     matches its subdomains (not example.com itself).
//   - Args maps an argument name to a doublestar glob over its string value.
//     Like Path, an allow rule with Args but no Command never matches a shell
//     call.
//
// An allow rule loosens a credential call, or a write where code runs later
// (a git hook, a shell rc file), only when it names the call's arguments: by Path, URL or Args, or by a Command that spells out every
// simple command whole ("cat .env", not "cat").
//
// Design rules (DESIGN.md §4, red-team review of issue 3):
//
//	(a) An allow rule's verdict applies only if the rule covers every effect
//	    of the call: every simple command, and every file access including
//	    redirection targets. A credential or protected location, or a write
//	    outside the working directory (a /dev/tcp socket included), is covered
//	    only by a rule that names it: a path matcher, or a command word that
//	    is that path. A bare program prefix ("echo") covers writes inside the
//	    working directory to ordinary files, nothing more.
//	(b) A path matcher names a credential or protected location only when
//	    its wildcard-free text holds the components that make it sensitive
//	    (".env", ".ssh", ".git/hooks"; "**" and "*" name nothing). A path
//	    reached through a symbolic link must be named in its resolved form
//	    too; a glob or a link target is never named by command words.
//	(c) custom-agent's own policy and configuration stay credential: only a
//	    rule naming ".custom-agent/policy.json" (or the user config path)
//	    literally may allow writing them.
//	(d) When unsure, the safe decision (ask or deny), with a reason.
//
// For deny and ask rules, a recursive read or a glob matches a Path when
// it may reach a path the glob matches (search_text over cwd reaches
// secrets/**).
type Rule struct {
	ID       string            `json:"id"`
	Level    RuleLevel         `json:"level"`
	Source   string            `json:"source,omitempty"`
	Tool     string            `json:"tool"`
	Command  string            `json:"command,omitempty"`
	Path     string            `json:"path,omitempty"`
	URL      string            `json:"url,omitempty"`
	Args     map[string]string `json:"args,omitempty"`
	Decision Verdict           `json:"decision"`
	// TightenOnly marks a rule from a source that may only make decisions
	// stricter: an ask rule of a project the user has not trusted. Such a
	// rule applies only when its verdict is stricter than the decision the
	// call would get without any tighten-only rule; it never loosens one
	// (a hostile repository cannot turn a credential deny into an ask).
	TightenOnly bool `json:"-"`
}

func (r *Rule) ref() *RuleRef {
	return &RuleRef{ID: r.ID, Level: r.Level, Source: r.Source, Decision: r.Decision}
}

// RuleError reports a rule that cannot be compiled.
type RuleError struct {
	Index  int    // position in the list given to Compile
	ID     string // the rule's ID
	Source string // the rule's file, if any
	Field  string // the JSON field at fault
	Err    error
}

func (e *RuleError) Error() string {
	where := fmt.Sprintf("rule %d", e.Index)
	if e.ID != "" {
		where = fmt.Sprintf("rule %q", e.ID)
	}
	if e.Source != "" {
		where = e.Source + ": " + where
	}
	return fmt.Sprintf("%s: %s: %v", where, e.Field, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// Policy is a compiled, immutable set of rules, safe for concurrent use.
// The zero Policy and a nil *Policy hold no rules.
type Policy struct {
	// rules point into the RuleSets the policy was joined from, which
	// are immutable and shared.
	rules  []*compiled
	byTool map[string][]int // rules whose tool glob is a literal name, without a command matcher
	// byCmd indexes the rules with a literal tool and a command matcher:
	// per tool, a tree of the lower-cased words of their command prefixes,
	// so that a call is only tested against the rules whose prefix one of
	// its commands starts with (a thousand `npm run task-N` rules cost a
	// walk of three words, not a thousand comparisons).
	byCmd map[string]*cmdNode
	wild  []int // the rules with a tool glob, in order
	// builtin maps the read-only form a built-in rule names ("git
	// status") to the rule; such rules are in no other index.
	builtin map[string]int
}

// Compile checks and prepares rules for matching. Rules are kept in order;
// the order only breaks ties between rules of equal strictness, for the
// reason and rule reference reported.
func Compile(rules []Rule) (*Policy, error) {
	s, err := CompileSet(len(rules), slices.Values(rules))
	if err != nil {
		return nil, err
	}
	return Join(s), nil
}

// RuleSet is a list of rules checked and compiled once. Join puts sets
// together into a Policy without compiling any rule again, so that a
// policy file checked when it is read is not compiled a second time when
// it is joined with the other levels' rules. A RuleSet is immutable and
// safe for concurrent use; a nil *RuleSet holds no rules.
type RuleSet struct {
	src   []Rule     // the rules, owned by the set
	rules []compiled // rules[i].rule is &src[i]
}

// CompileSet checks and compiles the rules rules yields, in order; n is
// how many it is expected to yield (room is made for them; more or fewer
// is no error). The set keeps its own copy of each rule, so a caller
// builds the rules as it yields them, with no list of its own. The error
// is the one Compile returns for the same rules: a *RuleError whose Index
// is the rule's position in the sequence.
func CompileSet(n int, rules iter.Seq[Rule]) (*RuleSet, error) {
	s := &RuleSet{src: make([]Rule, 0, n)}
	for r := range rules {
		s.src = append(s.src, r)
	}
	// In place, once src holds every rule: a compiled rule is large, and
	// copying a thousand of them was a third of a policy load.
	s.rules = make([]compiled, len(s.src))
	for i := range s.src {
		if err := compileRule(&s.rules[i], &s.src[i]); err != nil {
			r := &s.src[i]
			return nil, &RuleError{Index: i, ID: r.ID, Source: r.Source, Field: err.field, Err: err.err}
		}
	}
	return s, nil
}

// Len returns the number of rules in the set.
func (s *RuleSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}

// Join returns the policy of the sets' rules put end to end, in order: the
// policy Compile returns for the same rules. The policy shares the sets'
// compiled rules; nil sets are skipped.
func Join(sets ...*RuleSet) *Policy {
	n := 0
	for _, s := range sets {
		n += s.Len()
	}
	p := &Policy{byTool: make(map[string][]int), rules: make([]*compiled, 0, n)}
	for _, s := range sets {
		if s == nil {
			continue
		}
		for k := range s.rules {
			p.add(&s.rules[k])
		}
	}
	return p
}

// add appends c to the rules and to the index it belongs in.
func (p *Policy) add(c *compiled) {
	i := len(p.rules)
	p.rules = append(p.rules, c)
	switch {
	case c.rule.Level == LevelBuiltin:
		if p.builtin == nil {
			p.builtin = make(map[string]int)
		}
		if _, dup := p.builtin[c.key]; !dup {
			p.builtin[c.key] = i
		}
	case c.tool.kind == globLiteral && len(c.cmd) > 0:
		if p.byCmd == nil {
			p.byCmd = make(map[string]*cmdNode)
		}
		n := p.byCmd[c.tool.lit]
		if n == nil {
			n = &cmdNode{}
			p.byCmd[c.tool.lit] = n
		}
		n.add(c.cmd, i)
	case c.tool.kind == globLiteral:
		p.byTool[c.tool.lit] = append(p.byTool[c.tool.lit], i)
	default:
		p.wild = append(p.wild, i)
	}
}

// cmdNode is a node of the command-prefix tree: the rules whose prefix
// ends here, and the words that continue it.
type cmdNode struct {
	rules []int
	next  map[string]*cmdNode
}

func (n *cmdNode) add(words []string, rule int) {
	for _, w := range words {
		w = strings.ToLower(w)
		if n.next == nil {
			n.next = make(map[string]*cmdNode)
		}
		c := n.next[w]
		if c == nil {
			c = &cmdNode{}
			n.next[w] = c
		}
		n = c
	}
	n.rules = append(n.rules, rule)
}

// walk calls f for every rule whose prefix argv starts with (compared
// lower-cased; the exact comparison is matchCommand's).
func (n *cmdNode) walk(argv []string, f func(rule int)) {
	for _, w := range argv {
		c := n.next[w]
		if c == nil {
			if lw := strings.ToLower(w); lw != w {
				c = n.next[lw]
			}
		}
		if c == nil {
			return
		}
		for _, i := range c.rules {
			f(i)
		}
		n = c
	}
}

// Rules returns a copy of the rules the policy was compiled from.
func (p *Policy) Rules() []Rule {
	if p == nil {
		return nil
	}
	out := make([]Rule, len(p.rules))
	for i, c := range p.rules {
		out[i] = *c.rule
	}
	return out
}

// Len returns the number of rules.
func (p *Policy) Len() int {
	if p == nil {
		return 0
	}
	return len(p.rules)
}

// MarshalJSON encodes the policy as its list of rules.
func (p *Policy) MarshalJSON() ([]byte, error) { return json.Marshal(p.Rules()) }

// UnmarshalJSON decodes a list of rules and compiles it.
func (p *Policy) UnmarshalJSON(b []byte) error {
	var rules []Rule
	if err := json.Unmarshal(b, &rules); err != nil {
		return err
	}
	c, err := Compile(rules)
	if err != nil {
		return err
	}
	*p = *c
	return nil
}

type fieldErr struct {
	field string
	err   error
}

// compiled is a rule prepared for matching.
type compiled struct {
	// rule is the rule as given, in its RuleSet; never changed.
	rule *Rule
	tool glob
	// cmd holds the words of Command.
	cmd []string
	// key is a built-in rule's command as builtinKey spells it.
	key string
	// path is Path; anchor says what it is relative to.
	path   glob
	anchor anchor
	// first is the pattern's first path component when it is literal and
	// the pattern is relative to the working directory (folded like path):
	// a quick test that most paths cannot match.
	first string
	url   *urlPattern // nil when the rule has no URL matcher
	args  []argGlob
}

type argGlob struct {
	name string
	g    glob
}

// compileRule compiles r into *c, which must be zero (CompileSet compiles
// in place in its list, so a large struct is not copied). c keeps r.
func compileRule(c *compiled, r *Rule) *fieldErr {
	c.rule = r
	if !r.Decision.Valid() {
		return &fieldErr{"decision", fmt.Errorf("%q is not allow, ask or deny", r.Decision)}
	}
	switch r.Level {
	case LevelSession, LevelProject, LevelUser, LevelFlag:
	case LevelBuiltin:
		// A built-in rule allows one read-only form of a shell command and
		// nothing else.
		switch {
		case r.Tool != "shell":
			return &fieldErr{"tool", errors.New("a built-in rule is for the shell tool")}
		case r.Decision != Allow:
			return &fieldErr{"decision", errors.New("a built-in rule allows")}
		case strings.TrimSpace(r.Command) == "":
			return &fieldErr{"command", errors.New("a built-in rule names a read-only command")}
		case r.Path != "" || r.URL != "" || len(r.Args) > 0:
			return &fieldErr{"command", errors.New("a built-in rule has no path, url or args matcher")}
		}
	default:
		return &fieldErr{"level", fmt.Errorf("%q is not session, project, user, flag or builtin", r.Level)}
	}
	if r.Tool == "" {
		return &fieldErr{"tool", errors.New("a rule must name a tool or a tool glob such as \"*\"")}
	}
	var ok bool
	if c.tool, ok = compileGlob(r.Tool, false); !ok {
		return &fieldErr{"tool", fmt.Errorf("%q is not a valid glob", r.Tool)}
	}
	// Deny and ask rules ignore case so that `.ENV` cannot slip past a ban
	// on `.env` on a case-insensitive file system; allow rules keep it.
	fold := r.Decision != Allow
	if r.Command != "" {
		c.cmd = strings.Fields(r.Command)
		if len(c.cmd) == 0 {
			return &fieldErr{"command", errors.New("a command prefix needs at least one word")}
		}
	}
	if r.Level == LevelBuiltin {
		c.key = builtinKey(c.cmd)
	}
	if r.Path != "" {
		pat := r.Path
		switch {
		case strings.HasPrefix(pat, "/"):
			c.anchor = anchorRoot
		case pat == "~" || strings.HasPrefix(pat, "~/"):
			c.anchor = anchorHome
			pat = strings.TrimPrefix(strings.TrimPrefix(pat, "~"), "/")
		case strings.HasPrefix(pat, "**/"):
			c.anchor = anchorAnywhere
		default:
			c.anchor = anchorCwd
			pat = strings.TrimPrefix(pat, "./")
		}
		if pat == "" {
			pat = "."
		}
		if c.path, ok = compileGlob(pat, fold); !ok {
			return &fieldErr{"path", fmt.Errorf("%q is not a valid glob", r.Path)}
		}
		if c.anchor == anchorCwd {
			if f, _, _ := strings.Cut(c.path.pat, "/"); f != "" && f != "." && f != ".." && !hasMeta(f) {
				c.first = f
			}
		}
	}
	if r.URL != "" {
		u, err := compileURL(r.URL, fold)
		if err != nil {
			return &fieldErr{"url", err}
		}
		c.url = u
	}
	if len(r.Args) > 0 {
		names := make([]string, 0, len(r.Args))
		for k := range r.Args {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			g, ok := compileGlob(r.Args[k], fold)
			if !ok {
				return &fieldErr{"args." + k, fmt.Errorf("%q is not a valid glob", r.Args[k])}
			}
			c.args = append(c.args, argGlob{name: k, g: g})
		}
	}
	return nil
}

// anchor is what a path glob is relative to.
type anchor uint8

const (
	anchorRoot     anchor = iota // absolute
	anchorHome                   // the user's home
	anchorCwd                    // the working directory
	anchorAnywhere               // "**/…": any absolute path
)

type globKind uint8

const (
	globLiteral globKind = iota // no metacharacters: equality
	globTree                    // "lit/**": lit or anything beneath it
	globPrefix                  // "lit*": lit and more, within one path component
	globAny                     // "*" or "**": everything
	globPattern                 // anything else: doublestar
)

// glob is a compiled doublestar pattern, classified so that the common
// shapes cost a comparison instead of a match.
type glob struct {
	lit  string // the literal, or the tree root
	pat  string
	kind globKind
	fold bool // compare lower-cased
}

func compileGlob(pat string, fold bool) (glob, bool) {
	if fold {
		pat = strings.ToLower(pat)
	}
	g := glob{pat: pat, fold: fold}
	switch {
	case pat == "*" || pat == "**":
		g.kind = globAny
	case !hasMeta(pat):
		g.kind, g.lit = globLiteral, pat
	case strings.HasSuffix(pat, "/**") && !hasMeta(pat[:len(pat)-3]):
		g.kind, g.lit = globTree, pat[:len(pat)-3]
	case strings.HasSuffix(pat, "*") && !strings.HasSuffix(pat, "**") && !hasMeta(pat[:len(pat)-1]):
		g.kind, g.lit = globPrefix, pat[:len(pat)-1]
	default:
		// Only a pattern of this shape can be malformed: the shapes
		// above are valid as they are (TestCompileGlobValidates).
		if !doublestar.ValidatePattern(pat) {
			return glob{}, false
		}
		g.kind = globPattern
	}
	return g, true
}

func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '{', '}', '\\':
			return true
		}
	}
	return false
}

// match reports whether s matches. With fold set the caller must pass a
// lower-cased s.
func (g *glob) match(s string) bool {
	switch g.kind {
	case globAny:
		return true
	case globLiteral:
		return s == g.lit
	case globPrefix:
		return strings.HasPrefix(s, g.lit) && !strings.Contains(s[len(g.lit):], "/")
	case globTree:
		return s == g.lit || (len(s) > len(g.lit) && s[len(g.lit)] == '/' && s[:len(g.lit)] == g.lit) ||
			(g.lit == "" && strings.HasPrefix(s, "/"))
	}
	return doublestar.MatchUnvalidated(g.pat, s)
}

// urlPattern is a compiled URL matcher.
type urlPattern struct {
	scheme string // "" = http or https
	host   string // lower case; "*.x" matches subdomains of x
	port   string // "" = any
	path   glob   // globAny when absent
}

func compileURL(s string, fold bool) (*urlPattern, error) {
	up := &urlPattern{}
	rest := s
	if i := strings.Index(rest, "://"); i >= 0 {
		up.scheme = strings.ToLower(rest[:i])
		rest = rest[i+3:]
	}
	hostport, p, hasPath := strings.Cut(rest, "/")
	if hostport == "" {
		return nil, fmt.Errorf("%q names no host", s)
	}
	host, port, ok := plainHostPort(hostport)
	if !ok {
		u, err := url.Parse("x://" + hostport)
		if err != nil || u.User != nil {
			return nil, fmt.Errorf("%q is not host[:port]", hostport)
		}
		host, port = u.Hostname(), u.Port()
	}
	// The host and port are put in the normal form URLs are judged in
	// (netrisk.NormalizeURL): IDNA, canonical addresses, no leading zeros.
	var err error
	wild := false
	if h, ok := strings.CutPrefix(host, "*."); ok {
		host, wild = h, true
	}
	if host, err = netrisk.NormalHost(host); err != nil {
		return nil, fmt.Errorf("%q: the host %v", hostport, err)
	}
	if wild {
		host = "*." + host
	}
	up.host = host
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("%q: %q is not a port", hostport, port)
		}
		up.port = strconv.FormatUint(n, 10)
	}
	up.path = glob{kind: globAny}
	if hasPath && p != "" {
		// The path glob is matched against normal paths: unreserved
		// escapes decoded, the others in upper case, no dot segments. A
		// glob with dot segments would match nothing, so it is an error.
		p = netrisk.NormalEscapes(p)
		for _, seg := range strings.Split(p, "/") {
			if seg == "." || seg == ".." {
				return nil, fmt.Errorf("%q: a URL path glob cannot hold . or .. segments; URLs are matched with them resolved", p)
			}
		}
		g, ok := compileGlob("/"+p, fold)
		if !ok {
			return nil, fmt.Errorf("%q is not a valid path glob", p)
		}
		up.path = g
	}
	return up, nil
}

// plainHostPort splits hostport when it is the common, plain form — an
// optional "*." and then letters, digits, dots and hyphens, with an
// optional ":" and digits — which url.Parse would split the same way; ok
// is false for anything else, which url.Parse then reads.
func plainHostPort(hostport string) (host, port string, ok bool) {
	host, port, hasPort := strings.Cut(hostport, ":")
	if hasPort && (port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "") {
		return "", "", false
	}
	name := strings.TrimPrefix(host, "*.")
	if name == "" {
		return "", "", false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-':
		default:
			return "", "", false
		}
	}
	return host, port, true
}

// wildHost reports whether the pattern's host is a "*." wildcard, which
// names no one host.
func (up *urlPattern) wildHost() bool { return up != nil && strings.HasPrefix(up.host, "*.") }

// namesPath reports whether the pattern names a path on its host with some
// literal text ("api.example.com/v1/**"), not only the host; false for
// nil (no URL matcher).
func (up *urlPattern) namesPath() bool {
	return up != nil && up.path.kind != globAny && strings.Trim(up.path.pat, "/*") != ""
}

// match reports whether u, in the normal form netrisk.NormalizeURL gives
// (judgeURL), matches. A port the URL does not write is its scheme's
// default, so "https://host:443" matches https://host/.
func (up *urlPattern) match(u *url.URL) bool {
	scheme := strings.ToLower(u.Scheme)
	if up.scheme != "" && scheme != up.scheme {
		return false
	}
	if up.scheme == "" && scheme != "http" && scheme != "https" {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if rest, ok := strings.CutPrefix(up.host, "*."); ok {
		if !strings.HasSuffix(host, "."+rest) {
			return false
		}
	} else if host != up.host {
		return false
	}
	if up.port != "" {
		port := u.Port()
		if port == "" {
			port = netrisk.DefaultPort(scheme)
		}
		if port != up.port {
			return false
		}
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if up.path.fold {
		p = strings.ToLower(p)
	}
	return up.path.match(p)
}
