package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/secrets"
	"github.com/custom-agent/custom-agent/support/resolve"
)

// Entry is one rule as the store holds it: the rule, where it comes from,
// and whether it counts as written.
type Entry struct {
	Rule  Rule                 `json:"rule"`
	Level permission.RuleLevel `json:"level"`
	// File is the policy file holding the rule; "" for session rules.
	File string `json:"file,omitempty"`
	// Line is the line of the rule in File (1-based), 0 when unknown.
	Line int `json:"line,omitempty"`
	// Untrusted is set for an allow or ask rule of a project the user has
	// not trusted. The engine never sees such an allow rule, and sees such
	// an ask rule as tighten-only (permission.Rule.TightenOnly): it applies
	// only where it is stricter than the decision without it, so that an
	// untrusted project can tighten but never loosen a decision (see the
	// package comment).
	Untrusted bool `json:"untrusted,omitempty"`
}

// Effective returns the rule as the engine sees it, and false when the
// engine does not see it at all.
func (e *Entry) Effective() (permission.Rule, bool) {
	r := e.Rule.Permission(e.Level, e.File)
	if e.Level == permission.LevelBuiltin {
		r.Source = permission.BuiltinSource
	}
	if e.Untrusted {
		switch r.Decision {
		case permission.Allow:
			return r, false
		case permission.Ask:
			r.TightenOnly = true
		}
	}
	return r, true
}

// Options configure Open.
type Options struct {
	// Cwd is the session's working directory. It must exist; the project
	// policy is found from it (FindProject).
	Cwd string
	// ConfigHome is the XDG config home (see ConfigHome); the user policy
	// and the trust list live in ConfigHome/custom-agent/.
	ConfigHome string
	// Home is $HOME, for ~ in rules and examples.
	Home string
	// Files are extra policy files whose rules count at LevelFlag (check
	// --policy). They are trusted: the user named them.
	Files []string
	// NoBuiltin leaves the built-in rules out (permission.BuiltinRules):
	// every read-only shell command is then asked, as any other. The
	// command line sets it from --no-builtin-rules and
	// CUSTOM_AGENT_BUILTIN_RULES=off; the configuration file's
	// builtinRules key comes with the configuration issue.
	NoBuiltin bool
}

// Store holds the rules of every level for one working directory: the user
// file, the project file (with the project's trust), extra files, and the
// session's rules in memory. It is safe for concurrent use. Changes to the
// files are made under a file lock, so that several processes adding rules
// at once lose nothing; Store does not watch the files for changes made by
// others after it loaded them.
type Store struct {
	mu         sync.Mutex
	env        Env
	configHome string
	project    Project
	trust      *trustList
	user       []Entry
	proj       []Entry
	flag       []Entry
	session    []Entry
	builtin    bool               // the built-in rules apply (not Options.NoBuiltin)
	pol        *permission.Policy // cache of Policy; nil after a change
	// The rules of user, proj, flag and builtin compiled when their
	// files were read (flag: one set per file, in order), so that Policy
	// compiles them no second time. Each changes only with its entries.
	userSet, projSet, builtinSet *permission.RuleSet
	flagSets                     []*permission.RuleSet
}

// fileRules are the rules of one policy file: its entries, and the same
// rules compiled as the engine sees them when none of them is untrusted.
type fileRules struct {
	entries []Entry
	set     *permission.RuleSet
}

// Load opens the policy for the working directory cwd with the user
// configuration under configHome (the XDG config home) and HOME from the
// environment. See Open.
func Load(cwd, configHome string) (*Store, error) {
	return Open(Options{Cwd: cwd, ConfigHome: configHome, Home: os.Getenv("HOME")})
}

// Open loads the user policy, the trust list, the project policy for
// o.Cwd and o.Files, strictly: a file that is malformed, has an unknown
// field, an invalid rule, a duplicate or missing id, or an example the rule
// does not honour is an error naming the file, line and column (an *Error,
// several joined with errors.Join). There is no fallback to "no rules": a
// caller that gets an error must not start.
func Open(o Options) (*Store, error) {
	if !filepath.IsAbs(o.ConfigHome) {
		return nil, fmt.Errorf("the config home %q is not an absolute path", o.ConfigHome)
	}
	proj, err := FindProject(o.Cwd)
	if err != nil {
		return nil, err
	}
	cwd, err := canonicalDir(o.Cwd)
	if err != nil {
		return nil, err
	}
	s := &Store{
		env:        Env{Cwd: cwd, Home: o.Home, ConfigHome: o.ConfigHome},
		configHome: o.ConfigHome,
		project:    proj,
	}
	if s.trust, err = readTrust(trustPath(o.ConfigHome)); err != nil {
		return nil, err
	}
	if !o.NoBuiltin {
		set, err := builtinSet()
		if err != nil {
			return nil, err
		}
		s.builtin, s.builtinSet = true, set
	}
	var errs []error
	load := func(path string, level permission.RuleLevel, env Env, must bool) fileRules {
		fr, err := loadEntries(path, level, env, must)
		if err != nil {
			errs = append(errs, err)
		}
		return fr
	}
	user := load(UserFile(o.ConfigHome), permission.LevelUser, s.env, false)
	s.user, s.userSet = user.entries, user.set
	if proj.Exists {
		fr := load(proj.File, permission.LevelProject, s.projectEnv(), true)
		s.proj, s.projSet = fr.entries, fr.set
		s.markTrust()
	}
	for _, f := range o.Files {
		fr := load(f, permission.LevelFlag, s.env, true)
		s.flag = append(s.flag, fr.entries...)
		s.flagSets = append(s.flagSets, fr.set)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if _, err := s.Policy(); err != nil {
		return nil, err
	}
	return s, nil
}

// canonicalDir returns dir absolute, with symbolic links resolved as far as
// it exists.
func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return resolve.Path(abs), nil
}

// projectEnv is where a project file's examples are judged: from the
// project root, where their author wrote them.
func (s *Store) projectEnv() Env {
	e := s.env
	e.Cwd = s.project.Root
	return e
}

// loadEntries reads one policy file strictly, compiles its rules and checks
// their examples. A missing file is an error only when must is set.
func loadEntries(path string, level permission.RuleLevel, env Env, must bool) (fileRules, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		if !must && errors.Is(err, os.ErrNotExist) {
			return fileRules{}, nil
		}
		return fileRules{}, fmt.Errorf("reading policy: %w", err)
	}
	p, err := parse(path, src, level)
	if err != nil {
		return fileRules{}, err
	}
	var bad []*ExampleError
	for i := range p.ents {
		bad = append(bad, checkExamples(&p.ents[i].Rule, level, env)...)
	}
	if len(bad) > 0 {
		return fileRules{}, p.examplesError(bad)
	}
	return fileRules{p.entries(level), p.set}, nil
}

// entries returns the file's rules as entries at level: p.ents, with
// their level, file and line set (p is done with once they are taken).
func (p *parsed) entries(level permission.RuleLevel) []Entry {
	line, last := 1, 0
	for i := range p.ents {
		// Offsets increase, so lines are counted once over the file.
		line += bytes.Count(p.src[last:p.offs[i]], []byte("\n"))
		last = p.offs[i]
		e := &p.ents[i]
		e.Level, e.File, e.Line = level, p.path, line
	}
	return p.ents
}

// markTrust sets Untrusted on the project's allow and ask rules unless the
// project, or the single rule, is trusted.
func (s *Store) markTrust() {
	all := s.trust.trusts(s.project.Root)
	for i := range s.proj {
		e := &s.proj[i]
		e.Untrusted = !all && e.Rule.Decision != permission.Deny && !s.trust.trustsRule(s.project.Root, &e.Rule)
	}
}

// Project returns where the project policy lives, and whether the project
// is trusted.
func (s *Store) Project() (Project, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.project, s.trust.trusts(s.project.Root)
}

// Env returns where the store judges examples and proposes rules.
func (s *Store) Env() Env { return s.env }

// Entries returns the rules of a level ("" for all), in the order the
// engine is given them: user, project, flag, session, builtin.
func (s *Store) Entries(level permission.RuleLevel) []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Entry
	var builtin []Entry
	if s.builtin && (level == "" || level == permission.LevelBuiltin) {
		builtin = builtinFull() // built with their examples when first listed
	}
	for _, l := range [][]Entry{s.user, s.proj, s.flag, s.session, builtin} {
		for _, e := range l {
			if level == "" || e.Level == level {
				out = append(out, e)
			}
		}
	}
	return out
}

// Policy returns the compiled rules the engine is given: every rule of
// every level, except that an untrusted project's allow rules are left out
// and its ask rules only tighten. The result is shared and immutable; it
// is recompiled after a change.
func (s *Store) Policy() (*permission.Policy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pol != nil {
		return s.pol, nil
	}
	var sets []*permission.RuleSet
	for _, l := range []struct {
		es   []Entry
		sets []*permission.RuleSet
	}{
		{s.user, []*permission.RuleSet{s.userSet}},
		{s.proj, []*permission.RuleSet{s.projSet}},
		{s.flag, s.flagSets},
		{s.session, nil},
	} {
		ls, err := levelSets(l.es, l.sets)
		if err != nil {
			return nil, err
		}
		sets = append(sets, ls...)
	}
	// The built-in rules are never untrusted: their set is as compiled.
	if s.builtin {
		sets = append(sets, s.builtinSet)
	}
	s.pol = permission.Join(sets...)
	return s.pol, nil
}

// levelSets returns the compiled rules of one level's entries: the sets
// compiled when its files were read, when they hold exactly the entries
// as the engine sees them (no entry is untrusted), else the entries'
// effective rules compiled now (session rules, an untrusted project).
func levelSets(es []Entry, sets []*permission.RuleSet) ([]*permission.RuleSet, error) {
	n := 0
	for _, set := range sets {
		n += set.Len()
	}
	if n == len(es) && !slices.ContainsFunc(es, func(e Entry) bool { return e.Untrusted }) {
		return sets, nil
	}
	set, err := permission.CompileSet(len(es), func(yield func(permission.Rule) bool) {
		for i := range es {
			if r, ok := es[i].Effective(); ok && !yield(r) {
				return
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return []*permission.RuleSet{set}, nil
}

// validate checks a rule the way a file's rule is checked: id, matchers
// and examples.
func (s *Store) validate(r *Rule, level permission.RuleLevel, where string) error {
	fail := func(field string, err error) error {
		return &Error{Path: where, RuleID: r.ID, Field: field, Err: err}
	}
	if r.ID == "" {
		return fail("id", errors.New("a rule needs an id"))
	}
	if err := checkID(r.ID); err != nil {
		return fail("id", err)
	}
	if _, err := permission.Compile([]permission.Rule{r.Permission(level, "")}); err != nil {
		var re *permission.RuleError
		if errors.As(err, &re) {
			return fail(re.Field, re.Err)
		}
		return fail("", err)
	}
	env := s.env
	if level == permission.LevelProject {
		env = s.projectEnv()
	}
	var errs []error
	for _, ee := range checkExamples(r, level, env) {
		errs = append(errs, fail(ee.Field, ee))
	}
	return errors.Join(errs...)
}

// ErrExists is returned when a rule with the same id but different
// matchers or decision is already at that level.
var ErrExists = errors.New("a different rule with this id exists")

// AddSession adds a rule for the rest of the session, in memory. The
// caller records it as a policy.changed event (level session, op add) so
// that a replay sees it. Adding a rule identical to one present does
// nothing.
func (s *Store) AddSession(r permission.Rule) error {
	return s.Add(permission.LevelSession, FromPermission(r))
}

// AddProject writes a rule to the project policy file ("always allow in
// this project"), creating .custom-agent/policy.json at the project root
// if needed. The write is atomic and made under a lock on .custom-agent/,
// so concurrent writers lose nothing. Nothing else is trusted: if the
// project is not trusted, this one rule (by its id and a digest of its
// matchers) is recorded as trusted, and the file's other allow rules still
// do not count. Adding a rule identical to one present does nothing.
func (s *Store) AddProject(r permission.Rule) error {
	return s.Add(permission.LevelProject, FromPermission(r))
}

// ErrSecret is returned when a rule to be added holds what looks like a
// secret: rules are recorded in the event log and written to files in
// plain text.
var ErrSecret = errors.New("the rule holds what looks like a secret (a key, token or password); rules are logged and written in plain text, so it is not added")

// Add adds a rule at a level: session (memory), project or user (file).
// The rule is checked as a file's rule is (id, matchers, examples), and
// refused with ErrSecret if it holds what looks like a secret. A project
// rule that is not a deny is recorded as trusted (the user added it).
func (s *Store) Add(level permission.RuleLevel, r Rule) error {
	return s.add(level, r, true)
}

// AddUntrusted is Add that records nothing as trusted: a project rule
// added so counts as the project file's other rules do, only once the
// project is trusted (a rule imported from the project's own files,
// which came with the repository, is not the user's word).
func (s *Store) AddUntrusted(level permission.RuleLevel, r Rule) error {
	return s.add(level, r, false)
}

func (s *Store) add(level permission.RuleLevel, r Rule, trust bool) error {
	if ruleHoldsSecret(r) {
		return fmt.Errorf("rule %q: %w", secrets.Mask(r.ID), ErrSecret)
	}
	switch level {
	case permission.LevelSession:
		if err := s.validate(&r, level, "session"); err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for i := range s.session {
			if s.session[i].Rule.ID == r.ID {
				if sameMatch(&s.session[i].Rule, &r) {
					return nil
				}
				return fmt.Errorf("session rule %q: %w", r.ID, ErrExists)
			}
		}
		s.session = append(s.session, Entry{Rule: r, Level: level})
		s.pol = nil
		return nil
	case permission.LevelProject, permission.LevelUser:
	default:
		return fmt.Errorf("rules can be added at level session, project or user, not %q", level)
	}
	path := s.fileOf(level)
	if err := s.validate(&r, level, path); err != nil {
		return err
	}
	if level == permission.LevelProject {
		if err := noLinkBelow(s.project.Root, path); err != nil {
			return err
		}
	}
	err := updatePolicy(path, func(rules []Rule) ([]Rule, error) {
		for i := range rules {
			if rules[i].ID == r.ID {
				if sameMatch(&rules[i], &r) {
					return nil, errNoChange
				}
				return nil, &Error{Path: path, RuleID: r.ID, Field: "id", Err: ErrExists}
			}
		}
		return append(rules, r), nil
	})
	if err != nil {
		return err
	}
	if trust && level == permission.LevelProject && r.Decision != permission.Deny {
		if err := trustRule(s.configHome, s.project.Root, &r); err != nil {
			return fmt.Errorf("the rule was written to %s, but recording it as trusted failed: %w", path, err)
		}
	}
	return s.reload(level)
}

// fileOf returns the policy file of a file level.
func (s *Store) fileOf(level permission.RuleLevel) string {
	if level == permission.LevelProject {
		return s.project.File
	}
	return UserFile(s.configHome)
}

// reload reads a file level again after a change (which may include
// changes by other processes) and the trust list.
func (s *Store) reload(level permission.RuleLevel) error {
	path := s.fileOf(level)
	env := s.env
	if level == permission.LevelProject {
		env = s.projectEnv()
	}
	fr, err := loadEntries(path, level, env, false)
	if err != nil {
		return err
	}
	t, err := readTrust(trustPath(s.configHome))
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trust = t
	if level == permission.LevelProject {
		s.proj, s.projSet = fr.entries, fr.set
		s.project.Exists = true
		s.markTrust()
	} else {
		s.user, s.userSet = fr.entries, fr.set
	}
	s.pol = nil
	return nil
}

// ErrNotFound is returned by Remove for an id no rule has.
var ErrNotFound = errors.New("no rule has this id")

// Remove removes the rule with the given id from level (session, project
// or user), or, with level "", from whichever level holds it; an id held
// by several levels then is an error asking for the level.
func (s *Store) Remove(level permission.RuleLevel, id string) error {
	if level == "" {
		var found []permission.RuleLevel
		for _, e := range s.Entries("") {
			if e.Rule.ID == id && e.Level != permission.LevelFlag && !slices.Contains(found, e.Level) {
				found = append(found, e.Level)
			}
		}
		switch len(found) {
		case 0:
			return fmt.Errorf("rule %q: %w", id, ErrNotFound)
		case 1:
			level = found[0]
		default:
			return fmt.Errorf("rule %q is at levels %v; say which with --level", id, found)
		}
	}
	switch level {
	case permission.LevelBuiltin:
		return fmt.Errorf("rule %q is built in and cannot be removed; a deny or ask rule overrides it, and --no-builtin-rules or CUSTOM_AGENT_BUILTIN_RULES=off turns the built-in rules off", id)
	case permission.LevelSession:
		s.mu.Lock()
		defer s.mu.Unlock()
		n := len(s.session)
		s.session = slices.DeleteFunc(s.session, func(e Entry) bool { return e.Rule.ID == id })
		if len(s.session) == n {
			return fmt.Errorf("session rule %q: %w", id, ErrNotFound)
		}
		s.pol = nil
		return nil
	case permission.LevelProject, permission.LevelUser:
	default:
		return fmt.Errorf("rules can be removed from level session, project or user, not %q", level)
	}
	path := s.fileOf(level)
	err := updatePolicy(path, func(rules []Rule) ([]Rule, error) {
		n := len(rules)
		rules = slices.DeleteFunc(rules, func(r Rule) bool { return r.ID == id })
		if len(rules) == n {
			return nil, fmt.Errorf("%s: rule %q: %w", path, id, ErrNotFound)
		}
		return rules, nil
	})
	if err != nil {
		return err
	}
	if level == permission.LevelProject {
		if err := untrustRule(s.configHome, s.project.Root, id); err != nil {
			return err
		}
	}
	return s.reload(level)
}

// ErrLinkedPolicy is returned when the project's .custom-agent directory or
// policy file is a symbolic link: a repository could point it at the
// user's own policy, and "always allow in this project" would then write a
// user rule that holds everywhere.
var ErrLinkedPolicy = errors.New("the project's policy path is a symbolic link; the rule is not written")

// noLinkBelow fails when a component of path beneath root is a symbolic
// link.
func noLinkBelow(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%w: %s is not inside %s", ErrLinkedPolicy, path, root)
	}
	p := root
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			return fmt.Errorf("%w: %s points to %s", ErrLinkedPolicy, p, target)
		}
	}
	return nil
}

// Ignored holds an untrusted project's allow rules, which the engine is
// not given: for saying, when a call is not allowed, that one of them
// would have allowed it had the project been trusted.
type Ignored struct {
	// Root is the project's directory, for "custom-agent trust ROOT".
	Root  string
	rules []permission.Rule
}

// Ignored returns the allow rules of the project that count only once it
// is trusted (the project as a whole, or the rule on its own).
func (s *Store) Ignored() Ignored {
	s.mu.Lock()
	defer s.mu.Unlock()
	ig := Ignored{Root: s.project.Root}
	for _, e := range s.proj {
		if e.Untrusted && e.Rule.Decision == permission.Allow {
			ig.rules = append(ig.rules, e.Rule.Permission(permission.LevelProject, s.project.File))
		}
	}
	return ig
}

// Would returns the ids of the ignored rules that, each on its own and
// trusted, would allow req (whose Policy is not used).
func (ig Ignored) Would(req permission.Request) []string {
	var ids []string
	for _, r := range ig.rules {
		pol, err := permission.Compile([]permission.Rule{r})
		if err != nil {
			continue
		}
		q := req
		q.Policy = pol
		if d := (permission.Engine{}).Check(q); d.Allowed() && d.Rule != nil && d.Rule.ID == r.ID {
			ids = append(ids, r.ID)
		}
	}
	return ids
}
