package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaskReadOutputSlices (fourth serve review, finding 2; the reviewer's
// TestZZMaskBypass): a copy of serve's script token in a project file,
// read with read_file (masked), then with read_output 7 bytes at a time,
// less than the 8-byte fragments the mask knows: each slice was the raw
// artifact, and together they were the token. read_output now masks its
// range in the context of the stored output, so every slice that cuts into
// the token shows [REDACTED]. `cut -c` of the file shows runs long enough
// to be masked as fragments. (The reviewer's `tr a-f A-F` and `od -c`
// forms are transformations no mask can follow: docs/web.md says masking
// is best effort against copies; the defence is denying the reads that
// find the token.)
func TestMaskReadOutputSlices(t *testing.T) {
	data, cwd := t.TempDir(), t.TempDir()
	const token = "5f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190807060"
	if err := os.WriteFile(filepath.Join(data, "serve-7717.token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("copied: "+token+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var lines []string
	add := func(id, name string, args map[string]any) {
		b, _ := json.Marshal(map[string]any{"text": "x", "toolCalls": []any{map[string]any{"id": id, "name": name, "args": args}}})
		lines = append(lines, string(b))
	}
	add("t1", "read_file", map[string]any{"path": "notes.txt"})
	for off := 8; off < 72; off += 7 {
		add("r"+strings.Repeat("x", off), "read_output", map[string]any{"toolCallId": "t1", "offset": off, "limit": 7})
	}
	add("s3", "shell", map[string]any{"command": "cut -c9-40 notes.txt; cut -c41-80 notes.txt"})
	lines = append(lines, `{"text":"done"}`)
	script := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(script, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "--json", "read notes")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	var pieces strings.Builder
	slices := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) != nil || e["type"] != "tool.completed" {
			continue
		}
		pl := e["payload"].(map[string]any)
		id, _ := pl["toolCallId"].(string)
		if !strings.HasPrefix(id, "rx") {
			continue
		}
		slices++
		s, _ := pl["stdoutPreview"].(string)
		// read_file numbers lines, so the slices start before the
		// token; one that shows no [REDACTED] must be no part of it.
		if p := strings.TrimSpace(s); p != "" && !strings.Contains(s, "[REDACTED]") && strings.Contains(token, p) {
			t.Errorf("read_output %s showed %q of the token, not masked", id, s)
		}
		pieces.WriteString(s)
	}
	if slices != 10 {
		t.Fatalf("%d read_output calls completed, want 10:\n%s", slices, out)
	}
	for i := 0; i+8 <= len(token); i += 4 {
		if strings.Contains(pieces.String(), token[i:i+8]) {
			t.Errorf("LEAK: the read_output slices hold %q of the token: %q", token[i:i+8], pieces.String())
		}
	}
	if strings.Contains(out, token[:8]) || strings.Contains(out, token[32:40]) {
		t.Errorf("LEAK: a part of the token reached the session")
	}
}
