package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCustomDataDirProtected: the gate protects the hook journal, the
// taint files and the event log under whatever data directory it records
// to (--data-dir before or after the command, CUSTOM_AGENT_DATA_DIR,
// XDG_DATA_HOME), outside the project or inside it, as it does under the
// default one: a Write there is denied even in acceptEdits mode, and a
// shell command that removes, copies or moves onto them is judged as it
// is under the default data directory (review finding 8).
func TestCustomDataDirProtected(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("CUSTOM_AGENT_BUILTIN_RULES", "")
	t.Setenv("CUSTOM_AGENT_DATA_DIR", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	proj := t.TempDir()
	outside := filepath.Join(t.TempDir(), "ca-data")
	inside := filepath.Join(proj, "var", "ca-data")
	xdg := t.TempDir()
	for _, d := range []string{outside, inside, filepath.Join(xdg, "custom-agent"), filepath.Join(home, ".local", "share", "custom-agent")} {
		if err := os.MkdirAll(filepath.Join(d, "hook-journal", "taint"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	files := []string{"hook-journal/day-2026-12-01.jsonl", "hook-journal/taint/claude-code-s.json", "events.db"}
	calls := func(data string) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, f := range files {
			p := filepath.Join(data, f)
			m["Write "+f] = map[string]any{"tool_name": "Write", "tool_input": map[string]string{"file_path": p, "content": "{}"}}
			m["rm "+f] = map[string]any{"tool_name": "Bash", "tool_input": map[string]string{"command": "rm -f " + p}}
			m["cp "+f] = map[string]any{"tool_name": "Bash", "tool_input": map[string]string{"command": "cp /dev/null " + p}}
			m["mv "+f] = map[string]any{"tool_name": "Bash", "tool_input": map[string]string{"command": "mv " + filepath.Join(proj, "x") + " " + p}}
		}
		return m
	}
	decide := func(t *testing.T, args []string, call map[string]any) string {
		t.Helper()
		ev := map[string]any{"session_id": "s", "cwd": proj, "hook_event_name": "PreToolUse", "permission_mode": "acceptEdits", "tool_use_id": "t9"}
		for k, v := range call {
			ev[k] = v
		}
		b, _ := json.Marshal(ev)
		var out, errOut bytes.Buffer
		if code := run(t.Context(), args, bytes.NewReader(b), &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		var ans struct {
			Out struct {
				Decision string `json:"permissionDecision"`
				Reason   string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out.Bytes(), &ans); err != nil {
			t.Fatalf("%s: %v", out.String(), err)
		}
		return ans.Out.Decision + ": " + ans.Out.Reason
	}
	// The default data directory: what the others must match.
	want := map[string]string{}
	for name, c := range calls(filepath.Join(home, ".local", "share", "custom-agent")) {
		want[name] = decide(t, []string{"hook", "claude-code", "--no-record"}, c)
		t.Logf("default: %s: %s", name, want[name])
	}
	for _, tc := range []struct {
		name, data string
		args       []string
		env        map[string]string
	}{
		{"flag outside", outside, []string{"hook", "claude-code", "--data-dir", outside}, nil},
		{"flag first outside", outside, []string{"--data-dir", outside, "hook", "claude-code"}, nil},
		{"flag inside", inside, []string{"hook", "claude-code", "--data-dir", inside}, nil},
		{"env inside", inside, []string{"hook", "claude-code"}, map[string]string{"CUSTOM_AGENT_DATA_DIR": inside}},
		{"env outside", outside, []string{"hook", "claude-code"}, map[string]string{"CUSTOM_AGENT_DATA_DIR": outside}},
		{"xdg", filepath.Join(xdg, "custom-agent"), []string{"hook", "claude-code"}, map[string]string{"XDG_DATA_HOME": xdg}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			for name, c := range calls(tc.data) {
				got := decide(t, tc.args, c)
				verdict, _, _ := strings.Cut(got, ":")
				wantVerdict, _, _ := strings.Cut(want[name], ":")
				if strings.HasPrefix(name, "Write") && verdict != "deny" {
					t.Errorf("%s: %s, want deny", name, got)
				}
				if verdict != wantVerdict {
					t.Errorf("%s: %s\nunder the default data directory: %s", name, got, want[name])
				}
			}
		})
	}
}
