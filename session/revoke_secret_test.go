package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/session"
)

// Web review 4, finding 3: a prior approval of a call holding a secret is
// revoked (chat's /permissions unapprove N, the web's revoke). The revoke
// names it by the seq of its permission.resolved: no event holds the
// secret in clear, and the live session and one resumed from the log
// agree (neither holds it). A session resumed before the revoke (the
// web's path) holds no such approval at all: the log keeps the arguments
// masked only, and an approval is not rebuilt from them.
func TestRevokeApprovalWithSecret(t *testing.T) {
	const secret = "ghp_Abcdefghijklmnopqrstuvwxyz0123456789"
	for _, resumeFirst := range []bool{false, true} {
		name := "live"
		if resumeFirst {
			name = "resumed"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cwd, _ := filepath.EvalSymlinks(t.TempDir())
			home, _ := filepath.EvalSymlinks(t.TempDir())
			store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			cmd := "GH_TOKEN=" + secret + " go env GOOS"
			m, err := script.Parse([]byte(`{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "` + cmd + `"}}]}
{"toolCalls": [{"id": "tc_2", "name": "shell", "args": {"command": "` + cmd + `"}}]}
{"text": "ran twice"}`))
			if err != nil {
				t.Fatal(err)
			}
			ans := &answers{list: []string{"allow_once", "deny"}}
			cfg := restartConfig(t, dir, store, m, ans, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
			rules, err := policy.Open(policy.Options{Cwd: cwd, ConfigHome: filepath.Join(home, ".config"), Home: home, NoBuiltin: true})
			if err != nil {
				t.Fatal(err)
			}
			info := session.Info{Cwd: cwd, Home: home, Mode: permission.ModeDefault, Rules: rules, Env: []string{"PATH=" + os.Getenv("PATH")}}
			s := session.New(cfg, info)
			ctx := context.Background()
			for _, err := range s.RunTurn(ctx, "twice") {
				if err != nil {
					t.Fatal(err)
				}
			}
			if len(s.Approvals()) != 1 {
				t.Fatalf("approvals %+v, want the one of tc_1", s.Approvals())
			}
			if resumeFirst {
				s.Close()
				if s, err = session.Resume(ctx, cfg, "sess-1", info); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				// The log holds the arguments masked only: the approval
				// is not rebuilt from them, so there is nothing to revoke.
				if n := len(s.Approvals()); n != 0 {
					t.Errorf("the resumed session holds %d approval(s) rebuilt from masked arguments: %s", n, s.Approvals()[0].Args)
				}
				return
			}
			a := s.Approvals()[0]
			if strings.Contains(string(a.Args), secret) || !strings.Contains(string(a.Args), "go env GOOS") {
				t.Errorf("the approval shows %s: want the call's arguments masked", a.Args)
			}
			if err := s.RevokeApproval(ctx, a.Seq); err != nil {
				t.Fatal(err)
			}
			if n := len(s.Approvals()); n != 0 {
				t.Errorf("live session holds %d approval(s) after the revoke", n)
			}
			for e, err := range store.Read(ctx, "sess-1", 1) {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(e.Payload), secret) {
					t.Errorf("seq %d %s holds the secret in clear: %s", e.Seq, e.Type, e.Payload)
				}
			}
			s.Close()
			r, err := session.Resume(ctx, cfg, "sess-1", info)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if n := len(r.Approvals()); n != 0 {
				t.Errorf("the resumed session holds %d prior approval(s) (%s) the live session had revoked", n, r.Approvals()[0].Args)
			}
		})
	}
}
