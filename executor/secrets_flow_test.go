package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tools"
)

// plantedSecret is one shape of secret: the text planted in an argument,
// and the parts of it that must never be seen again (for a PEM key, its
// body; the header alone is no secret).
type plantedSecret struct {
	name    string
	planted string
	needles []string
}

// plantedSecrets returns one secret of each shape, different on every
// seed, so nothing but the planted argument can contain them.
func plantedSecrets(seed uint64) []plantedSecret {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	const b64 = alnum + "+/"
	rnd := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	openai := "sk-proj-" + rnd(alnum, 40)
	github := "ghp_" + rnd(alnum, 36)
	aws := "AKIA" + rnd(upper, 16)
	password := "Hx7" + rnd(alnum, 17)
	body1, body2 := "MIIEpAIBAAKCAQEA"+rnd(b64, 48), rnd(b64, 64)
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + body1 + "\n" + body2 + "\n-----END RSA PRIVATE KEY-----"
	return []plantedSecret{
		{"openai key", openai, []string{openai[len("sk-proj-"):]}},
		{"github token", github, []string{github[len("ghp_"):]}},
		{"aws key id", aws, []string{aws}},
		{"password assignment", "password=" + password, []string{password}},
		{"pem private key", pem, []string{body1[len("MIIEpAIBAAKCAQEA"):], body2}},
	}
}

// leakWindow is the shortest piece of a needle the scan looks for: a leak
// of part of a secret is a leak.
const leakWindow = 12

// findLeak returns the first piece of a needle found in b, in any case
// (a rule id is a lower-cased slug of what it names).
func findLeak(b []byte, secrets []plantedSecret) (string, bool) {
	b = bytes.ToLower(b)
	for _, s := range secrets {
		for _, n := range s.needles {
			n = strings.ToLower(n)
			for i := 0; i+leakWindow <= len(n); i++ {
				if bytes.Contains(b, []byte(n[i:i+leakWindow])) {
					return s.name + ": " + n[i:i+leakWindow], true
				}
			}
		}
	}
	return "", false
}

// baseArgs are valid arguments for each built-in tool; a secret is planted
// in one argument at a time on top of them. url is the echo server.
func baseArgs(tool, url string) map[string]any {
	switch tool {
	case "read_file":
		return map[string]any{"path": "README.md"}
	case "list_files":
		return map[string]any{"path": "."}
	case "search_text":
		return map[string]any{"pattern": "hello", "path": "."}
	case "get_diagnostics", "run_tests":
		return map[string]any{"path": "."}
	case "write_file":
		return map[string]any{"path": "notes.txt", "content": "hello\n"}
	case "apply_patch":
		return map[string]any{"patch": "--- /dev/null\n+++ b/patched.txt\n@@ -0,0 +1 @@\n+hello\n"}
	case "shell":
		return map[string]any{"command": "printf hello"}
	case "http_get":
		return map[string]any{"url": url + "/echo"}
	case "http_post":
		return map[string]any{"url": url + "/echo", "body": "hello"}
	}
	return map[string]any{}
}

// plantedCalls returns, for every argument of the tool's schema that takes
// a string or an object of strings, one call per secret with that secret
// in that argument.
func plantedCalls(t *testing.T, info permission.ToolInfo, url string, secrets []plantedSecret) []map[string]any {
	t.Helper()
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(info.Schema), &schema); err != nil {
		t.Fatalf("%s: schema: %v", info.Name, err)
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	var calls []map[string]any
	for _, name := range names {
		typ := schema.Properties[name].Type
		if typ != "string" && typ != "object" {
			continue
		}
		for _, s := range secrets {
			args := baseArgs(info.Name, url)
			switch typ {
			case "string":
				base, _ := args[name].(string)
				if base == "" {
					base = "x"
				}
				args[name] = base + " " + s.planted
			case "object":
				args[name] = map[string]any{"X-Note": "note " + s.planted}
			}
			calls = append(calls, args)
		}
	}
	if len(calls) == 0 {
		t.Fatalf("%s: no argument to plant a secret in", info.Name)
	}
	return calls
}

// answeringTerminal is the terminal of the line-protocol UI: it keeps all
// the UI printed and answers each question with the widest option offered
// (allow_project, else allow_session, else allow_once, confirmed when the
// call is destructive), so that any rule offered is made and written.
type answeringTerminal struct {
	mu      sync.Mutex
	printed bytes.Buffer
	pending string
	answers chan string
}

func (w *answeringTerminal) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.printed.Write(p)
	w.pending += string(p)
	for {
		line, rest, ok := strings.Cut(w.pending, "\n")
		if !ok {
			break
		}
		w.pending = rest
		switch {
		case strings.Contains(line, "answer with one line: "):
			_, opts, _ := strings.Cut(line, "answer with one line: ")
			opts, _, _ = strings.Cut(opts, ";")
			opts, _, _ = strings.Cut(opts, " (")
			offered := strings.Split(opts, " | ")
			ans := executor.OptionAllowOnce
			for _, o := range []string{executor.OptionAllowProject, executor.OptionAllowSession} {
				if slices.Contains(offered, o) {
					ans = o
					break
				}
			}
			w.answers <- ans
		case strings.Contains(line, "type "+cli.ConfirmWord+" to allow it"):
			w.answers <- cli.ConfirmWord
		}
	}
	return len(p), nil
}

func (w *answeringTerminal) text() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.printed.Bytes())
}

// TestPlantedSecretsReachNoEventUIOrPolicyFile drives real turns (scripted
// model, real session, executor, tools, SQLite store, policy store, broker
// and terminal UI): every built-in tool is called with each shape of
// secret in each of its arguments, then with ordinary arguments (so that
// rules are offered and written). No piece of a secret may appear in any
// stored event, in the store's files, in any event's summary, in what the
// terminal printed, or in any policy or trust file; every event type must
// have been recorded, so none escapes the scan.
func TestPlantedSecretsReachNoEventUIOrPolicyFile(t *testing.T) {
	secrets := plantedSecrets(uint64(time.Now().UnixNano()))
	t.Logf("secrets of this run: %q", secrets)

	data := t.TempDir()
	cwd, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := filepath.EvalSymlinks(t.TempDir())
	configHome := filepath.Join(home, ".config")
	if err := os.WriteFile(filepath.Join(cwd, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The HTTP tools talk to a server that echoes all it was sent, so a
	// secret comes back in the tool's output too.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s\n%v\n%s\n", r.Method, r.URL, r.Header, body)
	}))
	defer echo.Close()

	router := tools.NewRouter()
	var lines []string
	id := 0
	addLine := func(text string, calls []map[string]any, tool string) {
		type tc struct {
			ID   string         `json:"id"`
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		}
		resp := struct {
			Text      string `json:"text"`
			ToolCalls []tc   `json:"toolCalls,omitempty"`
		}{Text: text}
		for _, a := range calls {
			id++
			resp.ToolCalls = append(resp.ToolCalls, tc{ID: fmt.Sprintf("tc_%d", id), Name: tool, Args: a})
		}
		b, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	// Turn 1: every tool, every argument, every secret; the issue's own
	// case; an unknown tool and arguments that fail the schema, each
	// carrying secrets, so tool.failed is reached at resolve and validate.
	for _, info := range router.Infos() {
		addLine("calling "+info.Name, plantedCalls(t, info, echo.URL, secrets), info.Name)
	}
	for _, s := range secrets {
		addLine("the issue's case", []map[string]any{{"command": "echo OPENAI_API_KEY=" + s.planted}}, "shell")
		// A secret split by quotes: no pattern sees it in the command as
		// written, the shell (and a rule made of its words) would.
		cut := len(s.planted) / 3
		addLine("a quoted split", []map[string]any{{"command": "echo " + s.planted[:cut] + `"` + s.planted[cut:] + `"`}}, "shell")
		addLine("no such tool", []map[string]any{{"token": s.planted}}, "no_such_tool")
		addLine("bad args", []map[string]any{{"path": []any{s.planted}, s.planted: 1}}, "read_file")
	}
	addLine("done", nil, "")
	steps := len(lines)
	// Turn 2: ordinary calls, whose rules are offered and made.
	for _, info := range router.Infos() {
		addLine("ordinary "+info.Name, []map[string]any{baseArgs(info.Name, echo.URL)}, info.Name)
	}
	addLine("done", nil, "")
	m, err := script.Parse([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}

	store, err := sqlitestore.Open(context.Background(), filepath.Join(data, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	arts, err := artifact.Open(filepath.Join(t.TempDir(), "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := policy.Open(policy.Options{Cwd: cwd, ConfigHome: configHome, Home: home})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	broker := approval.New(nil)
	term := &answeringTerminal{answers: make(chan string, 16)}
	in, typed := io.Pipe()
	defer typed.Close()
	go func() {
		for {
			select {
			case a := <-term.answers:
				if _, err := io.WriteString(typed, a+"\n"); err != nil {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	uiDone := make(chan struct{})
	go func() {
		defer close(uiDone)
		_ = cli.New(broker, in, term, nil).Run(ctx)
	}()

	s := session.New(session.Config{
		Log: store, Model: m, Router: router, Artifacts: arts, Approver: broker, MaxSteps: steps + 1,
		NewID: func() string { return "sess-secrets" },
	}, session.Info{
		Cwd: cwd, Home: home, ConfigHome: configHome, Mode: permission.ModeDefault, Rules: rules,
		Env: []string{"PATH=" + os.Getenv("PATH")},
	})
	for _, prompt := range []string{"try every tool", "now the ordinary calls"} {
		for e, err := range s.RunTurn(ctx, prompt) {
			if err != nil {
				t.Fatalf("turn failed: %v", err)
			}
			if e.Type == event.TurnCompleted && !strings.Contains(string(e.Payload), `"final"`) {
				t.Fatalf("turn did not end normally: %s", e.Payload)
			}
		}
	}
	cancel()
	<-uiDone

	// Every stored event, as the log gives it back.
	seen := map[event.Type]int{}
	var asked, askedWithSecret, offeredRules int
	argsBySecret := map[string]bool{} // tool call ids whose args held a secret
	for e, err := range store.Read(context.Background(), "sess-secrets", 1) {
		if err != nil {
			t.Fatal(err)
		}
		seen[e.Type]++
		raw, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		for what, b := range map[string][]byte{"event": raw, "payload": e.Payload, "summary": []byte(e.Summary())} {
			if leak, ok := findLeak(b, secrets); ok {
				t.Errorf("seq %d %s: %s holds %s:\n%s", e.Seq, e.Type, what, leak, b)
			}
		}
		p, err := e.Decode()
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *event.ModelToolCallRequestedPayload:
			argsBySecret[p.ToolCallID] = bytes.Contains(p.Args, []byte("[REDACTED]"))
		case *event.PermissionRequestedPayload:
			asked++
			if !argsBySecret[p.ToolCallID] {
				if p.SessionRule != nil || p.ProjectRule != nil {
					offeredRules++
				}
				continue
			}
			askedWithSecret++
			if p.SessionRule != nil || p.ProjectRule != nil || slices.Contains(p.Options, executor.OptionAllowSession) || slices.Contains(p.Options, executor.OptionAllowProject) {
				t.Errorf("seq %d: a rule is offered for a call whose arguments hold a secret: %s", e.Seq, e.Payload)
			}
			if p.RiskAtDecision < risk.Destructive && p.NoRuleReason != executor.NoRuleSecret {
				t.Errorf("seq %d: noRuleReason %q, want %q", e.Seq, p.NoRuleReason, executor.NoRuleSecret)
			}
		}
	}
	t.Logf("events by type: %v; asked %d times, %d with a secret, %d offering a rule", seen, asked, askedWithSecret, offeredRules)
	for _, typ := range event.Types {
		if seen[typ] == 0 {
			t.Errorf("no %s event was recorded: the scan does not cover that type", typ)
		}
	}
	if askedWithSecret == 0 || offeredRules == 0 {
		t.Errorf("asked %d times, %d with a secret, %d offering a rule: the turn does not reach both kinds of question", asked, askedWithSecret, offeredRules)
	}

	// The store's own files, WAL included.
	scanFiles(t, data, secrets)
	// What the terminal printed.
	printed := term.text()
	if leak, ok := findLeak(printed, secrets); ok {
		t.Errorf("the terminal UI printed %s", leak)
	}
	if !bytes.Contains(printed, []byte(executor.NoRuleSecret)) {
		t.Errorf("the terminal never said why no rule was offered:\n%s", printed)
	}
	// Policy and trust files: the project's and the user's.
	if _, err := os.Stat(filepath.Join(cwd, ".custom-agent", "policy.json")); err != nil {
		t.Errorf("no project rule was written, so the policy file was not tested: %v", err)
	}
	scanFiles(t, filepath.Join(cwd, ".custom-agent"), secrets)
	scanFiles(t, configHome, secrets)
}

func scanFiles(t *testing.T, dir string, secrets []plantedSecret) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if leak, ok := findLeak(b, secrets); ok {
			t.Errorf("%s holds %s", path, leak)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
