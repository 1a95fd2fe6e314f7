package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/custom-agent/custom-agent/app/logstore"
)

// TestHookEndToEnd pipes a recorded Claude Code session
// (testdata/hooks/claude-code-session.jsonl: PreToolUse and PostToolUse
// events, one per line) through the built custom-agent-gate, one process
// per event, as Claude Code runs its hook, and compares the answers with
// testdata/hooks/claude-code-session.golden. Then eight hook processes of
// the session run at once. Then custom-agent sessions, log and audit
// verify, as processes on the same data directory, show the session:
// every decision, in order, its secrets masked, and a chain that verifies.
func TestHookEndToEnd(t *testing.T) {
	gate := buildGate(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, data := filepath.Join(base, "home"), filepath.Join(base, "data")
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CUSTOM_AGENT_DATA_DIR=" + data,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "CLAUDE_PROJECT_DIR=" + proj}

	f, err := os.Open(filepath.Join("testdata", "hooks", "claude-code-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.NewReplacer("$PROJ", proj, "$HOME", home).Replace(sc.Text())
		r := runBinary(t, gate, proj, env, line, "hook", "claude-code")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("line %d: exit %d: %s", n, r.code, r.stderr)
		}
		var ev struct {
			Event string `json:"hook_event_name"`
			Tool  string `json:"tool_name"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		answer := "-"
		if r.stdout != "" {
			var out struct {
				Specific struct {
					Decision string `json:"permissionDecision"`
					Reason   string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("line %d: the answer is not Claude Code's JSON: %v\n%s", n, err, r.stdout)
			}
			answer = out.Specific.Decision + ": " + strings.ReplaceAll(out.Specific.Reason, proj, "$PROJ")
		}
		fmt.Fprintf(&got, "%d %s %s %s\n", n, ev.Event, ev.Tool, answer)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "hooks", "claude-code-session.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("answers:\n%s\nwant (%s):\n%s", got.String(), golden, want)
	}

	// Concurrent hook processes of one session.
	const parallel = 8
	var wg sync.WaitGroup
	results := make([]processResult, parallel)
	for i := range parallel {
		wg.Go(func() {
			ev := fmt.Sprintf(`{"session_id":"e2e-7c1d","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"LS","tool_input":{"path":%q},"tool_use_id":"toolu_par_%d"}`, proj, proj, i)
			results[i] = runBinary(t, gate, proj, env, ev, "hook", "claude-code")
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 || !strings.Contains(r.stdout, `"permissionDecision":"allow"`) {
			t.Errorf("parallel call %d: exit %d: %s%s", i, r.code, r.stdout, r.stderr)
		}
	}

	const id = "claude-code-e2e-7c1d"
	cli := func(args ...string) processResult {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		return runBinary(t, self, proj, append(env, asCLI+"=1"), "", args...)
	}
	if r := cli("audit", "verify", id); r.code != 0 {
		t.Fatalf("audit verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := cli("log", "--json", id)
	if r.code != 0 {
		t.Fatalf("log: exit %d: %s", r.code, r.stderr)
	}
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e struct {
			Seq     uint64          `json:"seq"`
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log --json: %v: %s", err, l)
		}
		if e.Seq != uint64(len(types)+1) {
			t.Errorf("seq %d at position %d", e.Seq, len(types)+1)
		}
		types = append(types, e.Type)
	}
	// session.started; 8 PreToolUse lines with 2 events each; 3 PostToolUse
	// lines, one of them completing an ask (+1 resolved by the user); 8
	// parallel calls with 2 each.
	if want := 1 + 8*2 + 3 + 1 + parallel*2; len(types) != want {
		t.Errorf("%d events, want %d:\n%s", len(types), want, strings.Join(types, "\n"))
	}
	if types[0] != "session.started" {
		t.Errorf("first event %s", types[0])
	}
	if strings.Contains(r.stdout, "ghp_abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Error("the log holds the token unmasked")
	}
	s := cli("sessions", "--json")
	if s.code != 0 || !strings.Contains(s.stdout, `"source": "claude-code"`) || !strings.Contains(s.stdout, `"id": "`+id+`"`) {
		t.Errorf("sessions: exit %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "hook-journal", "*.json*")); len(left) != 0 {
		t.Errorf("the journal still holds %d records", len(left))
	}
}

// TestFoldFailureWarns: a journal that cannot be folded (here the log is
// a directory) is left for the next command, with a warning; the command
// goes on.
func TestFoldFailureWarns(t *testing.T) {
	data := t.TempDir()
	jd := filepath.Join(data, "hook-journal")
	if err := os.MkdirAll(jd, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jd, "00000000000000000001-1-aa.json"), []byte(`{"v":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(data, "events.db"), 0o700); err != nil {
		t.Fatal(err)
	}
	var warn strings.Builder
	foldHookJournalOrWarn(t.Context(), logstore.Choice{Spec: "sqlite"}, data, &warn)
	if !strings.Contains(warn.String(), "are not in it yet") {
		t.Errorf("warning: %q", warn.String())
	}
	if left, _ := filepath.Glob(filepath.Join(jd, "*.json")); len(left) != 1 {
		t.Errorf("the journal holds %v", left)
	}
}
