package skill_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/skill"
)

func writeSkill(t *testing.T, skillsDir, name, front string) string {
	t.Helper()
	dir := filepath.Join(skillsDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, skill.FileName)
	if err := os.WriteFile(path, []byte("---\n"+front+"\n---\nbody of "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// layout is a repository (with .git) holding cwd two levels down, and a
// config home.
type layout struct {
	repo, cwd, configHome string
	project, user         string // the skills directories
}

func newLayout(t *testing.T) layout {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := layout{repo: filepath.Join(base, "repo"), configHome: filepath.Join(base, "config")}
	l.cwd = filepath.Join(l.repo, "a", "b")
	l.project = filepath.Join(l.repo, skill.ProjectDir)
	l.user = filepath.Join(l.configHome, skill.UserDir)
	for _, d := range []string{filepath.Join(l.repo, ".git"), l.cwd, l.project, l.user} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func names(c *skill.Catalog) []string {
	var out []string
	for _, s := range c.List() {
		out = append(out, s.Name+"/"+string(s.Source)+"/"+map[bool]string{true: "trusted", false: "untrusted"}[s.Trusted])
	}
	return out
}

func trusting(roots ...string) func(string) (bool, error) {
	return func(root string) (bool, error) {
		for _, r := range roots {
			if r == root {
				return true, nil
			}
		}
		return false, nil
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	writeSkill(t, l.user, "review", "name: review\ndescription: the user's review")
	shadowed := writeSkill(t, l.project, "review", "name: review\ndescription: the repository's review\nallowed-tools: Read")
	writeSkill(t, l.project, "lint", "name: lint\ndescription: run the linters\nallowed-tools: Bash(make lint:*)")
	writeSkill(t, l.project, "broken", "name: other\ndescription: wrong name")
	writeSkill(t, l.project, "manual", "name: manual\ndescription: by hand only\ndisable-model-invocation: true")
	os.MkdirAll(filepath.Join(l.project, "not-a-skill"), 0o755)
	writeSkill(t, l.project, ".hidden", "name: hidden\ndescription: hidden")

	cat, problems := skill.Discover(skill.Options{Cwd: l.cwd, ConfigHome: l.configHome})
	if got, want := strings.Join(names(cat), " "), "lint/project/untrusted review/user/trusted"; got != want {
		t.Errorf("offered %s, want %s", got, want)
	}
	r, _ := cat.Lookup("review")
	if r.Description != "the user's review" || r.Narrows() {
		t.Errorf("review is not the user's: %+v", r)
	}
	var shadow, wrong, manual, pattern bool
	for _, p := range problems {
		var se *skill.Error
		if !errors.As(p, &se) {
			t.Errorf("problem %v is not a *skill.Error", p)
			continue
		}
		switch {
		case errors.Is(p, skill.ErrShadowed) && se.Path == shadowed:
			shadow = true
		case strings.Contains(p.Error(), `"other" is not the folder's name "broken"`):
			wrong = true
		case errors.Is(p, skill.ErrNotOffered):
			manual = true
		case strings.Contains(p.Error(), "Bash(make lint:*): read as shell"):
			pattern = true
		default:
			t.Errorf("unexpected problem: %v", p)
		}
	}
	if !shadow || !wrong || !manual || !pattern {
		t.Errorf("problems %v: shadowed %v, wrong name %v, not offered %v, pattern %v", problems, shadow, wrong, manual, pattern)
	}
}

func TestDiscoverTrust(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	writeSkill(t, l.project, "lint", "name: lint\ndescription: d")
	for _, tt := range []struct {
		name    string
		trusted func(string) (bool, error)
		want    string
	}{
		{"no trust function", nil, "lint/project/untrusted"},
		{"another project trusted", trusting(l.cwd), "lint/project/untrusted"},
		{"this project trusted", trusting(l.repo), "lint/project/trusted"},
		{"trust unreadable", func(string) (bool, error) { return true, errors.New("bad trust file") }, "lint/project/untrusted"},
	} {
		cat, _ := skill.Discover(skill.Options{Cwd: l.cwd, ConfigHome: l.configHome, Trusted: tt.trusted})
		if got := strings.Join(names(cat), " "); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestDiscoverNearestAndRepositoryBound(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	writeSkill(t, l.project, "top", "name: top\ndescription: d")
	near := filepath.Join(l.repo, "a", skill.ProjectDir)
	writeSkill(t, near, "near", "name: near\ndescription: d")
	cat, _ := skill.Discover(skill.Options{Cwd: l.cwd})
	if got := strings.Join(names(cat), " "); got != "near/project/untrusted" {
		t.Errorf("from %s: %s, want the nearest skills only", l.cwd, got)
	}
	// Above the repository root nothing is read.
	above := filepath.Join(filepath.Dir(l.repo), skill.ProjectDir)
	writeSkill(t, above, "above", "name: above\ndescription: d")
	os.RemoveAll(near)
	os.RemoveAll(l.project)
	cat, _ = skill.Discover(skill.Options{Cwd: l.cwd})
	if cat.Len() != 0 {
		t.Errorf("skills above the repository root were read: %v", names(cat))
	}
	// Outside any repository only cwd itself is searched.
	plain := filepath.Join(filepath.Dir(l.repo), "plain", "sub")
	os.MkdirAll(plain, 0o755)
	cat, _ = skill.Discover(skill.Options{Cwd: plain})
	if cat.Len() != 0 {
		t.Errorf("a parent's skills were read outside a repository: %v", names(cat))
	}
}

func TestDiscoverSymlinks(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	secret := filepath.Join(filepath.Dir(l.repo), "secret.md")
	os.WriteFile(secret, []byte("---\nname: leak\ndescription: outside\n---\nsecret\n"), 0o600)
	os.MkdirAll(filepath.Join(l.project, "leak"), 0o755)
	if err := os.Symlink(secret, filepath.Join(l.project, "leak", skill.FileName)); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	// A link to a folder outside, too.
	outDir := filepath.Join(filepath.Dir(l.repo), "out")
	writeSkill(t, outDir, "far", "name: far\ndescription: outside")
	os.Symlink(filepath.Join(outDir, "far"), filepath.Join(l.project, "far"))
	// A link inside the skills directory is fine.
	writeSkill(t, l.project, "real", "name: real\ndescription: d")
	os.MkdirAll(filepath.Join(l.project, "shared"), 0o755)
	os.WriteFile(filepath.Join(l.project, "shared", "alias.md"), []byte("---\nname: alias\ndescription: d\n---\n"), 0o644)
	os.MkdirAll(filepath.Join(l.project, "alias"), 0o755)
	os.Symlink(filepath.Join("..", "shared", "alias.md"), filepath.Join(l.project, "alias", skill.FileName))

	cat, problems := skill.Discover(skill.Options{Cwd: l.cwd})
	if got := strings.Join(names(cat), " "); got != "alias/project/untrusted real/project/untrusted" {
		t.Errorf("offered %s", got)
	}
	outside := 0
	for _, p := range problems {
		if errors.Is(p, skill.ErrOutside) {
			outside++
		}
		if strings.Contains(p.Error(), "secret") && !strings.Contains(p.Error(), "secret.md") {
			t.Errorf("a problem quotes the file's content: %v", p)
		}
	}
	if outside != 2 {
		t.Errorf("problems %v: want 2 refused as outside", problems)
	}

	// The project's skills directory itself leading out of the repository.
	l2 := newLayout(t)
	os.RemoveAll(l2.project)
	if err := os.Symlink(l.user, l2.project); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, l.user, "mine", "name: mine\ndescription: d")
	cat, problems = skill.Discover(skill.Options{Cwd: l2.cwd})
	if cat.Len() != 0 || len(problems) != 1 || !errors.Is(problems[0], skill.ErrOutside) {
		t.Errorf("a skills directory linked out of the repository: offered %v, problems %v", names(cat), problems)
	}
}

func TestDiscoverRefusesNonRegularAndLarge(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	os.MkdirAll(filepath.Join(l.user, "dir", skill.FileName), 0o755)
	big := writeSkill(t, l.user, "big", "name: big\ndescription: d")
	os.WriteFile(big, []byte("---\nname: big\ndescription: d\n---\n"+strings.Repeat("x", skill.MaxFileBytes)), 0o644)
	cat, problems := skill.Discover(skill.Options{ConfigHome: l.configHome})
	if cat.Len() != 0 || len(problems) != 2 {
		t.Fatalf("offered %v, problems %v", names(cat), problems)
	}
	if !errors.Is(problems[0], skill.ErrTooLarge) || !strings.Contains(problems[1].Error(), "not a regular file") {
		t.Errorf("problems %v", problems)
	}
}

func TestDiscoverCap(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	for i := range skill.MaxPerSource + 2 {
		n := fmt.Sprintf("s%03d", i)
		writeSkill(t, l.user, n, "name: "+n+"\ndescription: d")
	}
	cat, problems := skill.Discover(skill.Options{ConfigHome: l.configHome})
	if cat.Len() != skill.MaxPerSource || len(problems) != 1 {
		t.Errorf("offered %d, problems %v", cat.Len(), problems)
	}
}
