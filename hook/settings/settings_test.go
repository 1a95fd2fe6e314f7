package settings

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/hook"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return m
}

func topKeys(t *testing.T, b []byte) []string {
	t.Helper()
	o, err := parseObject(b)
	if err != nil {
		t.Fatal(err)
	}
	return o.keys
}

// TestInstallUninstall, on real-looking settings files of each agent:
// install adds custom-agent's hook to the before and after tool events
// (testdata/<agent>.installed.json), keeps every other key in its place
// and every other hook; installing again changes nothing; uninstall gives
// back the original settings.
func TestInstallUninstall(t *testing.T) {
	t.Parallel()
	for _, a := range hook.Agents {
		t.Run(string(a), func(t *testing.T) {
			t.Parallel()
			orig, err := os.ReadFile(filepath.Join("testdata", string(a)+".settings.json"))
			if err != nil {
				t.Fatal(err)
			}
			cmd := "/usr/local/bin/custom-agent-gate hook " + string(a)
			got, err := Install(orig, a, cmd)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", string(a)+".installed.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want, err := os.ReadFile(golden); err != nil || !bytes.Equal(got, want) {
				t.Errorf("installed settings differ from %s (%v):\n%s", golden, err, got)
			}
			if diff := cmp.Diff(topKeys(t, orig), topKeys(t, got)); diff != "" {
				t.Errorf("the keys moved (-before +after):\n%s", diff)
			}
			before, after := decode(t, orig), decode(t, got)
			for k, v := range before {
				if k == "hooks" {
					continue
				}
				if diff := cmp.Diff(v, after[k]); diff != "" {
					t.Errorf("key %s changed:\n%s", k, diff)
				}
			}
			again, err := Install(got, a, cmd)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("installing twice changed the settings (%v):\n%s", err, Diff(got, again))
			}
			back, n, err := Uninstall(got, a)
			if err != nil || n != 2 {
				t.Fatalf("Uninstall: %d removed, %v", n, err)
			}
			if diff := cmp.Diff(decode(t, orig), decode(t, back)); diff != "" {
				t.Errorf("uninstall did not give back the settings (-orig +back):\n%s", diff)
			}
			if _, n, _ := Uninstall(orig, a); n != 0 {
				t.Errorf("uninstall took %d hooks that are not custom-agent's", n)
			}
		})
	}
}

func TestInstallEmptyAndErrors(t *testing.T) {
	t.Parallel()
	got, err := Install(nil, hook.ClaudeCode, "custom-agent hook claude-code")
	if err != nil || !strings.Contains(string(got), `"PreToolUse"`) || !strings.Contains(string(got), `"PostToolUse"`) {
		t.Errorf("a new settings file: %v\n%s", err, got)
	}
	if back, _, err := Uninstall(got, hook.ClaudeCode); err != nil || string(bytes.TrimSpace(back)) != "{}" {
		t.Errorf("uninstall from a new file: %v\n%s", err, back)
	}
	for name, in := range map[string]string{
		"comments":      "// mine\n{}",
		"array":         "[]",
		"hooks a list":  `{"hooks": []}`,
		"duplicate key": `{"a": 1, "a": 2}`,
		"event a map":   `{"hooks": {"PreToolUse": {}}}`,
	} {
		if _, err := Install([]byte(in), hook.ClaudeCode, "custom-agent hook claude-code"); err == nil {
			t.Errorf("%s: installed into %s", name, in)
		}
	}
	if _, err := Install(nil, hook.ClaudeCode, "rm -rf ~"); err == nil {
		t.Error("installed a command that is not custom-agent's hook")
	}
}

// TestUninstallKeepsSharedEntries: custom-agent's hook in an entry with
// another hook is taken out and the other kept.
func TestUninstallKeepsSharedEntries(t *testing.T) {
	t.Parallel()
	in := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./guard.sh"},{"type":"command","command":"'/opt/my tools/custom-agent-gate' hook claude-code"}]}]}}`
	got, n, err := Uninstall([]byte(in), hook.ClaudeCode)
	if err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
	want := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./guard.sh"}]}]}}`
	if diff := cmp.Diff(decode(t, []byte(want)), decode(t, got)); diff != "" {
		t.Error(diff)
	}
	if _, n, _ := Uninstall([]byte(in), hook.GeminiCLI); n != 0 {
		t.Error("uninstalling gemini-cli took claude-code's hook")
	}
}

func TestIsOurs(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]bool{
		"custom-agent-gate hook claude-code":                 true,
		"/usr/bin/custom-agent hook claude-code --policy x":  true,
		"'/opt/my tools/custom-agent-gate' hook claude-code": true,
		"custom-agent-gate hook gemini-cli":                  false,
		"my-custom-agent-gate hook claude-code":              false,
		"echo custom-agent-gate hook claude-codex":           false,
		"custom-agent-gate check --tool shell":               false,
		// Another program's hook that runs ours too is not ours: taking it
		// out would take the user's program out with it.
		"/usr/local/bin/audit-logger; custom-agent hook claude-code":             false,
		"audit-logger && custom-agent-gate hook claude-code":                     false,
		"custom-agent-gate hook claude-code | tee /tmp/log":                      false,
		"custom-agent-gate hook claude-code; rm -rf ~":                           false,
		"sh -c 'custom-agent-gate hook claude-code'":                             false,
		"custom-agent-gate hook claude-code --no-record --deadline 2s":           true,
		"custom-agent-gate hook claude-code --policy=/p.json --no-builtin-rules": true,
		"~/bin/custom-agent-gate hook claude-code":                               true,
		"custom-agent-gate hook claude-code --data-dir /d":                       true,
		"custom-agent-gate hook claude-code --strict":                            false, // gemini-cli's flag
		"custom-agent-gate hook claude-code extra":                               false,
		"custom-agent-gate hook claude-code $(evil)":                             false,
		`"C:\\tools\\custom-agent-gate.exe" hook claude-code`:                    true,
	} {
		if got := IsOurs(hook.ClaudeCode, cmd); got != want {
			t.Errorf("IsOurs(%q) = %v", cmd, got)
		}
	}
}

// TestInstallKeepsAnotherProgramsHook: a hook whose command runs another
// program before ours is the user's: install keeps it beside ours, and
// uninstall leaves it.
func TestInstallKeepsAnotherProgramsHook(t *testing.T) {
	t.Parallel()
	user := `/usr/local/bin/audit-logger; custom-agent hook claude-code --no-record`
	in := []byte(`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"` + user + `"}]}]}}`)
	out, err := Install(in, hook.ClaudeCode, "custom-agent-gate hook claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "audit-logger") {
		t.Errorf("install removed the user's hook:\n%s", out)
	}
	back, n, err := Uninstall(out, hook.ClaudeCode)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || !strings.Contains(string(back), "audit-logger") {
		t.Errorf("uninstall took out %d hooks:\n%s", n, back)
	}
}

// TestDisabled: a settings file that turns every hook off is named, so
// that install does not claim a hook that will not run.
func TestDisabled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a        hook.Agent
		settings string
		disabled bool
	}{
		{hook.ClaudeCode, `{"disableAllHooks":true}`, true},
		{hook.ClaudeCode, `{"disableAllHooks":false}`, false},
		{hook.ClaudeCode, `{}`, false},
		{hook.GeminiCLI, `{"hooksConfig":{"enabled":false}}`, true},
		{hook.GeminiCLI, `{"tools":{"enableHooks":false}}`, true},
		{hook.GeminiCLI, `{"hooksConfig":{"enabled":true}}`, false},
		{hook.GeminiCLI, `{"hooksConfig":{"disabled":["custom-agent-gate hook gemini-cli"]}}`, true},
		{hook.GeminiCLI, `not json`, false},
	}
	for _, tc := range tests {
		if got := Disabled(tc.a, []byte(tc.settings), "custom-agent-gate hook gemini-cli") != ""; got != tc.disabled {
			t.Errorf("%s %s: disabled %v, want %v", tc.a, tc.settings, got, tc.disabled)
		}
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	got := Diff([]byte("a\nb\nc\nd\ne\nf\n"), []byte("a\nb\nc\nX\ne\nf\n"))
	want := "  b\n  c\n- d\n+ X\n  e\n  f\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
