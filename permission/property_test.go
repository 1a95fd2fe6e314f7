package permission_test

import (
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Pools the generators draw from: benign and hostile commands, paths, URLs
// and rules, so that random combinations exercise every step of the tree.
var (
	genCommands = []string{
		"ls -la", "npm test", "npm test -- --watch", "go test ./...", "git status",
		"rm -rf dist", "rm -r -f /", "curl https://x.test", "cat ~/.ssh/id_rsa",
		"echo hi > out.txt", "cat README.md", "git push --force origin main",
		"env", "cat .env", "eval \"$X\"", "echo $(whoami)", "npm publish",
	}
	genBroken  = []string{"((", "echo 'unterminated", "if then fi", "a | | b", "$((1 +", "cat <<"}
	genSeps    = []string{"; ", " && ", " || ", " | ", " & ", "\n"}
	genWrapper = []string{"env ", "timeout 5 ", "nice ", "nohup ", "command ", "sudo ", "nice -n 5 ", "env A=1 "}
	genPaths   = []string{"README.md", "src/a.go", "/tmp/x", "~/.ssh/id_rsa", ".env", "../other/x", "/etc/passwd", ".git/hooks/pre-commit", ".custom-agent/policy.json", "SECRETS/k"}
	genURLs    = []string{"https://example.com/", "https://api.github.com/repos/a/b", "http://169.254.169.254/", "http://localhost:3000/", "gopher://x/", "::"}
	genGlobs   = []string{"", "**", "src/**", "**/.env", "/tmp/**", "~/.ssh/**", "secrets/**", "*.md"}
	genPrefix  = []string{"", "npm test", "npm", "rm", "curl", "ls", "git", "cat", "echo"}
	genTools   = []string{"*", "shell", "read_file", "write_file", "apply_patch", "http_*", "list_files"}
	genVerdict = []permission.Verdict{permission.Allow, permission.Ask, permission.Deny}
)

func drawCommand(t *rapid.T, label string) string {
	n := rapid.IntRange(1, 3).Draw(t, label+"-n")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(rapid.SampledFrom(genSeps).Draw(t, label+"-sep"))
		}
		b.WriteString(rapid.SampledFrom(genCommands).Draw(t, label+"-cmd"))
	}
	return b.String()
}

func drawRule(t *rapid.T, i int) permission.Rule {
	r := permission.Rule{
		ID:       "r" + string(rune('a'+i%26)),
		Level:    rapid.SampledFrom([]permission.RuleLevel{permission.LevelSession, permission.LevelProject, permission.LevelUser}).Draw(t, "level"),
		Tool:     rapid.SampledFrom(genTools).Draw(t, "tool"),
		Command:  rapid.SampledFrom(genPrefix).Draw(t, "prefix"),
		Path:     rapid.SampledFrom(genGlobs).Draw(t, "path"),
		Decision: rapid.SampledFrom(genVerdict).Draw(t, "decision"),
	}
	if rapid.Bool().Draw(t, "url") {
		r.URL = rapid.SampledFrom([]string{"example.com", "api.github.com/repos/**", "*.github.com", "169.254.169.254"}).Draw(t, "urlpat")
	}
	return r
}

func drawRules(t *rapid.T) []permission.Rule {
	n := rapid.IntRange(0, 4).Draw(t, "rules")
	rules := make([]permission.Rule, n)
	for i := range rules {
		rules[i] = drawRule(t, i)
	}
	return rules
}

func compileT(t *rapid.T, rules []permission.Rule) *permission.Policy {
	p, err := permission.Compile(rules)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return p
}

// drawRequest draws a call of any built-in tool with a random policy,
// mode, skill and history.
func drawRequest(t *rapid.T) permission.Request {
	tools := permission.Builtins()
	info := rapid.SampledFrom(tools).Draw(t, "tool")
	a := map[string]any{}
	switch {
	case info.CommandArg != "":
		a[info.CommandArg] = drawCommand(t, "command")
	case info.PatchArg != "":
		p := rapid.SampledFrom(genPaths).Draw(t, "patchpath")
		a[info.PatchArg] = "--- a/" + p + "\n+++ b/" + p + "\n@@ -1 +1 @@\n-a\n+b\n"
	case info.URLArg != "":
		a[info.URLArg] = rapid.SampledFrom(genURLs).Draw(t, "url")
		if info.Name == "http_post" {
			a["body"] = ""
		}
	}
	for _, p := range info.PathArgs {
		if rapid.Bool().Draw(t, "haspath") || !info.PathDefaultsToCwd {
			a[p] = rapid.SampledFrom(genPaths).Draw(t, "path")
		}
	}
	req := permission.Request{
		Tool: info, Args: a, Cwd: testCwd, Home: testHome,
		Mode:   rapid.SampledFrom(append([]permission.Mode{""}, permission.Modes...)).Draw(t, "mode"),
		Policy: compileT(t, drawRules(t)),
	}
	if rapid.Bool().Draw(t, "skill") {
		req.AllowedTools = []string{rapid.SampledFrom(genTools).Draw(t, "skilltool")}
	}
	if rapid.Bool().Draw(t, "history") {
		b, _ := permission.CanonicalArgs(a)
		req.History = []permission.Prior{{Tool: info.Name, Args: b, Risk: rapid.SampledFrom([]risk.Level{risk.Read, risk.Execute, risk.Credential, risk.Destructive}).Draw(t, "priorrisk"), Decision: permission.Allow, ByUser: true}}
	}
	return req
}

// strictness orders decisions: allow < ask < deny (unset counts as deny).
func strictness(d permission.Decision) int {
	switch d.Decision {
	case permission.Allow:
		return 0
	case permission.Ask:
		return 1
	}
	return 2
}

func TestPropDestructiveNeverAllowed(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		req := drawRequest(t)
		d := permission.Engine{}.Check(req)
		if d.RiskAtDecision == risk.Destructive && d.Allowed() {
			t.Fatalf("destructive call allowed: %+v", d)
		}
		if d.Decision == permission.Unset || d.RiskAtDecision == risk.Unknown {
			t.Fatalf("unset decision or risk: %+v", d)
		}
	})
}

func TestPropDenyRuleNeverLoosens(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		req := drawRequest(t)
		before := permission.Engine{}.Check(req)
		rules := append(req.Policy.Rules(), drawRule(t, 99))
		rules[len(rules)-1].Decision = permission.Deny
		req.Policy = compileT(t, rules)
		after := permission.Engine{}.Check(req)
		if strictness(after) < strictness(before) {
			t.Fatalf("adding a deny rule loosened %s to %s\nbefore: %s\nafter: %s", before.Decision, after.Decision, before.Reason, after.Reason)
		}
	})
}

func TestPropCompoundNeedsEveryPart(t *testing.T) {
	t.Parallel()
	shell, _ := permission.Builtin("shell")
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.SampledFrom(genCommands).Draw(t, "a")
		b := rapid.SampledFrom(genCommands).Draw(t, "b")
		sep := rapid.SampledFrom(genSeps).Draw(t, "sep")
		p := compileT(t, drawRules(t))
		check := func(cmd string) permission.Decision {
			return permission.Engine{}.Check(permission.Request{
				Tool: shell, Args: map[string]any{"command": cmd}, Cwd: testCwd, Home: testHome, Policy: p,
			})
		}
		both := check(a + sep + b)
		if both.Allowed() && (!check(a).Allowed() || !check(b).Allowed()) {
			t.Fatalf("%q allowed (%s) though one part is not", a+sep+b, both.Reason)
		}
	})
}

func TestPropParseFailureNeverAllowed(t *testing.T) {
	t.Parallel()
	shell, _ := permission.Builtin("shell")
	rapid.Check(t, func(t *rapid.T) {
		cmd := drawCommand(t, "ok") + rapid.SampledFrom(genSeps).Draw(t, "sep") + rapid.SampledFrom(genBroken).Draw(t, "broken")
		rules := append(drawRules(t), permission.Rule{ID: "all", Level: permission.LevelUser, Tool: "shell", Decision: permission.Allow},
			permission.Rule{ID: "prefix", Level: permission.LevelUser, Tool: "shell", Command: rapid.SampledFrom(genPrefix[1:]).Draw(t, "p"), Decision: permission.Allow})
		d := permission.Engine{}.Check(permission.Request{
			Tool: shell, Args: map[string]any{"command": cmd}, Cwd: testCwd, Home: testHome, Policy: compileT(t, rules),
		})
		if d.Allowed() {
			t.Fatalf("unparseable %q allowed: %s", cmd, d.Reason)
		}
		if d.RiskAtDecision < risk.Execute {
			t.Fatalf("unparseable %q judged %s", cmd, d.RiskAtDecision)
		}
	})
}

func TestPropWrapperNeverLowersRisk(t *testing.T) {
	t.Parallel()
	shell, _ := permission.Builtin("shell")
	rapid.Check(t, func(t *rapid.T) {
		cmd := rapid.SampledFrom(genCommands).Draw(t, "cmd")
		w := rapid.SampledFrom(genWrapper).Draw(t, "wrapper")
		check := func(c string) permission.Decision {
			return permission.Engine{}.Check(permission.Request{Tool: shell, Args: map[string]any{"command": c}, Cwd: testCwd, Home: testHome})
		}
		plain, wrapped := check(cmd), check(w+cmd)
		if wrapped.RiskAtDecision < plain.RiskAtDecision {
			t.Fatalf("%q judged %s, but %q only %s", cmd, plain.RiskAtDecision, w+cmd, wrapped.RiskAtDecision)
		}
	})
}

func TestPropDeterministic(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		req := drawRequest(t)
		a, b := permission.Engine{}.Check(req), permission.Engine{}.Check(req)
		if diff := gocmp.Diff(a, b); diff != "" {
			t.Fatalf("same request, different decisions:\n%s", diff)
		}
	})
}
