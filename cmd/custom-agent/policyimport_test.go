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
