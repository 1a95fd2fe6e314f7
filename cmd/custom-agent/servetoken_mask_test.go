package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunMasksServeTokens: a serve script token in the data directory is
// hidden in what a tool printed, though the call names no secret and the
// engine allows it: here a copy of it in a project file, read with
// read_file. Neither the log nor the model sees it; a 64-hex checksum
// beside it stays visible.
func TestRunMasksServeTokens(t *testing.T) {
	data, cwd := t.TempDir(), t.TempDir()
	const token = "5f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190807060"
	checksum := strings.Repeat("ab", 32)
	if err := os.WriteFile(filepath.Join(data, "serve-7717.token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("copied: "+token+"\nsum: "+checksum+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "m.jsonl")
	call, _ := json.Marshal(map[string]any{"text": "reading", "toolCalls": []any{map[string]any{"id": "t1", "name": "read_file", "args": map[string]any{"path": "notes.txt"}}}})
	if err := os.WriteFile(script, append(call, "\n{\"text\":\"done\"}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "--json", "read notes")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	if strings.Contains(out, token[:16]) || strings.Contains(errOut, token[:16]) {
		t.Fatalf("the serve token reached the session:\n%s", out)
	}
	if !strings.Contains(out, "copied: [REDACTED]") {
		t.Errorf("the read was not shown masked:\n%s", out)
	}
	if !strings.Contains(out, checksum) {
		t.Errorf("the checksum was hidden too:\n%s", out)
	}
}
