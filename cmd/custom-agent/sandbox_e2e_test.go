package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/sandbox"
)

// TestSandboxedTurn is a turn end to end: an allowed cat of a file that is
// a hard link to the user's SSH key prints nothing secret, and an allowed
// command cannot write a git hook; tool.started names the profile.
func TestSandboxedTurn(t *testing.T) {
	if s := sandbox.Probe(); !s.Available() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox must run under CI=true: %s", s.Unavailable)
		}
		t.Skipf("the sandbox is unavailable here: %s", s.Unavailable)
	}
	const key = "SSH-KEY-CANARY-91be"
	root := t.TempDir()
	home, cwd, data := filepath.Join(root, "home"), filepath.Join(root, "proj"), filepath.Join(root, "data")
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(cwd, ".git", "hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte(key), 0o600)
	os.WriteFile(filepath.Join(cwd, ".git", "config"), []byte("[core]\n"), 0o644)
	if err := os.Link(filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(cwd, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("CUSTOM_AGENT_SANDBOX", "")
	script := filepath.Join(root, "m.jsonl")
	os.WriteFile(script, []byte(`{"toolCalls":[{"id":"t1","name":"shell","args":{"command":"cat notes.txt"}}]}
{"toolCalls":[{"id":"t2","name":"shell","args":{"command":"echo evil > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"}}]}
{"text":"done"}
`), 0o644)
	out, errOut, err := runWithInput(t, "allow_once\nallow_once\nallow_once\n", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "--json", "go")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	if strings.Contains(out, key) || strings.Contains(errOut, key) {
		t.Fatalf("the key reached the output:\n%s", out)
	}
	profiles := map[string]string{}
	completed := map[string]event.ToolCompletedPayload{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not an event: %q", line)
		}
		switch e.Type {
		case event.ToolStarted:
			var p event.ToolStartedPayload
			json.Unmarshal(e.Payload, &p)
			if p.Sandbox != nil {
				profiles[p.ToolCallID] = p.Sandbox.Profile
			}
		case event.ToolCompleted:
			var p event.ToolCompletedPayload
			json.Unmarshal(e.Payload, &p)
			completed[p.ToolCallID] = p
		}
	}
	// The hard link: the analyser may deny it (it compares what a read
	// opens with the home's keys), or, if it allowed it, the read-only
	// sandbox hides it. Either way nothing of the key is printed.
	if c, ran := completed["t1"]; ran {
		if profiles["t1"] != "read-only" || c.ExitCode == nil || *c.ExitCode == 0 || !strings.Contains(c.StderrPreview, "Permission denied") {
			t.Errorf("cat of the hard link ran as %q: %+v", profiles["t1"], c)
		}
	}
	if profiles["t2"] != "workspace" {
		t.Errorf("the hook write ran as %q; want the workspace sandbox", profiles["t2"])
	}
	if c := completed["t2"]; c.ExitCode == nil || *c.ExitCode == 0 || c.SandboxHint == "" {
		t.Errorf("the hook write: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(cwd, ".git", "hooks", "pre-commit")); err == nil {
		t.Fatal("the allowed command wrote .git/hooks/pre-commit")
	}
}

// TestRunWithoutTheSandbox: a question about a call that would be confined
// offers allow_unsandboxed; that answer runs the one call outside the
// sandbox, is recorded, and is not remembered: the same call is asked
// again, and allowed once it runs confined.
func TestRunWithoutTheSandbox(t *testing.T) {
	if s := sandbox.Probe(); !s.Available() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox must run under CI=true: %s", s.Unavailable)
		}
		t.Skipf("the sandbox is unavailable here: %s", s.Unavailable)
	}
	root := t.TempDir()
	home, cwd, data := filepath.Join(root, "home"), filepath.Join(root, "proj"), filepath.Join(root, "data")
	for _, d := range []string{home, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("CUSTOM_AGENT_SANDBOX", "")
	outside := filepath.Join(root, "outside.txt")
	script := filepath.Join(root, "m.jsonl")
	call := `{"name":"shell","args":{"command":"echo unconfined >> ../outside.txt"}}`
	os.WriteFile(script, []byte(`{"toolCalls":[`+strings.Replace(call, "{", `{"id":"t1",`, 1)+`]}
{"toolCalls":[`+strings.Replace(call, "{", `{"id":"t2",`, 1)+`]}
{"text":"done"}
`), 0o644)
	out, errOut, err := runWithInput(t, "allow_unsandboxed\nallow_once\n", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "--json", "go")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	requested := map[string][]string{}
	resolved := map[string]event.PermissionResolvedPayload{}
	started := map[string]*event.SandboxInfo{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not an event: %q", line)
		}
		switch e.Type {
		case event.PermissionRequested:
			var p event.PermissionRequestedPayload
			json.Unmarshal(e.Payload, &p)
			requested[p.ToolCallID] = p.Options
		case event.PermissionResolved:
			var p event.PermissionResolvedPayload
			json.Unmarshal(e.Payload, &p)
			resolved[p.ToolCallID] = p
		case event.ToolStarted:
			var p event.ToolStartedPayload
			json.Unmarshal(e.Payload, &p)
			started[p.ToolCallID] = p.Sandbox
		}
	}
	for _, id := range []string{"t1", "t2"} {
		if !slices.Contains(requested[id], "allow_unsandboxed") {
			t.Errorf("%s: options %v; want allow_unsandboxed offered (the second time too: it is never remembered)", id, requested[id])
		}
	}
	if r := resolved["t1"]; r.Decision != "allow" || r.Option != "allow_unsandboxed" {
		t.Errorf("t1 resolved %+v", r)
	}
	if sb := started["t1"]; sb == nil || sb.Profile != "none" || !strings.Contains(sb.Why, "without the sandbox") {
		t.Errorf("t1 started with sandbox %+v; want none, saying a person chose it", sb)
	}
	if sb := started["t2"]; sb == nil || sb.Profile != "workspace" {
		t.Errorf("t2 started with sandbox %+v; want workspace", sb)
	}
	// One line: the unconfined call wrote outside, the confined one could not.
	if b, err := os.ReadFile(outside); err != nil || string(b) != "unconfined\n" {
		t.Errorf("outside.txt = %q, %v; want one line, from the unconfined call only", b, err)
	}
}
