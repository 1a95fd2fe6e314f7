package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// policyWorld points HOME and XDG_CONFIG_HOME at temporary directories and
// returns a repository in another.
// withoutBuiltinRules turns the built-in rules off for a test written
// about the other levels, or about a question for a command (ls, go env)
// they would allow.
func withoutBuiltinRules(t *testing.T) {
	t.Helper()
	t.Setenv(builtinRulesEnv, "off")
}

func policyWorld(t *testing.T) (repo, cfg string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, cfg = filepath.Join(base, "repo"), filepath.Join(base, "cfg")
	for _, d := range []string{filepath.Join(repo, ".git", "objects"), filepath.Join(repo, ".git", "refs"), cfg, filepath.Join(base, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A git directory git takes for one: HEAD, objects and refs.
	if err := os.WriteFile(filepath.Join(repo, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(base, "home"))
	t.Setenv("XDG_CONFIG_HOME", cfg)
	return repo, cfg
}

func runPolicyCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(""))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

func TestPolicyCLI(t *testing.T) {
	withoutBuiltinRules(t)
	repo, _ := policyWorld(t)
	must := func(args ...string) string {
		t.Helper()
		out, _, err := runPolicyCLI(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	out := must("policy", "add", "--cwd", repo, "--level", "project", "--tool", "shell", "--command", "npm test", "--decision", "allow", "--comment", "tests")
	if !strings.Contains(out, `added rule "shell-npm-test"`) {
		t.Errorf("add: %s", out)
	}
	must("policy", "add", "--cwd", repo, "--level", "user", "--tool", "shell", "--command", "git push --force", "--decision", "deny", "--id", "no-force")

	var entries []struct {
		Rule struct {
			ID, Decision, Comment string
		}
		Level     string
		File      string
		Untrusted bool
	}
	if err := json.Unmarshal([]byte(must("policy", "list", "--cwd", repo, "--json")), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Rule.ID != "no-force" || entries[1].Rule.Comment != "tests" ||
		entries[1].File != filepath.Join(repo, ".custom-agent", "policy.json") || entries[1].Untrusted {
		t.Errorf("list --json: %+v", entries)
	}
	if out := must("policy", "list", "--cwd", repo, "--level", "user"); !strings.Contains(out, "no-force") || strings.Contains(out, "shell-npm-test") {
		t.Errorf("list --level user:\n%s", out)
	}

	// check and run read the same files.
	out = must("check", "--json", "--cwd", repo, "--tool", "shell", "--args", `{"command":"npm test"}`)
	if !strings.Contains(out, `"decision":"allow"`) || !strings.Contains(out, `"id":"shell-npm-test"`) {
		t.Errorf("check with the project rule: %s", out)
	}

	out = must("policy", "explain", "--cwd", repo, "--tool", "shell", "--args", `{"command":"npm test && git push --force"}`)
	for _, want := range []string{"1. risk: destructive", `"no-force" (deny shell; user`, "match, decides", `"shell-npm-test" (allow shell; project`, "no-match: an allow rule needs every simple command", "decision: deny (from override)"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}

	must("policy", "rm", "--cwd", repo, "shell-npm-test")
	if out := must("policy", "list", "--cwd", repo, "--level", "project"); !strings.Contains(out, "no rules") {
		t.Errorf("after rm: %s", out)
	}

	if _, _, err := runPolicyCLI(t, "policy", "add", "--cwd", repo, "--session", "--tool", "shell", "--decision", "allow"); err == nil || !strings.Contains(err.Error(), "session") {
		t.Errorf("add --session: %v", err)
	}
	if _, _, err := runPolicyCLI(t, "policy", "add", "--cwd", repo, "--level", "user", "--tool", "shell", "--path", "src/[", "--decision", "deny"); err == nil || !strings.Contains(err.Error(), "path") {
		t.Errorf("add with a bad glob: %v", err)
	}
}

func TestPolicyTestCLI(t *testing.T) {
	repo, _ := policyWorld(t)
	pf := filepath.Join(repo, ".custom-agent", "policy.json")
	if err := os.MkdirAll(filepath.Dir(pf), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `{"version": 1, "rules": [
  {"id": "npm", "tool": "shell", "command": "npm", "decision": "deny"},
  {"id": "npm-test", "tool": "shell", "command": "npm test", "decision": "allow",
   "examples": {"match": [{"command": "npm test"}], "notMatch": [{"command": "npm publish"}]}},
  {"id": "cmd-on-read", "tool": "read_file", "command": "cat", "decision": "deny"}
]}`
	if err := os.WriteFile(pf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runPolicyCLI(t, "policy", "test", "--cwd", repo)
	if err != nil {
		t.Fatalf("warnings alone must not fail: %v\n%s", err, out)
	}
	for _, want := range []string{
		`rule "npm-test": this allow rule is dead: rule "npm" (deny`,
		`rule "cmd-on-read": "command" matches shell commands, and read_file runs none`,
		`rule "npm-test": this allow rule does not count: the project is not trusted`,
		"0 error(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("policy test lacks %q:\n%s", want, out)
		}
	}

	// A failing example: exit 1, and the other commands refuse to start.
	bad := strings.Replace(src, `"notMatch": [{"command": "npm publish"}]`, `"notMatch": [{"command": "npm test -- --ci"}]`, 1)
	if err := os.WriteFile(pf, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = runPolicyCLI(t, "policy", "test", "--cwd", repo)
	var ex *exitError
	if !errors.As(err, &ex) || ex.code != 1 || !strings.Contains(out, `policy.json:4:4: rule "npm-test": examples.notMatch[0]`) {
		t.Errorf("failing example: %v\n%s", err, out)
	}
	_, _, err = runPolicyCLI(t, "check", "--cwd", repo, "--tool", "shell", "--args", `{"command":"ls"}`)
	if err == nil || !strings.Contains(err.Error(), pf+":4:4") {
		t.Errorf("check with a failing example: %v", err)
	}
}

func TestTrustCLI(t *testing.T) {
	withoutBuiltinRules(t)
	repo, cfg := policyWorld(t)
	pf := filepath.Join(repo, ".custom-agent", "policy.json")
	if err := os.MkdirAll(filepath.Dir(pf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pf, []byte(`{"version":1,"rules":[{"id":"ls","tool":"shell","command":"ls","decision":"allow"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	decision := func() string {
		out, _, err := runPolicyCLI(t, "check", "--json", "--cwd", repo, "--tool", "shell", "--args", `{"command":"ls"}`)
		if err != nil {
			t.Fatal(err)
		}
		var d struct{ Decision string }
		_ = json.Unmarshal([]byte(out), &d)
		return d.Decision
	}
	if d := decision(); d != "ask" {
		t.Errorf("untrusted: %s", d)
	}
	out, _, err := runPolicyCLI(t, "trust", repo)
	if err != nil || !strings.Contains(out, "trusted "+repo) {
		t.Fatalf("trust: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(cfg, "custom-agent", "trusted.json")); err != nil {
		t.Error(err)
	}
	if d := decision(); d != "allow" {
		t.Errorf("trusted: %s", d)
	}
	if out, _, err := runPolicyCLI(t, "untrust", repo); err != nil || !strings.Contains(out, "untrusted "+repo) {
		t.Fatalf("untrust: %v %s", err, out)
	}
	if d := decision(); d != "ask" {
		t.Errorf("after untrust: %s", d)
	}
	if out, _, _ := runPolicyCLI(t, "untrust", repo); !strings.Contains(out, "was not trusted") {
		t.Errorf("second untrust: %s", out)
	}
}

func TestPolicyAddWarnsAndNamesMissingFlags(t *testing.T) {
	repo, cfg := policyWorld(t)
	userFile := filepath.Join(cfg, "custom-agent", "policy.json")
	add := func(args ...string) (string, string, error) {
		t.Helper()
		return runPolicyCLI(t, append([]string{"policy", "add", "--cwd", repo}, args...)...)
	}
	tests := []struct {
		name      string
		args      []string
		fails     string // a piece of the error; "" for success
		out, warn string // pieces of stdout and stderr
		noWarn    bool
	}{
		{"no level", []string{"--tool", "shell", "--command", "ls", "--decision", "allow"}, "--level is required: project", "", "", false},
		{"no tool", []string{"--level", "user", "--decision", "allow"}, "--tool is required", "", "", false},
		{"no decision", []string{"--level", "user", "--tool", "shell", "--command", "ls"}, "--decision is required: allow, ask or deny", "", "", false},
		{"allow shell without a matcher", []string{"--level", "user", "--tool", "shell", "--decision", "allow"}, "",
			`added rule "shell"`, `warning: rule "shell" allows every call of shell: it names no --command`, false},
		{"allow read_file without a matcher", []string{"--level", "user", "--tool", "read_file", "--decision", "allow", "--id", "reads"}, "",
			`added rule "reads"`, "it names no --path", false},
		{"allow http_get without a matcher", []string{"--level", "user", "--tool", "http_get", "--decision", "allow", "--id", "gets"}, "",
			`added rule "gets"`, "it names no --url", false},
		{"allow an MCP tool without a matcher", []string{"--level", "user", "--tool", "mcp__gh__*", "--decision", "allow", "--id", "gh"}, "",
			`added rule "gh"`, "it names no --command, --path, --url or --arg", false},
		{"deny without a matcher is no surprise", []string{"--level", "user", "--tool", "http_post", "--decision", "deny", "--id", "no-post"}, "",
			`added rule "no-post"`, "", true},
		{"allow with a matcher", []string{"--level", "user", "--tool", "shell", "--command", "go test", "--decision", "allow", "--id", "go-test"}, "",
			`added rule "go-test"`, "", true},
		{"the same rule again", []string{"--level", "user", "--tool", "shell", "--command", "go test", "--decision", "allow", "--id", "go-test"}, "",
			"", `warning: the user policy (` + userFile + `) already has rule "go-test", the same as this one: nothing changed`, false},
		{"the same id, another rule", []string{"--level", "user", "--tool", "shell", "--command", "go vet", "--decision", "allow", "--id", "go-test"},
			`the user policy already has a rule "go-test" that matches differently: choose another id with --id, or remove that one first (custom-agent policy rm go-test --level user)`, "", "", false},
		{"the same id at the other level", []string{"--level", "project", "--tool", "shell", "--command", "go vet", "--decision", "deny", "--id", "go-test"}, "",
			`added rule "go-test"`, `warning: the user policy also has a rule "go-test": policy rm go-test now needs --level`, false},
	}
	for _, tc := range tests {
		out, warn, err := add(tc.args...)
		if tc.fails != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fails) {
				t.Errorf("%s: err %v, want one containing %q", tc.name, err, tc.fails)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !strings.Contains(out, tc.out) {
			t.Errorf("%s: stdout %q lacks %q", tc.name, out, tc.out)
		}
		if tc.noWarn && warn != "" || !strings.Contains(warn, tc.warn) {
			t.Errorf("%s: stderr %q, want %q", tc.name, warn, tc.warn)
		}
		if strings.Contains(tc.warn, "nothing changed") && out != "" {
			t.Errorf("%s: said %q although nothing changed", tc.name, out)
		}
	}
}
