package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
)

func TestChooseApprovalTimeout(t *testing.T) {
	tests := []struct {
		name     string
		changed  bool
		flag     time.Duration
		terminal bool
		want     time.Duration
		err      bool
	}{
		{"a person at a terminal waits as long as they take", false, 0, true, executor.NoApprovalTimeout, false},
		{"answers from stdin keep the default", false, 0, false, approval.DefaultTimeout, false},
		{"the flag wins at a terminal", true, 2 * time.Minute, true, 2 * time.Minute, false},
		{"the flag wins on stdin", true, 5 * time.Second, false, 5 * time.Second, false},
		{"zero is refused", true, 0, true, 0, true},
		{"negative is refused", true, -time.Second, false, 0, true},
	}
	for _, tc := range tests {
		got, err := chooseApprovalTimeout(tc.changed, tc.flag, tc.terminal)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v (error %v)", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// TestApprovalTimeoutAnnounced: a run whose answers come from stdin keeps
// the 30 s default, and --approval-timeout sets it; permission.requested
// says which.
func TestApprovalTimeoutAnnounced(t *testing.T) {
	withoutBuiltinRules(t)
	script := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(script, []byte(`{"text":"","toolCalls":[{"id":"t1","name":"shell","args":{"command":"true"}}]}
{"text":"done"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		want  int64
	}{{nil, 30000}, {[]string{"--approval-timeout", "5s"}, 5000}} {
		args := append([]string{"--data-dir", t.TempDir(), "run", "--model", "script:" + script, "--cwd", t.TempDir(), "--json"}, tc.flags...)
		out, errOut, err := runWithInput(t, "deny\n", append(args, "go")...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.flags, err, errOut)
		}
		var got []int64
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e event.Event
			if json.Unmarshal([]byte(line), &e) == nil && e.Type == event.PermissionRequested {
				var p event.PermissionRequestedPayload
				_ = json.Unmarshal(e.Payload, &p)
				got = append(got, p.TimeoutMs)
			}
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%v: permission.requested timeoutMs %v, want [%d]", tc.flags, got, tc.want)
		}
	}
	if _, _, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "script:"+script, "--approval-timeout", "0s", "go"); err == nil || !strings.Contains(err.Error(), "--approval-timeout must be positive") {
		t.Errorf("--approval-timeout 0s: %v", err)
	}
}
