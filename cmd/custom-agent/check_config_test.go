package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReadsTheConfiguration: check decides as run would with the same
// configuration files: their mode applies unless --mode is given, a file
// that does not load stops it with its position, and an untrusted
// project's ignored keys are warned about.
func TestCheckReadsTheConfiguration(t *testing.T) {
	_, proj := configDirs(t, `{"version": 1, "mode": "plan"}`, `{"version": 1, "mcpServers": {"evil": {"command": "sh"}}}`)
	decide := func(args ...string) (map[string]any, string) {
		t.Helper()
		out, errOut, err := runWithInput(t, "", append([]string{"check", "--json", "--cwd", proj, "--tool", "write_file", "--args", `{"path":"a","content":""}`}, args...)...)
		if err != nil {
			t.Fatalf("check: %v\n%s", err, errOut)
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return d, errOut
	}
	d, errOut := decide()
	if d["decision"] != "deny" || d["sourcedFrom"] != "mode" {
		t.Errorf("with mode plan in the user configuration: %v", d)
	}
	if !strings.Contains(errOut, "ignored mcpServers.evil") || !strings.Contains(errOut, "custom-agent trust "+proj) {
		t.Errorf("no warning about the untrusted project's keys:\n%s", errOut)
	}
	if d, _ := decide("--mode", "default"); d["decision"] != "ask" {
		t.Errorf("--mode default over the configuration's plan: %v", d)
	}

	configHome, proj := configDirs(t, `{"version": 1, "modee": "plan"}`, "")
	_, _, err := runWithInput(t, "", "check", "--cwd", proj, "--tool", "read_file", "--args", `{"path":"a"}`)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(configHome, "custom-agent", "config.json")+":1:") {
		t.Errorf("a configuration that does not load: %v", err)
	}
}
