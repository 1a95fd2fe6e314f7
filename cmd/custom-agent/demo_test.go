package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// TestDemoLeavesNoGlobalState: even when the person answers "always allow in
// this project", the demo writes nothing to their configuration (no rule, no
// trusted project) and removes its directory; only the session is recorded.
// --yes answers are recorded with actor auto.
func TestDemoLeavesNoGlobalState(t *testing.T) {
	testenv.NeedProgram(t, "go")
	for _, tc := range []struct {
		name, input string
		args        []string
		actor       event.Actor
		option      string
	}{
		{"allow_project answered on stdin", "allow_project\n", nil, event.ActorUser, "allow_project"},
		{"--yes", "", []string{"--yes"}, event.ActorAuto, "allow_once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, cfg, tmp, data := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
			if c, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
				t.Setenv("GOCACHE", strings.TrimSpace(string(c))) // the demo's go test keeps its cache
			}
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", cfg)
			t.Setenv("TMPDIR", tmp)
			out, errOut, err := runWithInput(t, tc.input, append([]string{"--data-dir", data, "demo"}, tc.args...)...)
			if err != nil {
				t.Fatalf("demo: %v\n%s\n%s", err, out, errOut)
			}
			if !strings.Contains(out, "--- PASS: TestAdd") {
				t.Fatalf("the tests did not run:\n%s\n%s", out, errOut)
			}
			// What go itself keeps (its caches, telemetry) is not ours to judge.
			for _, dir := range []string{filepath.Join(home, ".config", "custom-agent"), filepath.Join(cfg, "custom-agent"), filepath.Join(home, ".local")} {
				if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("demo wrote %s (%v)", dir, err)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "custom-agent-demo-*")); len(left) > 0 {
				t.Errorf("demo left its directory behind: %v", left)
			}
			// The recorded answer says who gave it.
			m := regexp.MustCompile(`audit trail of session (\S+):`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no session id in:\n%s", out)
			}
			events, _, err := runCLI(t, "--data-dir", data, "log", m[1], "--json")
			if err != nil {
				t.Fatal(err)
			}
			var resolved []event.PermissionResolvedPayload
			for _, line := range strings.Split(strings.TrimSpace(events), "\n") {
				var e event.Event
				if json.Unmarshal([]byte(line), &e) == nil && e.Type == event.PermissionResolved {
					var p event.PermissionResolvedPayload
					_ = json.Unmarshal(e.Payload, &p)
					resolved = append(resolved, p)
				}
			}
			if len(resolved) != 1 || resolved[0].Actor != tc.actor || resolved[0].Option != tc.option || resolved[0].Decision != "allow" {
				t.Fatalf("permission.resolved %+v, want one allow by %s (%s)", resolved, tc.actor, tc.option)
			}
			// The log alone re-derives the decision (custom-agent replay).
			out, _, err = runCLI(t, "--data-dir", data, "replay", m[1])
			if err != nil || !strings.Contains(out, "1 call decided again, 0 differ, 0 not replayable") {
				t.Fatalf("replay: %v\n%s", err, out)
			}
		})
	}
}
