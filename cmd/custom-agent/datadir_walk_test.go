package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchTextSkipsACustomDataDir (fourth serve review, finding 1; the
// reviewer's TestZZSearchTextWalksIntoTheDataDir and
// TestZZSearchTextHiddenDataDir): a data directory given with --data-dir
// inside the working directory, under a visible and a hidden name. The
// engine allows search_text "." (a read in the working directory); the
// walk used to judge files without the data directory, read serve's
// script token and the raw outputs kept there, and nine 7-byte read_output
// calls of its output gave the model the whole token. Now the walk does
// not enter the data directory, and read_output masks in context.
func TestSearchTextSkipsACustomDataDir(t *testing.T) {
	for _, name := range []string{"cadata", ".cadata"} {
		t.Run(name, func(t *testing.T) {
			cwd := t.TempDir()
			data := filepath.Join(cwd, name)
			if err := os.MkdirAll(data, 0o700); err != nil {
				t.Fatal(err)
			}
			const token = "5f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190807060"
			if err := os.WriteFile(filepath.Join(data, "serve-7717.token"), []byte(token+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// An earlier session printed a secret: masked in its events, raw
			// in its artifact in the data directory.
			const ghp = "ghp_Abcdefghijklmnopqrstuvwxyz0123456789"
			if err := os.WriteFile(filepath.Join(cwd, "notes.md"), []byte(strings.Repeat("filler line to make the output long enough to spill\n", 200)+"GH="+ghp+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s1 := filepath.Join(t.TempDir(), "m1.jsonl")
			b, _ := json.Marshal(map[string]any{"text": "x", "toolCalls": []any{map[string]any{"id": "a1", "name": "read_file", "args": map[string]any{"path": "notes.md"}}}})
			if err := os.WriteFile(s1, append(b, "\n{\"text\":\"done\"}\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, e, err := runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+s1, "--cwd", cwd, "--json", "x"); err != nil {
				t.Fatal(err, e)
			}
			if err := os.Remove(filepath.Join(cwd, "notes.md")); err != nil { // the project no longer holds it
				t.Fatal(err)
			}
			s2 := filepath.Join(t.TempDir(), "m2.jsonl")
			b, _ = json.Marshal(map[string]any{"text": "x", "toolCalls": []any{map[string]any{"id": "b1", "name": "search_text", "args": map[string]any{"pattern": "ghp_|^[0-9a-f]{64}$", "path": "."}}}})
			lines := []string{string(b)}
			for off := 24; off < 88; off += 7 {
				c, _ := json.Marshal(map[string]any{"text": "x", "toolCalls": []any{map[string]any{"id": "r" + strings.Repeat("x", off), "name": "read_output", "args": map[string]any{"toolCallId": "b1", "offset": off, "limit": 7}}}})
				lines = append(lines, string(c))
			}
			lines = append(lines, `{"text":"done"}`)
			if err := os.WriteFile(s2, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, e, err := runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+s2, "--cwd", cwd, "--json", "x")
			if err != nil {
				t.Fatal(err, e)
			}
			var search string
			var got strings.Builder
			for _, line := range strings.Split(out, "\n") {
				var ev map[string]any
				if json.Unmarshal([]byte(line), &ev) != nil || ev["type"] != "tool.completed" {
					continue
				}
				pl := ev["payload"].(map[string]any)
				s, _ := pl["stdoutPreview"].(string)
				if pl["toolCallId"] == "b1" {
					search = s
				} else if len(s) <= 7 {
					got.WriteString(s)
				}
			}
			if strings.Contains(got.String(), token[:16]) || strings.Contains(out, token[:16]) {
				t.Errorf("LEAK: the model holds serve's script token, from allowed calls only: %q", got.String())
			}
			if strings.Contains(out, ghp[4:20]) {
				t.Errorf("LEAK: the raw artifact's secret reached the session")
			}
			// (The decision's facts name a file of the data directory as
			// the secret the working tree holds (permission.Tree): a name
			// the engine records, not what the model is shown.)
			if strings.Contains(search, name+"/") {
				t.Errorf("search_text read files inside the data directory:\n%s", search)
			}
			if want := "[not searched: " + name + ", custom-agent's own data directory"; !strings.Contains(search, want) {
				t.Errorf("search_text output lacks %q:\n%s", want, search)
			}
		})
	}
}

// TestListFilesSkipsACustomDataDir: list_files of a working directory that
// holds the data directory lists the directory but not what it holds (the
// artifacts' names are digests of raw outputs, the token files' names say
// which ports serve listens on).
func TestListFilesSkipsACustomDataDir(t *testing.T) {
	cwd := t.TempDir()
	data := filepath.Join(cwd, ".cadata")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "serve-7717.token"), []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "m.jsonl")
	b, _ := json.Marshal(map[string]any{"text": "x", "toolCalls": []any{map[string]any{"id": "l1", "name": "list_files", "args": map[string]any{}}}})
	if err := os.WriteFile(script, append(b, "\n{\"text\":\"done\"}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, e, err := runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "--json", "x")
	if err != nil {
		t.Fatal(err, e)
	}
	if strings.Contains(out, "serve-7717") || strings.Contains(out, "events.db") {
		t.Errorf("list_files named files inside the data directory:\n%s", out)
	}
	if !strings.Contains(out, "[contents not listed: .cadata, custom-agent's own data directory") {
		t.Errorf("list_files output lacks the note:\n%s", out)
	}
}
