package session_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/session"
)

// Web review 5, finding 1: two calls of one response share a tool call id;
// the person allows the first and denies the second. A resumed session
// must not hold the denied call as a prior approval.
func TestDuplicateToolCallIDDeniedStaysDenied(t *testing.T) {
	dir, cwd, home, store := newLogDirs(t)
	m, err := script.Parse([]byte(`{"toolCalls": [{"id": "dup", "name": "shell", "args": {"command": "echo hi"}}, {"id": "dup", "name": "shell", "args": {"command": "echo pwned > pwned.txt"}}]}
{"text": "first turn"}
{"toolCalls": [{"id": "t2", "name": "shell", "args": {"command": "echo pwned > pwned.txt"}}]}
{"text": "second turn"}`))
	if err != nil {
		t.Fatal(err)
	}
	ans := &answers{list: []string{"allow_once", "deny", "deny"}}
	cfg := restartConfig(t, dir, store, m, ans, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	rules, err := policy.Open(policy.Options{Cwd: cwd, ConfigHome: filepath.Join(home, ".config"), Home: home, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	info := session.Info{Cwd: cwd, Home: home, Mode: permission.ModeDefault, Rules: rules, Env: []string{"PATH=" + os.Getenv("PATH")}}
	ctx := context.Background()
	s := session.New(cfg, info)
	for _, err := range s.RunTurn(ctx, "one") {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("live approvals: %s", approvalsArgs(s))
	s.Close()
	r, err := session.Resume(ctx, cfg, "sess-1", info)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Logf("resumed approvals: %s", approvalsArgs(r))
	for _, err := range r.RunTurn(ctx, "two") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Contains(ans.asked, "t2") {
		t.Errorf("the call the person denied ran unasked after resume (asked: %v)", ans.asked)
	}
	if _, err := os.Stat(filepath.Join(cwd, "pwned.txt")); err == nil {
		t.Errorf("pwned.txt was written")
	}
}

func approvalsArgs(s *session.Session) []string {
	var out []string
	for _, a := range s.Approvals() {
		out = append(out, string(a.Args))
	}
	return out
}
