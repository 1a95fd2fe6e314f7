package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/ruleimport"
	"github.com/custom-agent/custom-agent/permission"
)

// TestPolicyImport: --dry-run prints the rules and writes nothing; an
// import writes them to the project policy, and a second adds nothing.
func TestPolicyImport(t *testing.T) {
	proj := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "hook", "ruleimport", "testdata", "proj", ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := ruleimport.Translate(hook.ClaudeCode, b, ruleimport.Options{SettingsDir: filepath.Join(proj, ".claude")})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runPolicyImport(&out, proj, permission.LevelProject, res, importOptions{dryRun: true}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(proj, ".custom-agent", "policy.json")
	if _, err := os.Stat(file); err == nil {
		t.Fatal("--dry-run wrote the policy")
	}
	for _, want := range []string{`"version": 1`, `"id": "claude-code allow Bash(npm run test:*)"`, "4 rules not imported:", "allow Glob: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--dry-run output lacks %q:\n%s", want, out.String())
		}
	}
	for range 2 {
		out.Reset()
		if err := runPolicyImport(&out, proj, permission.LevelProject, res, importOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(written), `"id": "claude-code `); n != 16 {
		t.Errorf("%d rules written, want 16:\n%s", n, written)
	}
}

// TestPolicyImportGemini: with no FILE, gemini-cli's import reads the
// project's settings and its policy-engine files.
func TestPolicyImportGemini(t *testing.T) {
	proj := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for src, dst := range map[string]string{
		"gemini-settings.json": filepath.Join(proj, ".gemini", "settings.json"),
		"gemini-policy.toml":   filepath.Join(proj, ".gemini", "policies", "team.toml"),
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "hook", "ruleimport", "testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := newPolicyCmd(nil)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"import", "gemini-cli", "--dry-run", "--cwd", proj})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id": "gemini-cli allow run_shell_command(git status)"`, `"id": "gemini-cli deny policy shell rm -rf"`, "deny team.toml [[rule]] at line 48: argsPattern"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
}

// importProject is a repository whose Claude Code settings allow a
// command and deny another, and its policy command.
func importProject(t *testing.T) (proj string, run func(args ...string) (string, error)) {
	t.Helper()
	proj = t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(proj, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"permissions":{"allow":["Bash(curl:*)"],"deny":["Bash(rm:*)"]}}`
	if err := os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	return proj, func(args ...string) (string, error) {
		cmd := newPolicyCmd(nil)
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"import"}, args...))
		err := cmd.Execute()
		return out.String(), err
	}
}

// TestPolicyImportUserLevelRefusesTheProject: --level user takes no
// default FILE and no file inside the project: a repository's allow rules
// would become global.
func TestPolicyImportUserLevelRefusesTheProject(t *testing.T) {
	proj, run := importProject(t)
	for _, args := range [][]string{
		{"claude-code", "--level", "user", "--cwd", proj},
		{"claude-code", filepath.Join(proj, ".claude", "settings.json"), "--level", "user", "--cwd", proj},
		{"claude-code", filepath.Join(proj, "sub", "..", ".claude", "settings.json"), "--level", "user", "--cwd", proj},
	} {
		out, err := run(args...)
		if err == nil || !strings.Contains(err.Error(), "--level user") {
			t.Errorf("%v: err %v, out %s", args, err, out)
		}
		if _, serr := os.Stat(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "custom-agent", "policy.json")); serr == nil {
			t.Fatalf("%v wrote the user policy", args)
		}
	}
	// A file of the user's own, outside the project, is imported.
	own := filepath.Join(os.Getenv("HOME"), ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(own), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, []byte(`{"permissions":{"allow":["Bash(npm test)"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run("claude-code", own, "--level", "user", "--cwd", proj); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestPolicyImportUntrustedProject: in a project that is not trusted, the
// imported allow rules are written but not trusted unless --trust, and
// the output lists them.
func TestPolicyImportUntrustedProject(t *testing.T) {
	for _, trust := range []bool{false, true} {
		proj, run := importProject(t)
		args := []string{"claude-code", "--cwd", proj}
		if trust {
			args = append(args, "--trust")
		}
		out, err := run(args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(out, "allow claude-code allow Bash(curl:*)") && !strings.Contains(out, "allow Bash(curl:*)") {
			t.Errorf("trust=%v: the allow rule is not listed:\n%s", trust, out)
		}
		s, err := openPolicy(proj, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range s.Entries(permission.LevelProject) {
			if e.Rule.Decision == permission.Allow {
				n++
				if e.Untrusted == trust {
					t.Errorf("trust=%v: the imported allow rule %q has Untrusted=%v", trust, e.Rule.ID, e.Untrusted)
				}
			}
		}
		if n != 1 {
			t.Errorf("trust=%v: %d allow rules written, want 1", trust, n)
		}
	}
}
