package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/event"
)

// TestRunDeniesReadsOfACustomDataDir (third serve review, left-over): the
// data directory given by --data-dir or $CUSTOM_AGENT_DATA_DIR holds
// serve's script token, which answers questions. The runner gives the
// engine the data directory, so the agent's read_file of the token there
// is denied with a reason, not read: here with the data directory inside
// the working directory, the case of `serve --cwd $HOME`.
func TestRunDeniesReadsOfACustomDataDir(t *testing.T) {
	for _, how := range []string{"flag", "env"} {
		t.Run(how, func(t *testing.T) {
			cwd := t.TempDir()
			data := filepath.Join(cwd, "agent-data")
			if err := os.MkdirAll(data, 0o700); err != nil {
				t.Fatal(err)
			}
			token := filepath.Join(data, "serve-1234.token")
			const secret = "5f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190807060"
			if err := os.WriteFile(token, []byte(secret), 0o600); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(t.TempDir(), "m.jsonl")
			call, _ := json.Marshal(map[string]any{"text": "reading", "toolCalls": []any{map[string]any{"id": "t1", "name": "read_file", "args": map[string]any{"path": "agent-data/serve-1234.token"}}}})
			if err := os.WriteFile(script, append(call, "\n{\"text\":\"done\"}\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"run", "--model", "script:" + script, "--cwd", cwd, "--json", "read it"}
			if how == "flag" {
				args = append([]string{"--data-dir", data}, args...)
			} else {
				t.Setenv("CUSTOM_AGENT_DATA_DIR", data)
			}
			out, errOut, err := runWithInput(t, "", args...)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, errOut)
			}
			if strings.Contains(out, secret) {
				t.Fatalf("the token reached the session:\n%s", out)
			}
			var resolved map[string]any
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var e event.Event
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("stdout line is not an event: %q", line)
				}
				if e.Type == "permission.resolved" {
					if err := json.Unmarshal(e.Payload, &resolved); err != nil {
						t.Fatal(err)
					}
				}
			}
			if resolved == nil || resolved["decision"] != "deny" {
				t.Fatalf("permission.resolved = %v, want deny\n%s", resolved, out)
			}
			if r, _ := resolved["reason"].(string); !strings.Contains(r, "custom-agent's own data") {
				t.Errorf("reason %q does not say the file is custom-agent's own data", r)
			}
		})
	}
}
