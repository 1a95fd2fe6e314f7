package shellrisk

import "testing"

// TestReadOnly checks the read-only form of every simple command of a
// command line, as Analyze reports them: "" for one that is not read-only.
func TestReadOnly(t *testing.T) {
	env := Env{Cwd: "/home/u/proj", Home: "/home/u"}
	for _, tc := range []struct {
		cmd   string
		forms []string
	}{
		{"ls -la", []string{"ls"}},
		{"ls *.go", []string{"ls"}},
		{"cat README.md", []string{"cat"}},
		{"cat -n *.go", []string{"cat"}},
		{"head -n 20 main.go", []string{"head"}},
		{"head -5 main.go", []string{"head"}},
		{"tail -f log.txt", []string{""}},
		{"wc -l main.go", []string{"wc"}},
		{"wc -l *.go", []string{""}},
		{"wc -l -- *.go", []string{"wc"}},
		{"grep -rn TODO src/", []string{"grep"}},
		{"grep -f pats x", []string{""}},
		{"grep --frobnicate x y", []string{""}},
		{"egrep -i 'a|b' x", []string{"grep"}},
		{"git status", []string{"git status"}},
		{"git status --porcelain=v2 -uno", []string{"git status"}},
		{"git --no-pager diff --stat", []string{"git diff"}},
		{"git diff --ext-diff", []string{""}},
		{"git diff --no-index a b", []string{""}},
		{"git diff --output=x", []string{""}},
		{"git diff --textconv", []string{""}},
		{"git log --oneline -n 10", []string{"git log"}},
		{"git log -5 --stat", []string{"git log"}},
		{"git log --output=x", []string{""}},
		{"git log --outp=x", []string{""}},
		{"git log --show-signature", []string{""}},
		// A signature placeholder runs gpg as --show-signature does.
		{"git log --format=%GS", []string{""}},
		{"git log '--pretty=format:%h %G?'", []string{""}},
		{"git log --form=%GK", []string{""}},
		{"git show -s --format=%GG HEAD", []string{""}},
		{"git shortlog --format=%GS", []string{""}},
		{"git branch --format='%(signature)'", []string{""}},
		{"git tag -l --format='%(*raw)'", []string{""}}, // a blob a tag names, printed as it is
		{"git tag -l '--format=%(raw)'", []string{""}},
		{"git branch --format='%(raw:size)'", []string{""}},
		{"git tag -l --format='%(refname) %(subject)'", []string{"git tag"}},
		{"git log --format='%h %s'", []string{"git log"}},
		{"git log --help", []string{""}}, // git help log: man, or the repository's man.<tool>.cmd
		{"git log '--format=%+GS'", []string{""}},
		{"git log '--format=%h%-G?'", []string{""}},
		{"git log '--format=% GK'", []string{""}},
		{"git log '--format=%%G is literal %h'", []string{""}}, // over-asks: %% then G; fine
		{"git status --help", []string{""}},
		// -v prints the staged diff (and -vv the unstaged one), which git
		// diff's own checks judge: a tracked .env's lines, a submodule's.
		{"git status -v", []string{""}},
		{"git status -sbv", []string{""}},
		{"git status --verbose", []string{""}},
		{"git status -sb", []string{"git status"}},
		{"git log -L 1,5:main.go", []string{""}},
		{"git -c core.pager=less log", []string{""}},
		{"git -p log", []string{""}},
		{"git --git-dir=/x log", []string{""}},
		{"git show HEAD~1 --stat", []string{"git show"}},
		{"git branch", []string{"git branch"}},
		{"git branch -a -vv", []string{"git branch"}},
		{"git branch new-feature", []string{""}},
		{"git branch -D old", []string{""}},
		{"git branch --list 'feat/*'", []string{"git branch"}},
		{"git tag", []string{"git tag"}},
		{"git tag v1.0", []string{""}},
		{"git tag -l 'v1.*'", []string{"git tag"}},
		{"git tag -v v1.0", []string{""}},
		{"git blame -L 10,20 main.go", []string{"git blame"}},
		{"git blame --contents x main.go", []string{""}},
		{"git rev-parse --show-toplevel", []string{"git rev-parse"}},
		{"git rev-parse --abbrev-ref HEAD", []string{"git rev-parse"}},
		{"git ls-files -m", []string{"git ls-files"}},
		{"git grep -n TODO", []string{"git grep"}},
		{"git grep -O TODO", []string{""}},
		{"git shortlog -sn", []string{"git shortlog"}},
		{"git describe --tags --always", []string{"git describe"}},
		{"git push", []string{""}},
		{"git stash", []string{""}},
		{"find . -name '*.go'", []string{"find"}},
		{"find . -name '*.go' -type f -print", []string{"find"}},
		{"find . -name x -delete", []string{""}},
		{"find . -fprint out", []string{""}},
		{"find * -name x", []string{""}},
		{"sed -n 1,10p main.go", []string{"sed"}},
		{"sed -n '/start/,/end/p' x", []string{"sed"}},
		{"sed 's/a/b/g; s/c/d/' x", []string{"sed"}},
		{"sed -i s/a/b/ x", []string{""}},
		{"sed s/a/b/w out x", []string{""}},
		{"sed s/a/b/e x", []string{""}},
		{"sed '1e id' x", []string{""}},
		{"sed 'r /etc/passwd' x", []string{""}},
		{"sed -f script.sed x", []string{""}},
		{"sed ':a;N;$!ba;s/\\n/ /g' x", []string{"sed"}},
		{"sed 'b x w out' x", []string{""}},
		{"sed -n '/a/{p;q}' x", []string{"sed"}},
		{"awk '{print $1}' f", []string{"awk"}},
		{"awk -F: 'NR>1 {print $1}' f", []string{"awk"}},
		{"awk '{print $1 > \"out\"}' f", []string{""}},
		{"awk '{system(\"id\")}' f", []string{""}},
		{"awk '{print | \"sh\"}' f", []string{""}},
		{"awk 'BEGIN{\"id\" | getline x}'", []string{""}},
		{"awk 'BEGIN{print ENVIRON[\"HOME\"]}'", []string{""}},
		{"awk -f prog.awk f", []string{""}},
		{"awk '/\"/ {system(\"x\")} /\"/' f", []string{""}},
		{"jq -r .name package.json", []string{"jq"}},
		{"jq --arg v 1 '.a == $v' x.json", []string{"jq"}},
		{"jq -n env", []string{""}},
		{"jq -n '\"\\(env.HOME)\"'", []string{""}},
		{"jq --rawfile k /etc/passwd . x", []string{""}},
		{"sort -u names.txt", []string{"sort"}},
		{"sort -o out in", []string{""}},
		{"sort --compress-program=sh x", []string{""}},
		{"uniq -c x", []string{"uniq"}},
		{"uniq a b", []string{""}},
		{"cut -d: -f1 x", []string{"cut"}},
		{"tr a-z A-Z", []string{"tr"}},
		{"sha256sum x", []string{"sha256sum"}},
		{"sha256sum -c x.sum", []string{""}},
		{"rg -n TODO src", []string{"rg"}},
		{"rg --pre cat x", []string{""}},
		{"rg -z x", []string{""}},
		{"go version", []string{"go version"}},
		{"go env GOPATH", []string{"go env"}},
		{"go env -w GOFLAGS=-x", []string{""}},
		{"go list -m -json all", []string{"go list"}},
		{"go list -f '{{.Dir}}' ./...", []string{"go list"}},
		{"go list -export ./...", []string{""}},
		{"go list -toolexec x ./...", []string{""}},
		{"go doc fmt.Println", []string{"go doc"}},
		{"go build ./...", []string{""}},
		{"node --version", []string{"node --version"}},
		{"python3 -V", []string{"python3 --version"}},
		{"cargo --version", []string{""}},
		{"node -e 1", []string{""}},
		{"echo hi", []string{"echo"}},
		{"printf -v x hi", []string{""}},
		{"date +%s", []string{"date"}},
		{"date -s 2020-01-01", []string{""}},
		{"date 0101", []string{""}},
		{"tree -L 2", []string{"tree"}},
		{"tree -o out", []string{""}},
		{"diff -u a b", []string{"diff"}},
		{"diff -l a b", []string{""}},
		{"file x", []string{"file"}},
		{"file -z x", []string{""}},
		{"FOO=1 git status", []string{""}},
		{"timeout 5 cat x", []string{""}},
		{"sudo cat x", []string{""}},
		{"./ls", []string{""}},
		{"xargs cat", []string{""}},
		{"cd /home/u/proj", []string{"cd"}},
		{"git status && git diff --stat", []string{"git status", "git diff"}},
		{"cat a | grep x", []string{"cat", "grep"}},
	} {
		r := Analyze(tc.cmd, env)
		var got []string
		for i := range r.Commands {
			got = append(got, ReadOnly(&r.Commands[i]))
		}
		if len(tc.forms) == 1 && tc.forms[0] == "" {
			// Not read-only: no command of it may be, the ones the
			// analysis found inside it included (sed e, awk system).
			for _, g := range got {
				if g != "" {
					t.Errorf("%s: forms %q, want none", tc.cmd, got)
					break
				}
			}
			continue
		}
		if len(got) != len(tc.forms) {
			t.Errorf("%s: forms %q, want %q", tc.cmd, got, tc.forms)
			continue
		}
		for i := range got {
			if got[i] != tc.forms[i] {
				t.Errorf("%s: forms %q, want %q", tc.cmd, got, tc.forms)
				break
			}
		}
	}
}
