package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// runCheckCLI runs the root command with args and stdin, returning stdout and
// the error Execute returned.
func runCheckCLI(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	return out.String(), err
}

// decisionLine is the part of a printed decision the tests compare.
type decisionLine struct {
	Decision       string `json:"decision"`
	RiskAtDecision string `json:"riskAtDecision"`
	SourcedFrom    string `json:"sourcedFrom"`
	Error          string `json:"error"`
}

func parseLines(t *testing.T, out string) ([]decisionLine, []map[string]any) {
	t.Helper()
	var ds []decisionLine
	var raw []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var d decisionLine
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("output line %q is not JSON: %v", l, err)
		}
		_ = json.Unmarshal([]byte(l), &m)
		if d.Error != "" {
			d.Error = "error"
		}
		ds = append(ds, d)
		raw = append(raw, m)
	}
	return ds, raw
}

// fakeHome makes a home directory with ~/.ssh and a project whose "keys"
// entry is a symbolic link into it, and points HOME at it.
func fakeHome(t *testing.T) (home, proj string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(dir, "home")
	proj = filepath.Join(home, "proj")
	for _, d := range []string{filepath.Join(home, ".ssh"), proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, ".aws", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(proj, "keys")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".aws", "sub"), filepath.Join(proj, "deep")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	return home, proj
}

func TestCheckSingle(t *testing.T) {
	_, proj := fakeHome(t)
	tests := []struct {
		name string
		args []string
		want decisionLine
	}{
		{"read in cwd", []string{"--tool", "read_file", "--args", `{"path":"README.md"}`},
			decisionLine{Decision: "allow", RiskAtDecision: "read", SourcedFrom: "default"}},
		{"read ssh", []string{"--tool", "read_file", "--args", `{"path":"~/.ssh/id_rsa"}`},
			decisionLine{Decision: "deny", RiskAtDecision: "credential", SourcedFrom: "default"}},
		{"symlink to ssh resolved", []string{"--tool", "read_file", "--args", `{"path":"keys/id_rsa"}`},
			decisionLine{Decision: "deny", RiskAtDecision: "credential", SourcedFrom: "default"}},
		{"dotdot after a link is physical", []string{"--tool", "read_file", "--args", `{"path":"deep/../config"}`},
			decisionLine{Decision: "deny", RiskAtDecision: "credential", SourcedFrom: "default"}},
		{"dotdot after a link in shell", []string{"--tool", "shell", "--args", `{"command":"cat deep/../credentials"}`},
			decisionLine{Decision: "deny", RiskAtDecision: "credential", SourcedFrom: "default"}},
		{"plan mode write", []string{"--tool", "write_file", "--args", `{"path":"a","content":""}`, "--mode", "plan"},
			decisionLine{Decision: "deny", RiskAtDecision: "write", SourcedFrom: "mode"}},
		{"shell", []string{"--tool", "shell", "--args", `{"command":"go test ./..."}`},
			decisionLine{Decision: "ask", RiskAtDecision: "execute", SourcedFrom: "default"}},
		{"accept-edits write in cwd", []string{"--tool", "write_file", "--args", `{"path":"a","content":""}`, "--mode", "accept-edits"},
			decisionLine{Decision: "allow", RiskAtDecision: "write", SourcedFrom: "mode"}},
		{"accept-edits git hook", []string{"--tool", "write_file", "--args", `{"path":".git/hooks/pre-push","content":""}`, "--mode", "accept-edits"},
			decisionLine{Decision: "ask", RiskAtDecision: "execute", SourcedFrom: "default"}},
		{"dont-ask shell", []string{"--tool", "shell", "--args", `{"command":"go test ./..."}`, "--mode", "dont-ask"},
			decisionLine{Decision: "deny", RiskAtDecision: "execute", SourcedFrom: "mode"}},
		{"use_skill", []string{"--tool", "use_skill", "--args", `{"name":"review"}`},
			decisionLine{Decision: "allow", RiskAtDecision: "read", SourcedFrom: "default"}},
		{"use_skill in plan mode", []string{"--tool", "use_skill", "--args", `{"name":"review"}`, "--mode", "plan"},
			decisionLine{Decision: "allow", RiskAtDecision: "read", SourcedFrom: "default"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCheckCLI(t, "", append([]string{"check", "--json", "--cwd", proj}, tc.args...)...)
			if err != nil {
				t.Fatalf("check: %v (output %q)", err, out)
			}
			got, raw := parseLines(t, out)
			if diff := gocmp.Diff([]decisionLine{tc.want}, got); diff != "" {
				t.Errorf("decision mismatch (-want +got):\n%s\n%s", diff, out)
			}
			for _, k := range []string{"decision", "riskAtDecision", "reason", "sourcedFrom", "findings"} {
				if _, ok := raw[0][k]; !ok {
					t.Errorf("output lacks %q: %s", k, out)
				}
			}
		})
	}
}

func TestCheckPolicyFile(t *testing.T) {
	_, proj := fakeHome(t)
	pol := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(pol, []byte(`{"version":1,"rules":[{"id":"tests","tool":"shell","command":"go test","decision":"allow"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCheckCLI(t, "", "check", "--json", "--cwd", proj, "--policy", pol, "--tool", "shell", "--args", `{"command":"go test ./..."}`)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Decision string
		Rule     struct{ ID, Level, Source string }
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Decision != "allow" || d.Rule.ID != "tests" || d.Rule.Level != "flag" || d.Rule.Source != pol {
		t.Errorf("got %s", out)
	}

	if err := os.WriteFile(pol, []byte(`{"version":1,"rules":[{"id":"x","tool":"shell","decision":"maybe"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCheckCLI(t, "", "check", "--cwd", proj, "--policy", pol, "--tool", "shell", "--args", `{}`); err == nil || !strings.Contains(err.Error(), "decision") {
		t.Errorf("a bad rule must fail with its field named, got %v", err)
	}
}

func TestCheckJSONL(t *testing.T) {
	withoutBuiltinRules(t)
	_, proj := fakeHome(t)
	in := strings.Join([]string{
		`{"tool":"read_file","args":{"path":"README.md"}}`,
		`{"tool":"shell","args":{"command":"ls"},"cwd":"` + proj + `"}`,
		`not json`,
		`{"tool":"nope","args":{}}`,
		``,
		`{"tool":"read_file","args":{"path":"keys/id_rsa"},"cwd":"` + proj + `"}`,
		`{"tool":"read_file","args":["x"]}`,
		`{"tool":"read_file","args":{"path":"/tmp/x"},"cwd":"/does/not/exist"}`,
	}, "\n")
	out, err := runCheckCLI(t, in, "check", "--jsonl", "--cwd", proj)
	var ex *exitError
	if !errors.As(err, &ex) || ex.code != 1 {
		t.Fatalf("want exit status 1 after malformed lines, got %v", err)
	}
	got, _ := parseLines(t, out)
	want := []decisionLine{
		{Decision: "allow", RiskAtDecision: "read", SourcedFrom: "default"},
		{Decision: "ask", RiskAtDecision: "execute", SourcedFrom: "default"},
		{Error: "error"},
		{Error: "error"},
		{Decision: "deny", RiskAtDecision: "credential", SourcedFrom: "default"},
		{Error: "error"},
		{Decision: "ask", RiskAtDecision: "write", SourcedFrom: "default"},
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("jsonl mismatch (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.Contains(out, `unknown tool \"nope\"`) {
		t.Errorf("the unknown tool line must name it: %s", out)
	}
}

func TestCheckJSONLAllGood(t *testing.T) {
	_, proj := fakeHome(t)
	out, err := runCheckCLI(t, `{"tool":"list_files","args":{}}`+"\n", "check", "--jsonl", "--cwd", proj)
	if err != nil {
		t.Fatalf("check --jsonl: %v", err)
	}
	if got, _ := parseLines(t, out); len(got) != 1 || got[0].Decision != "allow" {
		t.Errorf("got %s", out)
	}
}

func TestCheckUnknownTool(t *testing.T) {
	_, proj := fakeHome(t)
	out, err := runCheckCLI(t, "", "check", "--json", "--cwd", proj, "--tool", "rm_everything")
	var ex *exitError
	if !errors.As(err, &ex) || ex.code != 1 || !strings.Contains(out, `{"error":"unknown tool \"rm_everything\"`) {
		t.Errorf("--json: got %v, %q", err, out)
	}
	out, err = runCheckCLI(t, "", "check", "--cwd", proj, "--tool", "rm_everything")
	if !errors.As(err, &ex) || ex.code != 1 || out != "" || !strings.Contains(err.Error(), `check: unknown tool "rm_everything"`) {
		t.Errorf("got %v, %q", err, out)
	}
}

// TestCheckForPeople: without --json, check prints the decision, the risk,
// where it came from, the reason and each finding with its bytes
// underlined, escaped.
func TestCheckForPeople(t *testing.T) {
	_, proj := fakeHome(t)
	tests := []struct {
		name string
		args string
		want []string
	}{
		{"two findings underlined", `{"command":"timeout 5 env rm -rf dist && cat ~/.ssh/id_rsa"}`, []string{
			"DENY  shell, risk destructive, from default\n",
			"reason: shell: `timeout 5 env rm -rf dist` rm -r deletes `dist` and everything below, which cannot be undone (and 1 more finding); it also touches a credential (`~/.ssh/id_rsa` is in ~/.ssh",
			"findings:\n",
			"  destructive  command: rm -r deletes `dist` and everything below, which cannot be undone\n" +
				"    timeout 5 env rm -rf dist && cat ~/.ssh/id_rsa\n" +
				"    ^^^^^^^^^^^^^^^^^^^^^^^^^\n",
			"  credential   command: `~/.ssh/id_rsa` is in ~/.ssh, where SSH keys live\n" +
				"    timeout 5 env rm -rf dist && cat ~/.ssh/id_rsa\n" +
				"                                     ^^^^^^^^^^^^^\n",
		}},
		{"wide characters before the span", `{"command":"echo 你好 && rm -rf dist"}`, []string{
			"    echo 你好 && rm -rf dist\n" +
				"                 ^^^^^^^^^^^\n", // 你 and 好 take two columns each
		}},
		{"the line of a multi-line command, escaped", `{"command":"echo \u001b]0;x\u0007\nrm -rf dist\necho done"}`, []string{
			"    rm -rf dist\n    ^^^^^^^^^^^\n",
		}},
		{"a read", `{"path":"README.md"}`, []string{"ALLOW  read_file, risk read, from default\nreason: "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool := "shell"
			if strings.Contains(tc.args, "path") {
				tool = "read_file"
			}
			out, err := runCheckCLI(t, "", "check", "--cwd", proj, "--tool", tool, "--args", tc.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks\n%s\ngot:\n%s", w, out)
				}
			}
			if strings.ContainsAny(out, "\x1b\x07") || strings.HasPrefix(out, "{") {
				t.Errorf("not for a person:\n%q", out)
			}
		})
	}
}

// TestIgnoredProjectAllowIsNamed: a project allow rule that does not count
// because the project is not trusted is named by check's reason and by
// policy explain, with the command that trusts the project (issue 24
// item 5).
func TestIgnoredProjectAllowIsNamed(t *testing.T) {
	proj := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := os.MkdirAll(filepath.Join(proj, ".custom-agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, ".custom-agent", "policy.json"), []byte(`{"version":1,"rules":[{"id":"npm-test","tool":"shell","command":"npm test","decision":"allow"}]}`), 0o644)
	out, _, _ := runCLI(t, "check", "--cwd", proj, "--tool", "shell", "--args", `{"command":"npm test"}`)
	if !strings.Contains(out, "npm-test would allow it") || !strings.Contains(out, "custom-agent trust") {
		t.Errorf("check does not name the ignored rule:\n%s", out)
	}
	out, _, _ = runCLI(t, "policy", "explain", "--cwd", proj, "--tool", "shell", "--args", `{"command":"npm test"}`)
	if !strings.Contains(out, `"npm-test" (allow, project): ignored`) {
		t.Errorf("explain does not list the ignored rule:\n%s", out)
	}
	out, _, _ = runCLI(t, "check", "--cwd", proj, "--tool", "shell", "--args", `{"command":"npm ci"}`)
	if strings.Contains(out, "would allow it") {
		t.Errorf("a rule that does not match is named:\n%s", out)
	}
}
