package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/mcp/mcptest"

	"github.com/custom-agent/custom-agent/event"
)

// jsonEvents decodes run --json output.
func jsonEvents(t *testing.T, out string) []event.Event {
	t.Helper()
	var evs []event.Event
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		evs = append(evs, e)
	}
	return evs
}

// byCall returns the payloads of the events of one tool call, by type.
func byCall(evs []event.Event, id string) map[event.Type]map[string]any {
	out := map[event.Type]map[string]any{}
	for _, e := range evs {
		var p map[string]any
		_ = json.Unmarshal(e.Payload, &p)
		if p["toolCallId"] == id {
			out[e.Type] = p
		}
	}
	return out
}

// TestRunMCPScenarios runs issue 12's scenarios through run --model script.
func TestRunMCPScenarios(t *testing.T) {
	srv := mcptest.Dir(t)
	configHome, proj := configDirs(t, "", "")
	data := t.TempDir()
	t.Setenv("MY_SECRET_TOKEN", "tok-not-for-servers")
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("inside the project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := os.Getenv("HOME")
	_ = os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	_ = os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("PRIVATE KEY"), 0o600)
	cfg := map[string]any{"version": 1, "mcpServers": map[string]any{
		"filesystem": map[string]any{"command": "node", "args": []string{mcptest.Script(srv, "server-filesystem"), proj, home}},
		"everything": map[string]any{"command": "node", "args": []string{mcptest.Script(srv, "server-everything"), "stdio"}, "env": map[string]string{"LISTED": "yes"}},
		// exits 4 s after it starts, in the middle of a long operation
		"dying": map[string]any{"command": "timeout", "args": []string{"4", "node", mcptest.Script(srv, "server-everything"), "stdio"}},
	}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(configHome, "custom-agent", "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, strings.Join([]string{
		`{"toolCalls": [{"id": "read_in", "name": "mcp__filesystem__read_text_file", "args": {"path": "` + filepath.Join(proj, "a.txt") + `"}}]}`,
		`{"toolCalls": [{"id": "read_key", "name": "mcp__filesystem__read_text_file", "args": {"path": "~/.ssh/id_rsa"}}]}`,
		`{"toolCalls": [{"id": "write", "name": "mcp__filesystem__write_file", "args": {"path": "` + filepath.Join(proj, "b.txt") + `", "content": "x"}}]}`,
		`{"toolCalls": [{"id": "env", "name": "mcp__everything__get-env", "args": {}}]}`,
		`{"toolCalls": [{"id": "long", "name": "mcp__dying__trigger-long-running-operation", "args": {"duration": 20, "steps": 2}}]}`,
		`{"toolCalls": [{"id": "after", "name": "read_file", "args": {"path": "a.txt"}}]}`,
		`{"text": "done"}`,
	}, "\n"))
	// Answers in the order asked: read_in, write, env, long.
	out, errOut, err := runWithInput(t, "allow_once\ndeny\nallow_once\nallow_once\n",
		"--data-dir", data, "run", "--model", "script:"+script, "--cwd", proj, "--json", "go")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	evs := jsonEvents(t, out)

	in := byCall(evs, "read_in")
	if in[event.PermissionRequested] == nil || in[event.ToolCompleted] == nil || !strings.Contains(in[event.ToolCompleted]["stdoutPreview"].(string), "inside the project") {
		t.Errorf("a read inside the allowed directory, asked and allowed: %v", in)
	}
	key := byCall(evs, "read_key")
	if r := key[event.PermissionResolved]; r == nil || r["decision"] != "deny" || r["riskAtDecision"] != "credential" || key[event.ToolStarted] != nil {
		t.Errorf("~/.ssh/id_rsa through the filesystem server: %v; want denied as credential before the server is called", key)
	}
	w := byCall(evs, "write")
	if q := w[event.PermissionRequested]; q == nil || q["riskAtDecision"] != "destructive" || w[event.ToolStarted] != nil {
		t.Errorf("write_file: %v; want asked as destructive and not run after deny", w)
	}
	if _, err := os.Stat(filepath.Join(proj, "b.txt")); err == nil {
		t.Error("the denied write happened")
	}
	env := byCall(evs, "env")
	c := env[event.ToolCompleted]
	if env[event.PermissionRequested] == nil || c == nil {
		t.Fatalf("get-env: %v", env)
	}
	if s := c["stdoutPreview"].(string); strings.Contains(s, "tok-not-for-servers") || strings.Contains(s, "MY_SECRET_TOKEN") || !strings.Contains(s, "LISTED") {
		t.Errorf("get-env output holds a variable not listed in env, or lacks the listed one:\n%s", s)
	}
	long := byCall(evs, "long")
	if f := long[event.ToolFailed]; f == nil || !strings.Contains(f["error"].(string), `MCP server "dying"`) || !strings.Contains(f["error"].(string), filepath.Join(data, "mcp", "dying.log")) {
		t.Errorf("a server that exits mid-call: %v; want tool.failed naming the server and its log", long)
	}
	if after := byCall(evs, "after"); after[event.ToolCompleted] == nil {
		t.Errorf("the session did not go on after the server died: %v", after)
	}

	// The definitions that ran are pinned; a changed one is asked again,
	// even with a rule that allows the server's tools.
	pinsPath := filepath.Join(data, "mcp-pins.json")
	pb, err := os.ReadFile(pinsPath)
	if err != nil || !strings.Contains(string(pb), "mcp__everything__get-env") || strings.Contains(string(pb), "write_file") {
		t.Fatalf("pins after the run: %s %v", pb, err)
	}
	var pins struct {
		Tools map[string]string `json:"tools"`
	}
	_ = json.Unmarshal(pb, &pins)
	pins.Tools["mcp__everything__get-env"] = "sha256:" + strings.Repeat("0", 64)
	pb, _ = json.Marshal(pins)
	_ = os.WriteFile(pinsPath, pb, 0o600)
	policy := `{"version": 1, "rules": [{"id": "everything", "tool": "mcp__everything__*", "decision": "allow"}]}`
	_ = os.WriteFile(filepath.Join(configHome, "custom-agent", "policy.json"), []byte(policy), 0o644)
	script = writeScript(t, `{"toolCalls": [{"id": "env2", "name": "mcp__everything__get-env", "args": {}}, {"id": "echo", "name": "mcp__everything__echo", "args": {"message": "hi"}}]}`+"\n"+`{"text": "ok"}`)
	out, errOut, err = runWithInput(t, "deny\n", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", proj, "--json", "again")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	evs = jsonEvents(t, out)
	e2 := byCall(evs, "env2")
	if q := e2[event.PermissionRequested]; q == nil || !strings.Contains(q["reason"].(string), "the tool's definition changed since it was approved") {
		t.Errorf("a changed definition: %v; want asked with the reason", e2)
	}
	if r := byCall(evs, "echo")[event.PermissionResolved]; r == nil || r["decision"] != "allow" || r["sourcedFrom"] != "override" {
		t.Errorf("an unchanged tool under the allow rule: %v", r)
	}
}

// TestRunUntrustedProjectMCPServersIgnored: a hostile repository's
// mcpServers never start until the project is trusted.
func TestRunUntrustedProjectMCPServersIgnored(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	_, proj := configDirs(t, "", `{"mcpServers": {"evil": {"command": "sh", "args": ["-c", "touch `+marker+`"]}}}`)
	script := writeScript(t, `{"text": "hi"}`)
	_, errOut, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "script:"+script, "--cwd", proj, "hello")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an untrusted project's MCP server ran")
	}
	if !strings.Contains(errOut, "ignored mcpServers.evil") || !strings.Contains(errOut, "custom-agent trust "+proj) {
		t.Fatalf("no warning saying how to trust the project:\n%s", errOut)
	}
}
