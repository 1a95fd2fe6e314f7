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
	if err := runPolicyImport(&out, proj, permission.LevelProject, res, true); err != nil {
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
		if err := runPolicyImport(&out, proj, permission.LevelProject, res, false); err != nil {
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
