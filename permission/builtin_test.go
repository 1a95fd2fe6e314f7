package permission_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/permission/shellrisk"
)

// builtinPolicy compiles extra rules followed by the built-in rules, as
// the policy store gives them to the engine.
func builtinPolicy(t interface{ Fatal(...any) }, extra ...permission.Rule) *permission.Policy {
	p, err := permission.Compile(append(slices.Clone(extra), permission.BuiltinRules()...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func shellReq(cmd string, pol *permission.Policy) permission.Request {
	info, _ := permission.Builtin("shell")
	req := permission.Request{Tool: info, Args: map[string]any{"command": cmd}, Cwd: corpusCwd, Home: corpusHome,
		UserHomes: map[string]string{"u": corpusHome}, Policy: pol}
	req.Trees = cleanTrees(req)
	req.Repos = cleanRepos(req)
	req.GitConfigs = cleanGitConfigs(req)
	return req
}

// cleanGitConfigs plays the caller's read of git configurations
// (resolve.GitConfigsFor) on the imagined machine, whose repositories set
// nothing that runs a program.
func cleanGitConfigs(req permission.Request) map[string]string {
	dirs := permission.GitConfigsToRead(req)
	if len(dirs) == 0 {
		return nil
	}
	m := make(map[string]string, len(dirs))
	for _, d := range dirs {
		m[d] = ""
	}
	return m
}

// cleanRepos plays the caller's read of git indexes (resolve.ReposFor) on
// the imagined machine, whose repository tracks no secret file.
func cleanRepos(req permission.Request) map[string]permission.Repo {
	dirs := permission.ReposToScan(req)
	if len(dirs) == 0 {
		return nil
	}
	m := make(map[string]permission.Repo, len(dirs))
	for _, d := range dirs {
		m[d] = permission.Repo{Checked: true}
	}
	return m
}

// cleanTrees plays the caller's scan (resolve.TreesFor) on the imagined
// machine, where the project holds no secret file and no link: every tree
// asked about was scanned whole and found clean.
func cleanTrees(req permission.Request) map[string]permission.Tree {
	dirs := permission.TreesToScan(req)
	if len(dirs) == 0 {
		return nil
	}
	m := make(map[string]permission.Tree, len(dirs))
	for _, d := range dirs {
		m[d] = permission.Tree{Complete: true}
	}
	return m
}

const builtinReason = "Read-only command inside the project"

func TestBuiltinRulesFile(t *testing.T) {
	rules := permission.BuiltinRules()
	if len(rules) < 50 {
		t.Fatalf("%d built-in rules, want the issue's list", len(rules))
	}
	for _, r := range rules {
		if r.Level != permission.LevelBuiltin || r.Tool != "shell" || r.Decision != permission.Allow || !strings.HasPrefix(r.ID, "builtin:") {
			t.Errorf("rule %+v: want level builtin, tool shell, allow, id builtin:…", r)
		}
	}
	// A built-in rule is refused anywhere but the shell, or as ask.
	for _, r := range []permission.Rule{
		{ID: "x", Level: permission.LevelBuiltin, Tool: "*", Command: "ls", Decision: permission.Allow},
		{ID: "x", Level: permission.LevelBuiltin, Tool: "shell", Command: "ls", Decision: permission.Ask},
		{ID: "x", Level: permission.LevelBuiltin, Tool: "shell", Decision: permission.Allow},
		{ID: "x", Level: permission.LevelBuiltin, Tool: "shell", Command: "ls", Path: "**", Decision: permission.Allow},
	} {
		if _, err := permission.Compile([]permission.Rule{r}); err == nil {
			t.Errorf("Compile(%+v) = nil error", r)
		}
	}
}

// TestBuiltinExamples runs the examples of builtin/rules.json: a match
// example is allowed by that very rule, a notMatch example is not allowed
// at all.
func TestBuiltinExamples(t *testing.T) {
	var f struct {
		Rules []struct {
			ID       string `json:"id"`
			Examples struct {
				Match    []map[string]any `json:"match"`
				NotMatch []map[string]any `json:"notMatch"`
			} `json:"examples"`
		} `json:"rules"`
	}
	dec := json.NewDecoder(bytes.NewReader(permission.BuiltinJSON()))
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	pol := builtinPolicy(t)
	var eng permission.Engine
	n := 0
	for _, r := range f.Rules {
		for _, ex := range r.Examples.Match {
			n++
			req := shellReq(ex["command"].(string), pol)
			// In a session whose sandbox confines the call; the rules
			// that hold only there are checked without it below.
			req.Sandbox = &permission.SandboxFacts{}
			d := eng.Check(req)
			if strings.HasPrefix(r.ID, "builtin:go-") {
				bare := shellReq(ex["command"].(string), pol)
				if d := eng.Check(bare); d.Allowed() {
					t.Errorf("%s: %q allowed without a sandbox: %s", r.ID, bare.Args["command"], d.Reason)
				}
			}
			if !d.Allowed() || d.SourcedFrom != permission.FromOverride || d.Rule == nil || d.Rule.ID != r.ID ||
				d.Rule.Level != permission.LevelBuiltin || !strings.HasPrefix(d.Reason, builtinReason) {
				t.Errorf("%s: match example %q: got %s from %s (rule %+v): %s", r.ID, req.Args["command"], d.Decision, d.SourcedFrom, d.Rule, d.Reason)
			}
		}
		for _, ex := range r.Examples.NotMatch {
			n++
			req := shellReq(ex["command"].(string), pol)
			if d := eng.Check(req); d.Allowed() {
				t.Errorf("%s: notMatch example %q allowed: %s", r.ID, req.Args["command"], d.Reason)
			}
		}
	}
	if n < 100 {
		t.Errorf("%d examples; the file should keep at least 100", n)
	}
}

func TestBuiltinDecisions(t *testing.T) {
	var eng permission.Engine
	user := func(id, cmd string, v permission.Verdict) permission.Rule {
		return permission.Rule{ID: id, Level: permission.LevelUser, Tool: "shell", Command: cmd, Decision: v}
	}
	for _, tc := range []struct {
		cmd    string
		extra  []permission.Rule
		glob   map[string][]string
		want   permission.Verdict
		ruleID string
	}{
		{cmd: "git status && git diff --stat", want: permission.Allow, ruleID: "builtin:git-status"},
		{cmd: "cat a.txt | grep x", want: permission.Allow, ruleID: "builtin:cat"},
		{cmd: "cd /home/u/proj && git log --oneline -5", want: permission.Allow, ruleID: "builtin:cd"},
		{cmd: "cd src && ls", want: permission.Ask},
		{cmd: "git status; rm -rf dist", want: permission.Ask},
		{cmd: "cat a.txt | sh", want: permission.Ask},
		{cmd: "git log --oneline", extra: []permission.Rule{user("no-log", "git log", permission.Deny)}, want: permission.Deny, ruleID: "no-log"},
		{cmd: "git log --oneline", extra: []permission.Rule{user("ask-log", "git log", permission.Ask)}, want: permission.Ask, ruleID: "ask-log"},
		{cmd: "git log --oneline", extra: []permission.Rule{user("log", "git log", permission.Allow)}, want: permission.Allow, ruleID: "log"},
		{cmd: "git log --oneline", extra: []permission.Rule{{ID: "no-shell", Level: permission.LevelProject, Tool: "shell", Decision: permission.Ask, TightenOnly: true}},
			want: permission.Ask, ruleID: "no-shell"},
		{cmd: "cat *.txt", want: permission.Ask},
		{cmd: "cat *.txt", glob: map[string][]string{corpusCwd + "/*.txt": {corpusCwd + "/a.txt"}}, want: permission.Allow, ruleID: "builtin:cat"},
		{cmd: "cat *.txt", glob: map[string][]string{corpusCwd + "/*.txt": {corpusHome + "/.ssh/id_rsa"}}, want: permission.Deny},
		{cmd: "ls \x1b", want: permission.Ask},
		{cmd: "ls $(rm -rf x)", want: permission.Ask},
		{cmd: "git log > log.txt", want: permission.Ask},
		{cmd: "cat .env", want: permission.Deny},
		{cmd: "grep -r key ~/.aws", want: permission.Deny},
		{cmd: "cat ../x", want: permission.Ask},
		{cmd: "PAGER=sh git log", want: permission.Ask},
		{cmd: "nice git log", want: permission.Ask},
		{cmd: "git diff --ext-diff", want: permission.Ask},
		{cmd: "git log --output=x", want: permission.Ask},
		{cmd: "npm test", want: permission.Ask},
	} {
		req := shellReq(tc.cmd, builtinPolicy(t, tc.extra...))
		req.Expanded = tc.glob
		d := eng.Check(req)
		if d.Decision != tc.want || tc.ruleID != "" && (d.Rule == nil || d.Rule.ID != tc.ruleID) {
			t.Errorf("%q: got %s (rule %+v): %s; want %s by %q", tc.cmd, d.Decision, d.Rule, d.Reason, tc.want, tc.ruleID)
		}
		// The explanation agrees, and names a built-in rule's part.
		x := permission.Explain(req)
		if x.Decision.Decision != d.Decision {
			t.Errorf("%q: Explain decided %s, Check %s", tc.cmd, x.Decision.Decision, d.Decision)
		}
	}
}

// TestBuiltinCorpus decides the whole corpus (corpus.jsonl and corpus/*)
// with the built-in rules added to each line's own: no adversarial line is
// allowed that was not allowed without them, no mustNotAllow line is
// allowed, and the risk of every line is unchanged. It logs the share of
// benign lines asked before and after.
func TestBuiltinCorpus(t *testing.T) {
	cases := loadCorpus(t)
	eng := newCorpusEngine()
	var benign, askedBefore, askedAfter, adv int
	for i := range cases {
		c := &cases[i]
		req, err := corpusRequest(c)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		before := eng.Check(req)
		var own []permission.Rule
		if req.Policy != nil {
			own = req.Policy.Rules()
		}
		req.Policy = builtinPolicy(t, own...)
		after := eng.Check(req)
		if after.RiskAtDecision != before.RiskAtDecision {
			t.Errorf("%s: risk %s with built-in rules, %s without", c.ID, after.RiskAtDecision, before.RiskAtDecision)
		}
		if c.Benign {
			benign++
			if !before.Allowed() {
				askedBefore++
			}
			if !after.Allowed() {
				askedAfter++
			}
			continue
		}
		adv++
		if after.Allowed() && (c.MustNotAllow || !before.Allowed()) {
			t.Errorf("%s [%s] %s: allowed with the built-in rules (%s): %s\n\tsource: %s", c.ID, c.Tool, argsText(c), after.Rule.ID, after.Reason, c.Source)
		}
	}
	t.Logf("built-in rules over the corpus: %d adversarial lines, none newly allowed; benign lines not allowed: %d/%d before, %d/%d after",
		adv, askedBefore, benign, askedAfter, benign)
}

// Pools for the property test: read-only commands, their near misses, and
// shell constructs around them.
var (
	roCommands = []string{"ls -la", "cat README.md", "git status", "git diff --stat", "git log --oneline -5", "grep -rn TODO src",
		"head -n 5 go.mod", "wc -l main.go", "find . -name '*.go'", "sed -n 1,5p a.txt", "awk '{print $1}' a.txt", "jq .x a.json",
		"node --version", "echo ok", "cd /home/u/proj", "sort -u a.txt", "git branch", "cat *.go"}
	roNear = []string{"cat .env", "cat ~/.ssh/id_rsa", "git log --output=x", "git diff --ext-diff", "git branch x", "sed -i s/a/b/ a.txt",
		"awk '{system(\"id\")}' a.txt", "find . -delete", "go env -w X=1", "go version", "go list ./...", "cat ../x", "rm -rf dist", "npm test", "curl https://x.test",
		"tail -f log", "git -c core.pager=sh log", "sort -o out a.txt", "ls $(id)", "eval ls", "bash -c ls", "cd .. && ls",
		"ls \x1b[2J", "cat <(id)", "rg --pre sh x", "jq -n env", "((x))", "echo 'unterminated"}
	roAround = []string{"%s", "%s > out.txt", "%s 2>&1", "%s | head", "(%s)", "{ %s; }", "sudo %s", "timeout 5 %s", "env A=1 %s",
		"FOO=1 %s", "%s &", "if true; then %s; fi", "x=$(%s)", "%s >> ~/.bashrc", "xargs %s", "%s < .env"}
)

func drawRoCommand(t *rapid.T) string {
	n := rapid.IntRange(1, 3).Draw(t, "n")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(rapid.SampledFrom(genSeps).Draw(t, "sep"))
		}
		pool := roCommands
		if rapid.Bool().Draw(t, "near") {
			pool = roNear
		}
		c := rapid.SampledFrom(pool).Draw(t, "cmd")
		b.WriteString(strings.Replace(rapid.SampledFrom(roAround).Draw(t, "around"), "%s", c, 1))
	}
	return b.String()
}

// TestBuiltinProperties states what adding the built-in rules may change,
// for random compounds of read-only commands, near misses and wrappers,
// under random rules of the other levels and random modes:
//
//  1. The risk and findings are unchanged.
//  2. Only a call that was not decided by a rule, and not denied, may
//     change, and only to an allow by a built-in rule: a deny stays a
//     deny, an ask rule still asks, another level's allow still decides.
//  3. A call a built-in rule allows was judged at the tool's own risk
//     (execute for the shell) with no finding at all, is not Opaque, and
//     every access it makes is a read of a known path inside the working
//     directory.
//  4. An Opaque call is never allowed, whatever the rules.
func TestBuiltinProperties(t *testing.T) {
	var eng permission.Engine
	rapid.Check(t, func(t *rapid.T) {
		cmd := drawRoCommand(t)
		var rules []permission.Rule
		for i := range rapid.IntRange(0, 3).Draw(t, "rules") {
			rules = append(rules, drawRule(t, i))
		}
		without, err := permission.Compile(rules)
		if err != nil {
			t.Skip(err)
		}
		req := shellReq(cmd, without)
		req.Mode = rapid.SampledFrom([]permission.Mode{permission.ModeDefault, permission.ModeDefault, permission.ModePlan}).Draw(t, "mode")
		d1 := eng.Check(req)
		req.Policy = builtinPolicy(t, rules...)
		d2 := eng.Check(req)
		if d1.RiskAtDecision != d2.RiskAtDecision || len(d1.Findings) != len(d2.Findings) {
			t.Fatalf("%q: risk %s/%d findings without built-in rules, %s/%d with", cmd, d1.RiskAtDecision, len(d1.Findings), d2.RiskAtDecision, len(d2.Findings))
		}
		byBuiltin := d2.Rule != nil && d2.Rule.Level == permission.LevelBuiltin
		if !byBuiltin {
			if d1.Decision != d2.Decision || d1.SourcedFrom != d2.SourcedFrom {
				t.Fatalf("%q: %s from %s without built-in rules, %s from %s with", cmd, d1.Decision, d1.SourcedFrom, d2.Decision, d2.SourcedFrom)
			}
		} else {
			if !d2.Allowed() || d1.Decision == permission.Deny || d1.SourcedFrom == permission.FromOverride {
				t.Fatalf("%q: built-in rule %s turned %s from %s into %s", cmd, d2.Rule.ID, d1.Decision, d1.SourcedFrom, d2.Decision)
			}
			res := shellrisk.Analyze(cmd, shellrisk.Env{Cwd: corpusCwd, Home: corpusHome, UserHomes: req.UserHomes})
			if res.Opaque || len(res.Findings) > 0 || d2.RiskAtDecision != risk.Execute || len(d2.Findings) > 0 {
				t.Fatalf("%q: allowed by %s but opaque=%v findings=%v risk=%s", cmd, d2.Rule.ID, res.Opaque, res.Findings, d2.RiskAtDecision)
			}
			for _, a := range res.Accesses {
				if a.Write || a.Delete || a.Path == "" || !strings.HasPrefix(a.Path+"/", corpusCwd+"/") {
					t.Fatalf("%q: allowed by %s but touches %+v", cmd, d2.Rule.ID, a)
				}
			}
		}
		if d2.Allowed() && shellrisk.Analyze(cmd, shellrisk.Env{Cwd: corpusCwd, Home: corpusHome}).Opaque {
			t.Fatalf("%q: Opaque and allowed (%s)", cmd, d2.Reason)
		}
	})
}

// TestReadOnlySessions measures the built-in rules on a labelled set of
// commands from developer sessions (testdata/readonly-sessions.jsonl):
// at least 90% of the read-only ones are allowed without a question, and
// no near miss (the same programs writing, running code, leaving the
// project or reading secrets) is allowed. The globs are not expanded (no
// file system), so a read through an unexpanded glob is asked, as it is
// when the pattern matches nothing.
func TestReadOnlySessions(t *testing.T) {
	b, err := os.ReadFile("testdata/readonly-sessions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	pol := builtinPolicy(t)
	var eng permission.Engine
	var ro, roAllowed, roBefore, near, nearAllowed int
	var asked []string
	for n, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var c struct {
			Label   string `json:"label"`
			Command string `json:"command"`
			Source  string `json:"source"`
			Why     string `json:"why,omitempty"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil || c.Command == "" || strings.TrimSpace(c.Source) == "" {
			t.Fatalf("line %d: %v (a command and a source are required)", n+1, err)
		}
		d := eng.Check(shellReq(c.Command, pol))
		before := eng.Check(shellReq(c.Command, nil))
		switch c.Label {
		case "read-only":
			ro++
			if before.Allowed() {
				roBefore++
			}
			if d.Allowed() {
				roAllowed++
			} else {
				asked = append(asked, c.Command)
			}
		case "near-miss":
			near++
			if d.Allowed() {
				nearAllowed++
				t.Errorf("near miss %q (%s) allowed: %s", c.Command, c.Why, d.Reason)
			}
		default:
			t.Fatalf("line %d: label %q is not read-only or near-miss", n+1, c.Label)
		}
	}
	if ro+near < 150 {
		t.Errorf("%d commands; the set keeps at least 150", ro+near)
	}
	share := float64(roAllowed) / float64(ro)
	t.Logf("read-only: %d/%d allowed without a question (%.1f%%; %d before the built-in rules); near misses: %d/%d allowed",
		roAllowed, ro, 100*share, roBefore, nearAllowed, near)
	t.Logf("read-only commands still asked: %q", asked)
	if share < 0.9 {
		t.Errorf("%.1f%% of the read-only commands allowed; the goal is 90%%", 100*share)
	}
}

// TestBuiltinRecursiveReadNeedsACleanTree: grep -r and rg read every file
// beneath, so a built-in rule covers them only when the caller scanned the
// tree and found no secret file and no link (Request.Trees); .git counts
// for grep -r, not for rg.
func TestBuiltinRecursiveReadNeedsACleanTree(t *testing.T) {
	pol := builtinPolicy(t)
	var eng permission.Engine
	src := corpusCwd + "/src"
	cases := []struct {
		name, cmd string
		tree      *permission.Tree // nil: not scanned
		dir       string
		allow     bool
	}{
		{"clean tree", "grep -rn TODO src", &permission.Tree{Complete: true}, src, true},
		{"not scanned", "grep -rn TODO src", nil, src, false},
		{"scan cut short", "grep -rn TODO src", &permission.Tree{}, src, false},
		{"a secret beneath", "grep -rn TODO src", &permission.Tree{Complete: true, Secret: src + "/config/.env"}, src, false},
		{"a link beneath", "grep -rn TODO src", &permission.Tree{Complete: true, Link: src + "/keys"}, src, false},
		{"grep -r reads .git", "grep -rn url .", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg leaves .git out", "rg -n url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, true},
		{"rg and a secret", "rg -n url", &permission.Tree{Complete: true, Secret: corpusCwd + "/.env"}, corpusCwd, false},
		// Review class c: rg searches .git when told to (--hidden, -uu, a
		// glob that lets .git in, .git named) or when an ignore file of the
		// repository negates a pattern.
		{"rg --hidden reads .git", "rg --hidden url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg -uu reads .git", "rg -uu url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg -uuu reads .git", "rg -uuu url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg -u -u reads .git", "rg -u -u url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg --unrestricted -u reads .git", "rg --unrestricted -u url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg -g '*' reads .git", "rg -g '*' url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg --glob=** reads .git", "rg --glob='**' url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg --iglob '.GIT/**' reads .git", "rg --iglob '.GIT/**' url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg -g '?git' reads .git", "rg -g '?git' url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, false},
		{"rg .git", "rg url .git", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd + "/.git", false},
		{"rg .git/refs", "rg url .git/refs", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/refs/x"}, corpusCwd + "/.git/refs", false},
		{"rg and a negating .ignore", "rg -n url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config", Unignore: corpusCwd + "/.ignore"}, corpusCwd, false},
		{"rg -u leaves .git out", "rg -u url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, true},
		{"rg -g '*.go' leaves .git out", "rg -g '*.go' url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, true},
		{"rg -g '!.git' leaves .git out", "rg -g '!.git' url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, true},
		{"rg --no-ignore leaves .git out", "rg --no-ignore url", &permission.Tree{Complete: true, GitSecret: corpusCwd + "/.git/config"}, corpusCwd, true},
		{"rg and a negating .ignore, no .git secret", "rg -n url", &permission.Tree{Complete: true, Unignore: corpusCwd + "/.ignore"}, corpusCwd, true},
		// Following links, find and du list and describe what lies beyond
		// one, outside the project: their roots are scanned.
		{"find -L, clean", "find -L src", &permission.Tree{Complete: true}, src, true},
		{"find -L and a link", "find -L src", &permission.Tree{Complete: true, Link: src + "/h"}, src, false},
		{"find -follow and a link", "find src -follow -printf '%p %s\\n'", &permission.Tree{Complete: true, Link: src + "/h"}, src, false},
		{"du -L and a link", "du -aL src", &permission.Tree{Complete: true, Link: src + "/h"}, src, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := shellReq(c.cmd, pol)
			if got := permission.TreesToScan(req); len(got) != 1 || got[0] != c.dir {
				t.Fatalf("TreesToScan = %q, want [%s]", got, c.dir)
			}
			req.Trees = nil
			if c.tree != nil {
				req.Trees = map[string]permission.Tree{c.dir: *c.tree}
			}
			d := eng.Check(req)
			if d.Allowed() != c.allow {
				t.Errorf("%q with tree %+v: %s (%s), want allowed=%v", c.cmd, c.tree, d.Decision, d.Reason, c.allow)
			}
		})
	}
}

// TestFindComparesWithFilesItReads: find -newer FILE and -samefile FILE
// stat FILE, which must be a read the rules allow (a credential outside
// the project is not); -newermt takes a date.
func TestFindComparesWithFilesItReads(t *testing.T) {
	pol := builtinPolicy(t)
	var eng permission.Engine
	for _, c := range []struct {
		cmd   string
		allow bool
	}{
		{"find . -newer ~/.ssh/id_rsa", false},
		{"find . -samefile ~/.aws/credentials", false},
		{"find . -neweram ~/.ssh/id_rsa", false},
		{"find . -newer go.mod -name '*.go'", true},
		{"find . -newermt 2024-01-01", true},
	} {
		if d := eng.Check(shellReq(c.cmd, pol)); d.Allowed() != c.allow {
			t.Errorf("%q: %s (%s), want allowed=%v", c.cmd, d.Decision, d.Reason, c.allow)
		}
	}
}

// TestDiffReadsDirectoriesWithoutR: diff DIR1 DIR2 compares the files one
// level down (dotfiles and links included) and diff DIR FILE reads
// DIR/FILE, -r or not, so every operand of diff, and --from-file's and
// --to-file's values, must be scanned as a tree.
func TestDiffReadsDirectoriesWithoutR(t *testing.T) {
	pol := builtinPolicy(t)
	var eng permission.Engine
	src, readme := corpusCwd+"/src", corpusCwd+"/README.md"
	for _, c := range []struct {
		name, cmd string
		src       permission.Tree
		allow     bool
	}{
		{"a clean directory", "diff src README.md", permission.Tree{Complete: true}, true},
		{"a secret beneath", "diff src README.md", permission.Tree{Complete: true, Secret: src + "/.env"}, false},
		{"a link beneath", "diff src README.md", permission.Tree{Complete: true, Link: src + "/notes.txt"}, false},
		{"--from-file naming it", "diff --from-file=src README.md", permission.Tree{Complete: true, Link: src + "/x"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := shellReq(c.cmd, pol)
			got := permission.TreesToScan(req)
			if !slices.Contains(got, src) || !slices.Contains(got, readme) {
				t.Fatalf("TreesToScan = %q, want both operands", got)
			}
			req.Trees = map[string]permission.Tree{src: c.src, readme: {Complete: true}}
			if d := eng.Check(req); d.Allowed() != c.allow {
				t.Errorf("%q: %s (%s), want allowed=%v", c.cmd, d.Decision, d.Reason, c.allow)
			}
		})
	}
}

// TestGitPatchesNeedTheIndexRead: git diff prints the working tree's
// changes to whatever the index tracks, so a built-in rule allows it only
// once the caller read the index and found no credential file tracked;
// what prints files as git holds them committed (git show of a commit or
// an object id, git log -p, git diff of a revision or --cached, a search
// with -G) is never covered, as the index does not bound it; names and
// statistics need no read, and an option's value is not taken for an
// option.
func TestGitPatchesNeedTheIndexRead(t *testing.T) {
	pol := builtinPolicy(t)
	var eng permission.Engine
	const committed = "as git holds them committed"
	clean := &permission.Repo{Checked: true}
	leaky := &permission.Repo{Checked: true, Secret: corpusCwd + "/.env"}
	for _, c := range []struct {
		cmd    string
		repo   *permission.Repo // given as the caller's read; nil: none
		allow  bool
		reason string // in the reason and in policy explain, when asked
	}{
		{"git diff", clean, true, ""},
		{"git diff", nil, false, "which were not checked for secret files"},
		{"git diff", leaky, false, "among them `" + corpusCwd + "/.env`"},
		{"git diff -- src/", clean, true, ""},
		{"git diff --stat --binary", nil, false, "not checked"}, // --binary prints content
		{"git diff --stat --binary", clean, true, ""},
		{"git log -p", clean, false, committed},
		{"git log --patch -- src/", clean, false, committed},
		{"git log --stat -p", nil, false, committed},
		{"git log --diff-merges=on --oneline", nil, false, committed},
		{"git log -G SECRET --oneline", nil, false, committed}, // a search answers what the files hold
		{"git show HEAD", nil, false, ""},
		{"git show -s 1a2b3c4", nil, false, ""}, // a blob by its id, whatever the options
		{"git show HEAD --stat", nil, false, ""},
		{"git show --name-status HEAD -- -p", nil, false, ""},
		{"git diff --cached -U5", clean, false, committed},
		{"git diff HEAD", clean, false, committed},
		{"git diff --submodule=diff", clean, false, committed},
		// git show has no built-in rule: every form prints what git holds
		// committed. REV:path is no exception: a gitlink there makes git
		// print the commit it names, patch and all; :/TEXT is a commit by
		// its message.
		{"git show HEAD:README.md", nil, false, ""},
		{"git show ':/.*|a/..'", nil, false, ""},
		// git splits REV:path at the first colon outside braces: the path
		// is .aws/credentials, a credential location, not "]}:.aws/…".
		{"git show 'HEAD^{/[^:]}:.aws/credentials'", nil, false, ""}, // denied: a credential file
		{"git show 'HEAD^{/a:b}:README.md'", nil, false, ""},
		// :N:path is stage N of path: the path judged is .aws/credentials.
		{"git show :0:.aws/credentials", nil, false, ""}, // denied: a credential file
		{"git show :0:README.md", nil, false, ""},
		// git grep reads the index's copy of an assume-unchanged file, and
		// a submodule's files with submodule.recurse: the index is judged.
		{"git grep -n SECRET", nil, false, "which were not checked for secret files"},
		{"git grep -n SECRET", leaky, false, "among them `" + corpusCwd + "/.env`"},
		{"git grep -n SECRET", clean, true, ""},
		{"git log --oneline -5", nil, true, ""},
		{"git log --until --stat -3", nil, true, ""}, // --stat is --until's value
		{"git log --diff-merges=off --oneline", nil, true, ""},
		{"git diff --stat", nil, true, ""},
		{"git diff --stat HEAD~1", nil, true, ""},
		{"git diff --name-only -- src/", nil, true, ""},
	} {
		req := shellReq(c.cmd, pol)
		req.Repos = nil
		if c.repo != nil {
			if dirs := permission.ReposToScan(req); len(dirs) == 1 && dirs[0] == corpusCwd {
				req.Repos = map[string]permission.Repo{corpusCwd: *c.repo}
			} else if c.reason != committed {
				t.Fatalf("%s: ReposToScan = %q, want the working directory", c.cmd, dirs)
			}
		}
		d := eng.Check(req)
		if d.Allowed() != c.allow {
			t.Errorf("%s (repo %+v): %s, %s; want allowed %v", c.cmd, c.repo, d.Decision, d.Reason, c.allow)
			continue
		}
		if c.reason == "" {
			continue
		}
		why := ""
		for _, r := range permission.Explain(req).Rules {
			why += r.Why + "\n"
		}
		if !strings.Contains(why, c.reason) {
			t.Errorf("%s (repo %+v): policy explain does not say %q:\n%s", c.cmd, c.repo, c.reason, why)
		}
		// The person asked is told too.
		if !strings.Contains(d.Reason, "The built-in rule `builtin:git-") || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s (repo %+v): the reason does not say why the built-in rule did not allow it: %s", c.cmd, c.repo, d.Reason)
		}
	}
}

// TestGitGrepBeyondTheWorkingTree: git grep is a recursive read of the
// working tree below cwd, checked by a tree scan; given a revision,
// --cached or a pathspec reaching out of cwd, it searches what git holds
// committed, which is never covered.
func TestGitGrepBeyondTheWorkingTree(t *testing.T) {
	pol := builtinPolicy(t)
	var eng permission.Engine
	for _, c := range []struct {
		cmd   string
		allow bool
	}{
		{"git grep -n TODO", true},
		{"git grep -n TODO -- src/", true},
		{"git grep -e . HEAD", false},
		{"git grep TODO HEAD~1", false},
		{"git grep --cached -e .", false},
		{"git grep -e x -- ':/'", false},
		{"git grep -e x -- ':(top)'", false},
	} {
		if d := eng.Check(shellReq(c.cmd, pol)); d.Allowed() != c.allow {
			t.Errorf("%s: %s (%s), want allowed %v", c.cmd, d.Decision, d.Reason, c.allow)
		}
	}
}

// TestGitNeedsTheConfigurationRead: git reads the configuration of the
// repository it runs in, which the repository controls and which can make
// even git status run a program (core.fsmonitor). A built-in rule covers a
// git command only once the caller read that configuration, for every
// directory git runs in, and found it clean; the reason says why not.
func TestGitNeedsTheConfigurationRead(t *testing.T) {
	pol := builtinPolicy(t)
	var eng permission.Engine
	const risky = "its own configuration sets core.fsmonitor, with which git runs a program or reads outside the repository"
	sub := corpusCwd + "/sub"
	for _, c := range []struct {
		cmd     string
		configs map[string]string // the caller's read; nil: none
		allow   bool
		reason  string
	}{
		{"git status", map[string]string{corpusCwd: ""}, true, ""},
		{"git status", nil, false, "git reads the configuration of the repository it runs in, which can make it run programs and was not checked"},
		{"git status", map[string]string{corpusCwd: risky}, false, "in the repository git runs in, " + risky},
		{"git log --oneline -5", map[string]string{corpusCwd: risky}, false, "core.fsmonitor"},
		{"git branch -a", map[string]string{corpusCwd: risky}, false, "core.fsmonitor"},
		{"git diff", map[string]string{corpusCwd: risky}, false, "core.fsmonitor"},
		{"git -C sub status", map[string]string{corpusCwd: ""}, false, "was not checked"}, // read for another directory
		{"git -C sub status", map[string]string{sub: ""}, true, ""},
		{"git status && git -C sub status", map[string]string{corpusCwd: "", sub: risky}, false, "core.fsmonitor"},
		{"git status && git -C sub status", map[string]string{corpusCwd: "", sub: ""}, true, ""},
		{"git --version", nil, true, ""}, // runs no subcommand, reads no repository
	} {
		req := shellReq(c.cmd, pol)
		req.GitConfigs = c.configs
		d := eng.Check(req)
		if d.Allowed() != c.allow {
			t.Errorf("%s (configs %q): %s, %s; want allowed %v", c.cmd, c.configs, d.Decision, d.Reason, c.allow)
			continue
		}
		if c.reason != "" && (!strings.Contains(d.Reason, c.reason) || !strings.Contains(d.Reason, "The built-in rule `builtin:git-")) {
			t.Errorf("%s (configs %q): the reason does not say %q: %s", c.cmd, c.configs, c.reason, d.Reason)
		}
	}
	// The directories to read are the ones git runs in, once each.
	for cmd, want := range map[string][]string{
		"git status && git -C sub log && git status": {corpusCwd, sub},
		"git --git-dir=.git status":                  nil, // never covered: not listed
		"ls -la":                                     nil,
	} {
		if got := permission.GitConfigsToRead(shellReq(cmd, pol)); !slices.Equal(got, want) {
			t.Errorf("GitConfigsToRead(%s) = %q, want %q", cmd, got, want)
		}
	}
	// git pointed at a repository by its options is no read-only form.
	req := shellReq("git --git-dir=.git status", pol)
	req.GitConfigs = map[string]string{corpusCwd: ""}
	if d := eng.Check(req); d.Allowed() {
		t.Errorf("git --git-dir=.git status: %s, %s; want asked", d.Decision, d.Reason)
	}
}
