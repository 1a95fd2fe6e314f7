package record_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/replay/record"
	"github.com/custom-agent/custom-agent/secrets"
)

// TestFactsMasking: a request's facts keep what a scan found (a file name
// under a key that sounds secret is not a secret) and hide a secret the
// arguments hold wherever it appears, saying that they did.
func TestFactsMasking(t *testing.T) {
	shell, _ := permission.Builtin("shell")
	clean := permission.Request{Tool: shell, Args: map[string]any{"command": "grep -rn hi ."}, Cwd: "/p",
		Trees: map[string]permission.Tree{"/p": {Complete: true, GitSecret: ".git/config", Secret: ".env"}}}
	f := record.Facts(clean, permission.Decision{Decision: permission.Ask}, secrets.Collect(json.RawMessage(`{"command":"grep -rn hi ."}`)), "sha256:x")
	if f.Masked || !strings.Contains(string(f.Request), `"gitSecret":".git/config"`) || !strings.Contains(string(f.Request), `"secret":".env"`) {
		t.Fatalf("masked=%v, request %s", f.Masked, f.Request)
	}
	var back permission.Request
	if err := json.Unmarshal(f.Request, &back); err != nil || back.Trees["/p"].GitSecret != ".git/config" || back.Args["command"] != "grep -rn hi ." {
		t.Fatalf("the facts do not read back: %v %+v", err, back)
	}

	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	args := json.RawMessage(`{"command":"cat /p/` + token + `.txt"}`)
	secret := permission.Request{Tool: shell, Args: map[string]any{"command": "cat /p/" + token + ".txt"}, Cwd: "/p",
		Resolved: map[string]string{"/p/" + token + ".txt": "/q/" + token}}
	f = record.Facts(secret, permission.Decision{Decision: permission.Ask}, secrets.Collect(args), "sha256:x")
	if !f.Masked || strings.Contains(string(f.Request), token) {
		t.Fatalf("masked=%v, request %s", f.Masked, f.Request)
	}
}

// TestSnapshotDigest: a snapshot's digest covers its rules, and survives
// the log's canonical re-encoding.
func TestSnapshotDigest(t *testing.T) {
	pol, err := permission.Compile([]permission.Rule{{ID: "a", Level: permission.LevelUser, Tool: "shell", Command: "npm test", Decision: permission.Allow}})
	if err != nil {
		t.Fatal(err)
	}
	s := record.Snapshot(pol, nil)
	if s.Digest != record.SnapshotDigest(&s) || len(s.Rules) != 1 {
		t.Fatalf("snapshot %+v", s)
	}
	other, _ := permission.Compile([]permission.Rule{{ID: "a", Level: permission.LevelUser, Tool: "shell", Command: "npm", Decision: permission.Allow}})
	if record.Snapshot(other, nil).Digest == s.Digest {
		t.Fatal("two policies share a digest")
	}
}

// BenchmarkFacts is the cost the facts add to each decision: a shell call
// with a scanned tree and a resolved path, and three prior approvals.
func BenchmarkFacts(b *testing.B) {
	shell, _ := permission.Builtin("shell")
	args := json.RawMessage(`{"command":"grep -rn TODO src && cat notes.txt"}`)
	req := permission.Request{Tool: shell, Args: map[string]any{"command": "grep -rn TODO src && cat notes.txt"}, Cwd: "/p", Home: "/home/u",
		Trees:    map[string]permission.Tree{"/p/src": {Complete: true}},
		Resolved: map[string]string{"/p/notes.txt": "/p/notes.txt"},
		History:  []permission.Prior{{Tool: "shell", Args: json.RawMessage(`{"command":"npm test"}`), Decision: permission.Allow, ByUser: true}, {Tool: "shell", Args: json.RawMessage(`{"command":"make"}`), Decision: permission.Allow, ByUser: true}, {Tool: "write_file", Args: json.RawMessage(`{"content":"x","path":"a"}`), Decision: permission.Allow, ByUser: true}},
	}
	sec := secrets.Collect(args)
	d := permission.Decision{Decision: permission.Allow}
	b.ReportAllocs()
	for b.Loop() {
		_ = record.Facts(req, d, sec, "sha256:x")
	}
}
