package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/event"
)

// TestModeFlagEverywhere: every command that decides calls has the same
// --mode, and refuses an unknown mode with the same message.
func TestModeFlagEverywhere(t *testing.T) {
	const want = `unknown mode "yolo" (want default, plan, accept-edits or dont-ask)`
	cwd := t.TempDir()
	for _, args := range [][]string{
		{"run", "--model", "script:/nonexistent.jsonl", "--cwd", cwd, "--mode", "yolo", "hi"},
		{"acp", "--mode", "yolo"},
		{"check", "--cwd", cwd, "--tool", "read_file", "--args", `{"path":"a"}`, "--mode", "yolo"},
		{"policy", "explain", "--cwd", cwd, "--tool", "read_file", "--args", `{"path":"a"}`, "--mode", "yolo"},
		{"demo", "--mode", "yolo"},
	} {
		name := strings.Join(args[:1], " ")
		root := newRootCmd()
		c, _, err := root.Find(args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fl := c.Flags().Lookup("mode")
		if fl == nil || fl.Usage != modeUsage || fl.DefValue != "default" {
			t.Errorf("%s --mode: %+v, want the shared usage", c.CommandPath(), fl)
			continue
		}
		_, errOut, err := runWithInput(t, "", append([]string{"--data-dir", t.TempDir()}, args...)...)
		if err == nil || !strings.Contains(err.Error()+errOut, want) {
			t.Errorf("%s --mode yolo: %v\n%s\nwant %s", c.CommandPath(), err, errOut, want)
		}
	}
	for _, m := range []string{"default", "plan", "accept-edits", "dont-ask"} {
		if !strings.Contains(modeUsage, m) {
			t.Errorf("the --mode help does not name %s", m)
		}
	}
}

// TestRunModes: accept-edits writes inside the working directory without
// a question; dont-ask denies what would be asked and the turn goes on; a
// resumed session keeps its mode unless --mode names another, which is
// recorded.
func TestRunModes(t *testing.T) {
	data, cwd := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"toolCalls":[{"id":"t1","name":"write_file","args":{"path":"a.txt","content":"A\n"}}]}
{"text":"wrote"}
{"toolCalls":[{"id":"t2","name":"write_file","args":{"path":"b.txt","content":"B\n"}}]}
{"text":"denied"}
{"toolCalls":[{"id":"t3","name":"write_file","args":{"path":"c.txt","content":"C\n"}}]}
{"text":"denied again"}
`), 0o644)
	run := func(input string, args ...string) []event.Event {
		t.Helper()
		out, errOut, err := runWithInput(t, input, append([]string{"--data-dir", data, "run", "--model", "script:" + script, "--cwd", cwd, "--json"}, args...)...)
		if err != nil {
			t.Fatalf("run %v: %v\n%s", args, err, errOut)
		}
		var evs []event.Event
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e event.Event
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("stdout line is not an event: %q", line)
			}
			evs = append(evs, e)
		}
		return evs
	}
	find := func(evs []event.Event, typ event.Type) []string {
		var out []string
		for _, e := range evs {
			if e.Type == typ {
				out = append(out, string(e.Payload))
			}
		}
		return out
	}

	evs := run("", "--mode", "accept-edits", "write a")
	if got := find(evs, event.PermissionRequested); len(got) != 0 {
		t.Errorf("accept-edits asked: %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "a.txt")); err != nil || string(b) != "A\n" {
		t.Errorf("a.txt = %q, %v", b, err)
	}
	res := find(evs, event.PermissionResolved)
	if len(res) != 1 || !strings.Contains(res[0], `"sourcedFrom":"mode"`) || !strings.Contains(res[0], "accept-edits") {
		t.Errorf("permission.resolved = %v", res)
	}

	// Resumed with --mode dont-ask: the change is recorded, the write is
	// denied at once.
	evs = run("", "--session", "last", "--mode", "dont-ask", "write b")
	if got := find(evs, event.PermissionRequested); len(got) != 0 {
		t.Errorf("dont-ask asked: %v", got)
	}
	res = find(evs, event.PermissionResolved)
	if len(res) != 1 || !strings.Contains(res[0], `"decision":"deny"`) || !strings.Contains(res[0], "dont-ask mode turned the question into a denial") {
		t.Errorf("permission.resolved = %v", res)
	}
	if _, err := os.Stat(filepath.Join(cwd, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt was written in dont-ask mode: %v", err)
	}
	if got := find(evs, event.TurnCompleted); len(got) != 1 || !strings.Contains(got[0], `"final"`) {
		t.Errorf("the turn did not go on to its end: %v", got)
	}

	// Resumed without --mode: still dont-ask, nothing recorded.
	evs = run("", "--session", "last", "write c")
	res = find(evs, event.PermissionResolved)
	if len(res) != 1 || !strings.Contains(res[0], "dont-ask") {
		t.Errorf("resumed without --mode: permission.resolved = %v", res)
	}
	if got := find(evs, event.TurnStarted); len(got) != 1 || !strings.Contains(got[0], `"mode":"dont-ask"`) {
		t.Errorf("turn.started = %v", got)
	}

	// The log holds exactly one change, outside any turn, by the user.
	out, errOut, err := runWithInput(t, "", "--data-dir", data, "log", "--json", "last")
	if err != nil {
		t.Fatalf("log show: %v\n%s", err, errOut)
	}
	if n := strings.Count(out, `"session.mode_changed"`); n != 1 || !strings.Contains(out, `{"by":"user","from":"accept-edits","to":"dont-ask"}`) {
		t.Errorf("log has %d session.mode_changed:\n%s", n, out)
	}
}
