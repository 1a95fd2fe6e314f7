package policy

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/custom-agent/custom-agent/support/strictjson"
)

// trustList is the user's trust file, $XDG_CONFIG_HOME/custom-agent/trusted.json:
//
//	{"version": 1,
//	 "projects": [{"root": "/home/me/src/app"}],
//	 "rules": [{"root": "/home/me/src/lib", "id": "npm-test", "digest": "sha256:…"}]}
//
// A listed project's allow rules all count. A listed rule is one the user
// added to a project they do not trust ("always allow in this project"):
// that rule counts, as long as its id and matchers are unchanged (digest),
// and nothing else in the file does.
type trustList struct {
	Version  int              `json:"version"`
	Projects []trustedProject `json:"projects"`
	Rules    []trustedRule    `json:"rules,omitempty"`
}

type trustedProject struct {
	Root string `json:"root"`
}

type trustedRule struct {
	Root   string `json:"root"`
	ID     string `json:"id"`
	Digest string `json:"digest"`
}

// trustPath returns the trust file under configHome.
func trustPath(configHome string) string { return filepath.Join(configHome, AppDir, TrustFile) }

// readTrust reads the trust file strictly; a missing file trusts nothing.
func readTrust(path string) (*trustList, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &trustList{Version: Version}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the trusted projects: %w", err)
	}
	t, err := decodeTrust(path, b)
	if err != nil {
		return nil, err
	}
	if t.Version != Version {
		return nil, &Error{Path: path, Field: "version", Err: fmt.Errorf("%d is not supported (want %d)", t.Version, Version)}
	}
	for _, p := range t.Projects {
		if !filepath.IsAbs(p.Root) {
			return nil, &Error{Path: path, Field: "projects", Err: fmt.Errorf("%q is not an absolute path", p.Root)}
		}
	}
	return t, nil
}

func (t *trustList) trusts(root string) bool {
	return slices.ContainsFunc(t.Projects, func(p trustedProject) bool { return p.Root == root })
}

func (t *trustList) trustsRule(root string, r *Rule) bool {
	d := digest(r)
	return slices.ContainsFunc(t.Rules, func(tr trustedRule) bool { return tr.Root == root && tr.ID == r.ID && tr.Digest == d })
}

// updateTrust edits the trust file under its directory's lock.
func updateTrust(configHome string, change func(t *trustList) error) error {
	path := trustPath(configHome)
	unlock, err := lockDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer unlock()
	t, err := readTrust(path)
	if err != nil {
		return err
	}
	if err := change(t); err != nil {
		if errors.Is(err, errNoChange) {
			return nil
		}
		return err
	}
	slices.SortFunc(t.Projects, func(a, b trustedProject) int { return cmp.Compare(a.Root, b.Root) })
	slices.SortFunc(t.Rules, func(a, b trustedRule) int {
		if c := cmp.Compare(a.Root, b.Root); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if t.Projects == nil {
		t.Projects = []trustedProject{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return err
	}
	return writeAtomic(path, b.Bytes())
}

// digest identifies a rule by what it matches and decides, so that a
// trusted rule edited by someone else is no longer trusted.
func digest(r *Rule) string {
	c := *r
	c.Comment, c.Examples = "", nil
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Trust records the project of dir (see FindProject) as trusted in the
// user config under configHome, so that its allow rules count. It returns
// the project trusted.
func Trust(configHome, dir string) (Project, error) {
	p, err := FindProject(dir)
	if err != nil {
		return p, err
	}
	err = updateTrust(configHome, func(t *trustList) error {
		if t.trusts(p.Root) {
			return errNoChange
		}
		t.Projects = append(t.Projects, trustedProject{Root: p.Root})
		return nil
	})
	return p, err
}

// Untrust removes the project of dir, and every single rule of it the user
// trusted, from the trust list. It reports whether anything was removed,
// and the ids of the single rules that no longer count, so that the person
// is told of each.
func Untrust(configHome, dir string) (Project, bool, []string, error) {
	p, err := FindProject(dir)
	if err != nil {
		return p, false, nil, err
	}
	removed := false
	var rules []string
	err = updateTrust(configHome, func(t *trustList) error {
		n := len(t.Projects)
		t.Projects = slices.DeleteFunc(t.Projects, func(tp trustedProject) bool { return tp.Root == p.Root })
		t.Rules = slices.DeleteFunc(t.Rules, func(tr trustedRule) bool {
			if tr.Root == p.Root {
				rules = append(rules, tr.ID)
				return true
			}
			return false
		})
		removed = len(t.Projects) != n || len(rules) > 0
		if !removed {
			return errNoChange
		}
		return nil
	})
	return p, removed, rules, err
}

// IsTrusted reports whether the project rooted at root (canonical) is
// trusted.
func IsTrusted(configHome, root string) (bool, error) {
	t, err := readTrust(trustPath(configHome))
	if err != nil {
		return false, err
	}
	return t.trusts(root), nil
}

// trustRule records one rule of an untrusted project as trusted.
func trustRule(configHome, root string, r *Rule) error {
	d := digest(r)
	return updateTrust(configHome, func(t *trustList) error {
		if t.trusts(root) {
			return errNoChange
		}
		t.Rules = slices.DeleteFunc(t.Rules, func(tr trustedRule) bool { return tr.Root == root && tr.ID == r.ID })
		t.Rules = append(t.Rules, trustedRule{Root: root, ID: r.ID, Digest: d})
		return nil
	})
}

// untrustRule forgets a single trusted rule (after it is removed).
func untrustRule(configHome, root, id string) error {
	return updateTrust(configHome, func(t *trustList) error {
		n := len(t.Rules)
		t.Rules = slices.DeleteFunc(t.Rules, func(tr trustedRule) bool { return tr.Root == root && tr.ID == id })
		if len(t.Rules) == n {
			return errNoChange
		}
		return nil
	})
}

// decodeTrust reads the trust file strictly, every error at its position.
func decodeTrust(path string, src []byte) (*trustList, error) {
	root, err := parseJSON(path, src, "trust object")
	if err != nil {
		return nil, err
	}
	p := &parsed{path: path, src: src}
	// fields reads the members of object o named in to (each a string,
	// or for "version" a whole number), refusing any other.
	fields := func(o *strictjson.Value, at string, to map[string]*string) error {
		if o.Kind != strictjson.Object {
			return p.errorAt(o.Off, "", at, fmt.Errorf("%s is not an object", o.Kind))
		}
		for i := range o.Items {
			m := &o.Items[i]
			s, ok := to[m.Key]
			if !ok {
				return p.errorAt(m.KeyOff, "", at, fmt.Errorf("unknown field %q", m.Key))
			}
			if m.Value.Kind != strictjson.String {
				return p.errorAt(m.Value.Off, "", at+"."+m.Key, fmt.Errorf("%s is not a string", m.Value.Kind))
			}
			*s = m.Value.Str
		}
		return nil
	}
	list := func(v *strictjson.Value, at string) error {
		if v.Kind != strictjson.List && v.Kind != strictjson.Null {
			return p.errorAt(v.Off, "", at, fmt.Errorf("%s is not a list", v.Kind))
		}
		return nil
	}
	t := &trustList{}
	if root.Kind != strictjson.Object {
		return nil, p.errorAt(root.Off, "", "", fmt.Errorf("the trust file is a JSON object, not a %s", root.Kind))
	}
	for i := range root.Items {
		m := &root.Items[i]
		switch m.Key {
		case "version":
			n, err := wholeNumber(&m.Value)
			if err != nil {
				return nil, p.errorAt(m.Value.Off, "", "version", err)
			}
			t.Version = n
		case "projects":
			if err := list(&m.Value, m.Key); err != nil {
				return nil, err
			}
			for j := range m.Value.Items {
				var tp trustedProject
				if err := fields(&m.Value.Items[j].Value, "projects["+strconv.Itoa(j)+"]", map[string]*string{"root": &tp.Root}); err != nil {
					return nil, err
				}
				t.Projects = append(t.Projects, tp)
			}
		case "rules":
			if err := list(&m.Value, m.Key); err != nil {
				return nil, err
			}
			for j := range m.Value.Items {
				var tr trustedRule
				if err := fields(&m.Value.Items[j].Value, "rules["+strconv.Itoa(j)+"]", map[string]*string{"root": &tr.Root, "id": &tr.ID, "digest": &tr.Digest}); err != nil {
					return nil, err
				}
				t.Rules = append(t.Rules, tr)
			}
		default:
			return nil, p.errorAt(m.KeyOff, "", "", fmt.Errorf("unknown field %q (the trust file has version, projects and rules)", m.Key))
		}
	}
	return t, nil
}

// TrustedList is the user's trust file as read, for showing: the trusted
// projects and the single rules of untrusted projects the user trusted.
type TrustedList struct {
	Path     string
	Projects []string
	Rules    []TrustedRule
}

// TrustedRule is one rule of an untrusted project the user trusted.
type TrustedRule struct{ Root, ID string }

// ListTrusted reads the trust file under configHome (read-only; a missing
// file trusts nothing).
func ListTrusted(configHome string) (TrustedList, error) {
	path := trustPath(configHome)
	t, err := readTrust(path)
	if err != nil {
		return TrustedList{Path: path}, err
	}
	l := TrustedList{Path: path}
	for _, p := range t.Projects {
		l.Projects = append(l.Projects, p.Root)
	}
	for _, r := range t.Rules {
		l.Rules = append(l.Rules, TrustedRule{Root: r.Root, ID: r.ID})
	}
	return l, nil
}
