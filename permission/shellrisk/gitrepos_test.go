package shellrisk

import (
	"slices"
	"testing"
)

// TestGitRepos: every git command that runs a subcommand names the
// directory it runs in (Result.Repos), where git reads the repository's
// own configuration; one pointed elsewhere by its options, or at a
// directory known only when it runs, is "" (unknown).
func TestGitRepos(t *testing.T) {
	t.Parallel()
	env := Env{Cwd: "/work/p", Home: "/home/u"}
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"git status", []string{"/work/p"}},
		{"git -C sub log --oneline", []string{"/work/p/sub"}},
		{"git -C sub -C ../other status", []string{"/work/p/sub/../other"}}, // sub may be a link: chdir follows it first
		{"git -C .. status", []string{"/work/p/.."}},
		{"git -C l/.. status", []string{"/work/p/l/.."}},
		{"cd l/.. && git status", []string{"/work/p"}}, // the shell's cd is logical
		{"cd -P l/.. && git status", []string{"/work/p/l/.."}},
		{"cd -P l && git -C .. log", []string{"/work/p/l/.."}},
		{"cd src && git diff", []string{"/work/p/src"}},
		{"git status; git -C /srv/r branch; git status", []string{"/work/p", "/srv/r"}},
		{"git --no-pager -P show HEAD:go.mod", []string{"/work/p"}},
		{"git --git-dir=/srv/r/.git status", []string{""}},
		{"git --work-tree ../w status", []string{""}},
		{"git -C \"$D\" status", []string{""}},
		{"ls | xargs git log", []string{"/work/p"}},
		{"git --version", nil},
		{"git", nil},
		{"echo git status", nil},
	} {
		got := Analyze(c.cmd, env).Repos
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: Repos = %q, want %q", c.cmd, got, c.want)
		}
	}
}
