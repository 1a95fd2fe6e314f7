package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// TestPostgresStoreCommands: with --store naming a PostgreSQL database, a
// run on one "host" (data directory) records its session there; sessions,
// audit verify and log --follow on another host (another data directory,
// the store chosen by CUSTOM_AGENT_STORE, then by the user's config file)
// see it, and log --follow prints what a third process appends. No SQLite
// file is made in either data directory.
func TestPostgresStoreCommands(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.CreateDB(t)
	hostA, hostB, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	os.MkdirAll(filepath.Join(cwd, "dist"), 0o755)
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"text":"cleaning","toolCalls":[{"id":"t1","name":"shell","args":{"command":"rm -rf dist"}}]}
{"text":"done"}
`), 0o644)
	out, errOut, err := runWithInput(t, "allow_once\nconfirm\n", "--data-dir", hostA, "--store", url, "run", "--model", "script:"+script, "--cwd", cwd, "--json", "clean dist")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first event.Event
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	id := first.SessionID

	t.Setenv("CUSTOM_AGENT_STORE", url)
	out, errOut, err = runCLI(t, "--data-dir", hostB, "sessions", "--json")
	if err != nil {
		t.Fatalf("sessions: %v\n%s", err, errOut)
	}
	var sums []sessionSummary
	if err := json.Unmarshal([]byte(out), &sums); err != nil {
		t.Fatalf("sessions --json: %v\n%s", err, out)
	}
	if len(sums) != 1 || sums[0].ID != id || !sums[0].Verified || sums[0].State != StateCompleted || int(sums[0].Events) != len(lines) {
		t.Fatalf("sessions on the other host: %+v (want %s, %d events, completed, verified)", sums, id, len(lines))
	}
	if out, errOut, err := runCLI(t, "--data-dir", hostB, "audit", "verify", "last"); err != nil || !strings.Contains(out, "ok        "+id) {
		t.Fatalf("audit verify: %q %q %v", out, errOut, err)
	}

	// replay re-decides the session from the PostgreSQL log alone: the
	// same decisions (exit 0); stats folds it.
	if out, errOut, err := runCLI(t, "--data-dir", hostB, "replay", id); err != nil {
		t.Fatalf("replay on the other host: %v\n%s\n%s", err, out, errOut)
	}
	if out, errOut, err := runCLI(t, "--data-dir", hostB, "stats", "--session", id, "--json"); err != nil || !strings.Contains(out, `"sessions": 1`) {
		t.Fatalf("stats on the other host: %v\n%s\n%s", err, out, errOut)
	}

	// serve on another host lists the session from the PostgreSQL log.
	servePage(t, hostB, url, id)

	// The user's own config file chooses the store too.
	t.Setenv("CUSTOM_AGENT_STORE", "")
	userConf := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "custom-agent", "config.json")
	os.MkdirAll(filepath.Dir(userConf), 0o700)
	if err := os.WriteFile(userConf, []byte(`{"version":1,"store":"`+url+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var follow testenv.Buffer
	root := newRootCmd()
	root.SetArgs([]string{"--data-dir", hostB, "log", id, "--follow", "--from", "3"})
	root.SetOut(&follow)
	root.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	waitPrinted := func(substr string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !strings.Contains(follow.String(), substr) {
			if time.Now().After(deadline) {
				t.Fatalf("log --follow never printed %q; got:\n%s", substr, follow.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitPrinted("turn.completed")
	third, err := pgstore.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := event.NewDraft(id, "turn-2", time.Now(), event.UserMessagePayload{Content: "from a third host"})
	if _, err := third.Append(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	third.Close()
	waitPrinted("from a third host")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("log --follow: %v", err)
	}
	for _, dir := range []string{hostA, hostB} {
		if _, err := os.Stat(filepath.Join(dir, "events.db")); !os.IsNotExist(err) {
			t.Fatalf("%s has an events.db: the SQLite log was used (%v)", dir, err)
		}
	}
}

// TestProjectConfigCannotChooseTheStore: a repository's
// .custom-agent/config.json naming a store is ignored, trusted or not,
// with a warning; the run records to the user's log (SQLite in the data
// directory here), not to the database the project names.
func TestProjectConfigCannotChooseTheStore(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.CreateDB(t)
	data, cwd := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("CUSTOM_AGENT_STORE", "")
	os.MkdirAll(filepath.Join(cwd, ".custom-agent"), 0o755)
	os.WriteFile(filepath.Join(cwd, ".custom-agent", "config.json"), []byte(`{"version":1,"store":"`+url+`"}`), 0o644)
	if _, _, err := runCLI(t, "trust", cwd); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runCLI(t, "config", "show", "--cwd", cwd)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "store =") || !strings.Contains(errOut, "ignored store: a project cannot choose where the event log is written") {
		t.Fatalf("config show: out %q err %q", out, errOut)
	}
	script := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(script, []byte(`{"text":"hello"}`+"\n"), 0o644)
	if _, errOut, err := runWithInput(t, "", "--data-dir", data, "run", "--model", "script:"+script, "--cwd", cwd, "hi"); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, "events.db")); err != nil {
		t.Fatalf("the run did not record to the user's SQLite log: %v", err)
	}
	_, err = pgstore.Open(context.Background(), url, &pgstore.Options{ReadOnly: true})
	if !errors.Is(err, pgstore.ErrNoLog) {
		t.Fatalf("the project's database was written to: %v", err)
	}
}

// TestConfigShowsStoreWithoutPassword: config show says which store the
// user's file chose, and never its password.
func TestConfigShowsStoreWithoutPassword(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("CUSTOM_AGENT_STORE", "")
	os.MkdirAll(filepath.Join(home, "custom-agent"), 0o700)
	os.WriteFile(filepath.Join(home, "custom-agent", "config.json"), []byte(`{"version":1,"store":"postgres://agent:hunter2@db:5432/agents"}`), 0o600)
	out, _, err := runCLI(t, "config", "show", "--cwd", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `store = "postgres://agent:xxxxx@db:5432/agents"`) || strings.Contains(out, "hunter2") {
		t.Fatalf("config show:\n%s", out)
	}
}

// servePage runs `custom-agent serve` on the store and fetches its sessions
// page with the printed token, which must name session id.
func servePage(t *testing.T, dataDir, store, id string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out testenv.Buffer
	root := newRootCmd()
	root.SetArgs([]string{"--data-dir", dataDir, "--store", store, "serve", "--addr", "127.0.0.1:0"})
	root.SetOut(&out)
	root.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	// Its output is not a terminal: it names the file its login link is in.
	var page string
	for i := 0; page == "" && i < 1500; i++ {
		if l, _, ok := loginIn(t, out.String()); ok {
			page = l
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	u, err := neturl.Parse(page)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("serve gave no login link with a token: %q (%v)", out.String(), err)
	}
	// A script reaches it at 127.0.0.1 with the token in the file serve names.
	m := regexp.MustCompile(`Bearer \$\(cat (\S+)\) at (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("serve named no script token file: %q", out.String())
	}
	tok, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", m[2]+"/", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), id) {
		t.Fatalf("serve's sessions page: %s, names %s: %v", resp.Status, id, strings.Contains(string(body), id))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
