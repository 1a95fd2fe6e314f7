package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/hook"
)

// TestHookInstallCommand: install shows the change, then writes it at the
// repository root; --dry-run writes nothing; uninstall gives back the
// settings' values; --user writes under HOME.
func TestHookInstallCommand(t *testing.T) {
	repo := t.TempDir()
	home := t.TempDir()
	t.Setenv("HOME", home)
	sub := filepath.Join(repo, "sub")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, ".claude"), sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	orig, err := os.ReadFile(filepath.Join("..", "..", "hook", "settings", "testdata", "claude-code.settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(repo, ".claude", "settings.json")
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	cmd := "custom-agent-gate hook claude-code"
	var out bytes.Buffer
	if err := runHookInstall(&out, hook.ClaudeCode, true, hookInstallFlags{dryRun: true, command: cmd}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) || !strings.Contains(out.String(), "+             \"command\": \"custom-agent-gate hook claude-code\",") {
		t.Fatalf("--dry-run wrote, or did not show the change:\n%s", out.String())
	}
	out.Reset()
	if err := runHookInstall(&out, hook.ClaudeCode, true, hookInstallFlags{command: cmd}); err != nil {
		t.Fatal(err)
	}
	installed, _ := os.ReadFile(path)
	if !strings.Contains(string(installed), `"PreToolUse"`) || !strings.Contains(out.String(), "Wrote "+path) {
		t.Fatalf("install:\n%s\n%s", out.String(), installed)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode became %v", fi.Mode().Perm())
	}
	out.Reset()
	if err := runHookInstall(&out, hook.ClaudeCode, false, hookInstallFlags{}); err != nil {
		t.Fatal(err)
	}
	back, _ := os.ReadFile(path)
	if strings.Contains(string(back), "custom-agent") || !strings.Contains(string(back), "prettier") {
		t.Errorf("uninstall:\n%s", back)
	}
	out.Reset()
	if err := runHookInstall(&out, hook.GeminiCLI, true, hookInstallFlags{user: true, command: "custom-agent hook gemini-cli"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json")); err != nil || !strings.Contains(string(b), `"BeforeTool"`) {
		t.Errorf("--user: %v\n%s", err, b)
	}
}

// TestHookInstallDisabledHooks: settings (the file or the user's) that
// turn every hook off make install say loudly that the hook will not run,
// and fail, rather than report success.
func TestHookInstallDisabledHooks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		a         hook.Agent
		dir, file string // the project's settings
		user      string // the user's settings ("" none)
	}{
		{"claude project", hook.ClaudeCode, ".claude", `{"disableAllHooks": true}`, ""},
		{"claude user", hook.ClaudeCode, ".claude", `{}`, `{"disableAllHooks": true}`},
		{"gemini", hook.GeminiCLI, ".gemini", `{"hooksConfig": {"enabled": false}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, home := t.TempDir(), t.TempDir()
			t.Setenv("HOME", home)
			for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, tc.dir), filepath.Join(home, tc.dir)} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(repo, tc.dir, "settings.json"), []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.user != "" {
				if err := os.WriteFile(filepath.Join(home, tc.dir, "settings.json"), []byte(tc.user), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(repo)
			var out bytes.Buffer
			err := runHookInstall(&out, tc.a, true, hookInstallFlags{command: "custom-agent-gate hook " + string(tc.a)})
			if err == nil || !strings.Contains(err.Error(), "will not run") || !strings.Contains(out.String(), "WARNING") {
				t.Errorf("err %v\n%s", err, out.String())
			}
		})
	}
}
