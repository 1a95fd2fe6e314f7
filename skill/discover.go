package skill

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Where skills live, relative to a project directory and to the config
// home.
const (
	ProjectDir = ".custom-agent/skills"
	UserDir    = "custom-agent/skills"
)

// MaxPerSource caps the skills read from one skills directory; the rest
// are reported and not offered.
const MaxPerSource = 100

// Options say where to look.
type Options struct {
	// Cwd is the session's working directory (absolute). The project's
	// skills are the nearest .custom-agent/skills from Cwd upwards, no
	// higher than the repository root (the first directory holding .git),
	// or in Cwd alone when it is in no repository: the search policy.json
	// uses, so a stray folder in /tmp or $HOME never applies.
	Cwd string
	// ConfigHome is the XDG config home; "" reads no user skills.
	ConfigHome string
	// Trusted reports whether the project rooted at root (canonical: the
	// directory holding .custom-agent) is trusted; policy.IsTrusted fits.
	// Nil, or an error, means untrusted.
	Trusted func(root string) (bool, error)
}

// Catalog is the skills offered to the model, by name. It is immutable and
// safe for concurrent use.
type Catalog struct {
	list []*Skill // by name
}

// NewCatalog builds a catalog from skills; a later skill of a name already
// present is dropped. It is for tests and callers that find skills
// themselves.
func NewCatalog(skills ...*Skill) *Catalog {
	c := &Catalog{}
	for _, s := range skills {
		if _, ok := c.Lookup(s.Name); !ok {
			c.list = append(c.list, s)
		}
	}
	slices.SortFunc(c.list, func(a, b *Skill) int { return strings.Compare(a.Name, b.Name) })
	return c
}

// Lookup returns the skill named name.
func (c *Catalog) Lookup(name string) (*Skill, bool) {
	if c == nil {
		return nil, false
	}
	for _, s := range c.list {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// List returns the skills by name. The slice is a copy; the skills are
// shared and must not be modified.
func (c *Catalog) List() []*Skill {
	if c == nil {
		return nil
	}
	return slices.Clone(c.list)
}

// Len is how many skills are offered.
func (c *Catalog) Len() int {
	if c == nil {
		return 0
	}
	return len(c.list)
}

// ErrShadowed: a project skill has the name of a user skill. The user's
// wins, always (as in Claude Code, where personal skills beat project
// skills): a repository cannot replace instructions the user wrote.
var ErrShadowed = errors.New("a user skill of the same name is used instead")

// ErrNotOffered: the skill says disable-model-invocation: true, and only
// the model starts skills here.
var ErrNotOffered = errors.New("not offered to the model: it says disable-model-invocation: true")

// Discover reads the user's and the project's skills. It never fails as a
// whole: a skill that cannot be read or parsed, is shadowed or is too many
// is left out and reported in problems (each an *Error naming the file),
// and the rest are offered. A skill whose tool list has entries that narrow
// less than they say (a pattern, an unknown name) is offered and its notes
// are reported too.
func Discover(o Options) (*Catalog, []error) {
	var problems []error
	var user, project []*Skill
	if o.ConfigHome != "" {
		dir := filepath.Join(o.ConfigHome, UserDir)
		user, problems = readDir(dir, "", SourceUser, true, problems)
	}
	if o.Cwd != "" {
		root, dir, err := findProject(o.Cwd)
		switch {
		case err != nil:
			problems = append(problems, fmt.Errorf("finding the project's skills: %w", err))
		case dir != "":
			trusted := false
			if o.Trusted != nil {
				t, err := o.Trusted(root)
				if err != nil {
					problems = append(problems, fmt.Errorf("project skills in %s are taken as untrusted: %w", dir, err))
				}
				trusted = t && err == nil
			}
			project, problems = readDir(dir, root, SourceProject, trusted, problems)
		}
	}
	all := slices.Clone(user)
	for _, p := range project {
		if u := slices.IndexFunc(user, func(u *Skill) bool { return u.Name == p.Name }); u >= 0 {
			problems = append(problems, &Error{Path: p.Path, Err: fmt.Errorf("%w (%s)", ErrShadowed, user[u].Path)})
			continue
		}
		all = append(all, p)
	}
	var offered []*Skill
	for _, s := range all {
		if s.DisableModelInvocation {
			problems = append(problems, &Error{Path: s.Path, Err: ErrNotOffered})
			continue
		}
		for _, n := range s.Notes {
			problems = append(problems, &Error{Path: s.Path, Err: errors.New("allowed-tools: " + n)})
		}
		offered = append(offered, s)
	}
	return NewCatalog(offered...), problems
}

// findProject returns the project's skills directory and the directory
// holding its .custom-agent (root), or "" when there is none.
func findProject(cwd string) (root, dir string, err error) {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	last := abs
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			last = d
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("finding the repository root: %w", err)
		}
		if filepath.Dir(d) == d {
			last = abs // in no repository: cwd alone
			break
		}
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ProjectDir)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return d, p, nil
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			return "", "", err
		}
		if d == last || filepath.Dir(d) == d {
			return "", "", nil
		}
	}
}

// readDir reads every <name>/SKILL.md in dir. Each must resolve inside
// dir (symbolic links resolved), and a project's dir inside its root, so a
// repository cannot make a skill of ~/.ssh/config or /etc/passwd. root is
// "" for the user's directory, which may itself be a link (to dotfiles).
func readDir(dir, root string, src Source, trusted bool, problems []error) ([]*Skill, []error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, problems
	}
	if err != nil {
		return nil, append(problems, fmt.Errorf("reading skills: %w", err))
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, append(problems, fmt.Errorf("reading skills: %w", err))
	}
	if root != "" {
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, append(problems, fmt.Errorf("reading skills: %w", err))
		}
		if !inside(realRoot, realDir) {
			return nil, append(problems, &Error{Path: dir, Err: ErrOutside})
		}
	}
	var out []*Skill
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name, FileName)
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			continue // a folder that is not a skill
		}
		if len(out) == MaxPerSource {
			problems = append(problems, &Error{Path: path, Err: fmt.Errorf("more than %d skills in %s; the rest are not read", MaxPerSource, dir)})
			break
		}
		s, err := readSkill(path, name, realDir)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		s.Source, s.Trusted = src, trusted
		out = append(out, s)
	}
	return out, problems
}

func readSkill(path, folder, within string) (*Skill, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	if !inside(within, real) {
		return nil, &Error{Path: path, Err: ErrOutside}
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Path: path, Err: errors.New("SKILL.md is not a regular file")}
	}
	if st.Size() > MaxFileBytes {
		return nil, &Error{Path: path, Err: ErrTooLarge}
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	s, err := Parse(real, folder, b)
	if err != nil {
		return nil, err
	}
	s.Dir = filepath.Dir(real)
	return s, nil
}

// inside reports whether path is dir or below it (both canonical).
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
