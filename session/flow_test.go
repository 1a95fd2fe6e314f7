package session_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tool"
	"github.com/custom-agent/custom-agent/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// recordingModel wraps a model and notes what each call was shown.
type recordingModel struct {
	model.Gateway
	mu    sync.Mutex
	notes []string
}

func (m *recordingModel) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	m.mu.Lock()
	var b strings.Builder
	fmt.Fprintf(&b, "model call with %d messages; last:", len(req.Messages))
	if n := len(req.Messages); n > 0 {
		last := req.Messages[n-1]
		for i := n - 1; i >= 0 && req.Messages[i].Role == model.RoleTool; i-- {
			last = req.Messages[i]
		}
		fmt.Fprintf(&b, " %s", last.Role)
		for _, msg := range req.Messages[max(0, n-4):] {
			if msg.Role == model.RoleTool {
				fmt.Fprintf(&b, "\n      tool %s error=%v: %s", msg.ToolCallID, msg.IsError, firstLine(msg.Content))
			}
		}
	}
	m.notes = append(m.notes, b.String())
	m.mu.Unlock()
	return m.Gateway.Stream(ctx, req)
}

func firstLine(s string) string {
	// A tool's output is between delimiters (contextbuild.Wrap): show
	// its first line, not the delimiter's.
	if strings.HasPrefix(s, "<tool-output ") {
		_, s, _ = strings.Cut(s, "\n")
	}
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

// answers is an Approver that gives scripted answers in order; "cancel"
// cancels the turn while it waits.
type answers struct {
	mu     sync.Mutex
	list   []string
	asked  []string
	cancel context.CancelFunc
}

func (a *answers) Ask(ctx context.Context, q executor.Question) (executor.Answer, error) {
	a.mu.Lock()
	a.asked = append(a.asked, q.ToolCallID)
	if len(a.list) == 0 {
		a.mu.Unlock()
		return executor.Answer{}, fmt.Errorf("test: no scripted answer for %s", q.ToolCallID)
	}
	ans := a.list[0]
	a.list = a.list[1:]
	a.mu.Unlock()
	if ans == "cancel" {
		a.cancel()
		<-ctx.Done()
		return executor.Answer{}, ctx.Err()
	}
	return executor.Answer{Allow: ans != executor.OptionDeny, Option: ans, Actor: event.ActorUser}, nil
}

type flow struct {
	name    string
	script  string
	answers []string
	prompts []string
	setup   func(t *testing.T, cwd, home string)
	steps   int
	// resumeIn, when set, names the directory of each prompt after the
	// first ("A" is the first's, "B" another repository): each runs in a
	// new process's session.Resume there, with its own policy store.
	resumeIn []string
	// timeoutBroker answers through a real approval broker with no UI
	// attached, inside a testing/synctest bubble: every ask times out, and
	// the 30 s pass instantly.
	timeoutBroker bool
	// builtin turns the built-in read-only rules on. The other flows are
	// about questions and answers, and use printf and echo as harmless
	// stand-ins, which the built-in rules would allow without asking.
	builtin bool
	// mode is the session's mode (default when empty).
	mode permission.Mode
	// router, when set, makes the tools offered (default
	// tools.NewRouter()), e.g. with MCP tools besides.
	router func() *tool.Router
	// secretArgs names the calls whose arguments hold a secret: the log
	// masks it, so replay cannot decide them again.
	secretArgs []string
	// modes, when set, names the mode each prompt after the first runs
	// in: the person changes it between turns (Session.ChangeMode), and
	// the events that records are shown.
	modes []permission.Mode
}

var flows = []flow{
	{name: "section5", prompts: []string{"把测试跑一遍"}, answers: []string{"allow_once"},
		script: `{"text": "我来跑 npm test。", "toolCalls": [{"id": "tc_xyz", "name": "shell", "args": {"command": "printf 'PASS  packages/storage/src/log.test.ts\\n27 passed\\n'"}}]}
{"text": "测试全过，共 27 条。"}`},
	{name: "section6-destructive-asked-twice", prompts: []string{"把 dist 目录清掉", "再清理一遍"}, answers: []string{"allow_once", "allow_once"},
		setup: func(t *testing.T, cwd, _ string) { os.MkdirAll(filepath.Join(cwd, "dist"), 0o755) },
		script: `{"text": "好。", "toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "rm -rf dist"}}]}
{"text": "清掉了。"}
{"text": "再来。", "toolCalls": [{"id": "tc_2", "name": "shell", "args": {"command": "rm -rf dist"}}]}
{"text": "又清掉了。"}`},
	// Allow once also lets the byte-identical call run again in this
	// session, with no question (prior approval, spec §3 step 5); the
	// question said so when the person chose (issue 10 item 5).
	{name: "allow-once-reused-for-identical-call", prompts: []string{"run the tests", "again"}, answers: []string{"allow_once"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "printf ok"}}]}
{"text": "ran."}
{"toolCalls": [{"id": "tc_2", "name": "shell", "args": {"command": "printf ok"}}]}
{"text": "ran again without asking."}`},
	// A read-only command inside the project is allowed by a built-in rule
	// without a question (issue 16); the decision names the rule.
	{name: "read-only-command-by-builtin-rule", prompts: []string{"what is here"}, builtin: true,
		setup: func(t *testing.T, cwd, _ string) { os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("a\n"), 0o644) },
		script: `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "ls && wc -l a.txt"}}]}
{"text": "one file."}`},
	{name: "user-deny", prompts: []string{"删掉 dist"}, answers: []string{"deny"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "rm -rf dist"}}]}
{"text": "你拒绝了，我不删。"}`},
	{name: "read-allowed-without-asking", prompts: []string{"读 README"},
		setup: func(t *testing.T, cwd, _ string) {
			os.WriteFile(filepath.Join(cwd, "README.md"), []byte("# demo\n"), 0o644)
		},
		script: `{"toolCalls": [{"id": "tc_1", "name": "read_file", "args": {"path": "README.md"}}]}
{"text": "读完了。"}`},
	{name: "credential-denied-without-asking", prompts: []string{"我的 key 是什么"},
		setup: func(t *testing.T, _, home string) {
			os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
			os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600)
		},
		script: `{"toolCalls": [{"id": "tc_1", "name": "read_file", "args": {"path": "~/.ssh/id_rsa"}}]}
{"text": "不能读。"}`},
	{name: "unknown-tool", prompts: []string{"跑一下"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "run_shell", "args": {"command": "ls"}}]}
{"text": "没有这个工具。"}`},
	{name: "args-fail-schema", prompts: []string{"读文件"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "read_file", "args": {"file": "README.md"}}]}
{"text": "参数错了。"}`},
	{name: "two-calls-in-one-response", prompts: []string{"看看项目"}, answers: []string{"allow_once"},
		setup: func(t *testing.T, cwd, _ string) {
			os.WriteFile(filepath.Join(cwd, "go.mod"), []byte("module demo\n"), 0o644)
		},
		script: `{"text": "先读再跑。", "toolCalls": [{"id": "tc_1", "name": "read_file", "args": {"path": "go.mod"}}, {"id": "tc_2", "name": "shell", "args": {"command": "echo built"}}]}
{"text": "好了。"}`},
	{name: "cancel-while-waiting", prompts: []string{"跑测试"}, answers: []string{"cancel"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "echo never"}}]}
{"text": "unreachable"}`},
	{name: "allow-for-session", prompts: []string{"跑两次"}, answers: []string{"allow_session", "allow_session"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "go doc -short fmt.Println"}}]}
{"toolCalls": [{"id": "tc_2", "name": "shell", "args": {"command": "go doc -short fmt.Printf"}}]}
{"toolCalls": [{"id": "tc_3", "name": "shell", "args": {"command": "go version; echo compound"}}]}
{"text": "第二次没有再问；复合命令没有会话规则可用，所以只能允许一次或拒绝。"}`},
	{name: "allow-in-project", prompts: []string{"跑测试"}, answers: []string{"allow_project"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "go doc -short fmt.Printf"}}]}
{"text": "以后这个项目里不再问。"}`},
	{name: "approval-timeout", prompts: []string{"跑测试"}, timeoutBroker: true,
		script: `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "echo never"}}]}
{"text": "没人回答，我没有运行。"}`},
	{name: "max-steps", prompts: []string{"一直读"}, steps: 2,
		setup: func(t *testing.T, cwd, _ string) { os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("a\n"), 0o644) },
		script: `{"toolCalls": [{"id": "tc_1", "name": "read_file", "args": {"path": "a.txt"}}]}
{"toolCalls": [{"id": "tc_2", "name": "read_file", "args": {"path": "a.txt"}}]}
{"toolCalls": [{"id": "tc_3", "name": "read_file", "args": {"path": "a.txt"}}]}`},
	// DESIGN.md §6, issue 10 item 3: a session rule and a prior approval
	// made in A do not hold when the session is resumed in B (both calls
	// are asked again, and turn.started says where the session moved
	// from); back in A they hold again.
	{name: "resumed-elsewhere", prompts: []string{"在 A 里写", "在 B 里写", "回到 A"}, resumeIn: []string{"B", "A"},
		answers: []string{"allow_session", "allow_once", "deny", "deny"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "go doc -short fmt.Println"}}]}
{"toolCalls": [{"id": "tc_2", "name": "write_file", "args": {"path": "notes.txt", "content": "A\n"}}]}
{"text": "A 里写好了。"}
{"toolCalls": [{"id": "tc_3", "name": "shell", "args": {"command": "go doc -short fmt.Printf"}}]}
{"toolCalls": [{"id": "tc_4", "name": "write_file", "args": {"path": "notes.txt", "content": "A\n"}}]}
{"text": "B 里你都拒绝了。"}
{"toolCalls": [{"id": "tc_5", "name": "shell", "args": {"command": "go doc -short fmt.Printf"}}]}
{"toolCalls": [{"id": "tc_6", "name": "write_file", "args": {"path": "notes.txt", "content": "A\n"}}]}
{"text": "回到 A，没有再问。"}`},
	// Issue 10 item 6: the end of a long output reaches the model, and
	// read_output (a read: not asked) reads what lay between.
	{name: "long-output-read-output", prompts: []string{"跑测试"}, answers: []string{"allow_once"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "for i in $(seq 1 1000); do echo \"ok   case $i\"; done; echo 'FAIL: TestLast want 2 got 3'"}}]}
{"toolCalls": [{"id": "tc_2", "name": "read_output", "args": {"toolCallId": "tc_1", "offset": 4096, "limit": 60}}]}
{"toolCalls": [{"id": "tc_3", "name": "read_output", "args": {"toolCallId": "tc_9"}}]}
{"text": "最后一个用例失败了。"}`},
	// Issue 13 §2: in accept-edits an edit inside the working directory
	// runs without a question (sourcedFrom mode); one outside it, and a
	// git hook (code that runs later), are asked as in default.
	{name: "mode-accept-edits", prompts: []string{"edit the notes"}, mode: permission.ModeAcceptEdits, answers: []string{"deny", "deny"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "write_file", "args": {"path": "notes.txt", "content": "A\n"}}]}
{"toolCalls": [{"id": "tc_2", "name": "write_file", "args": {"path": "~/outside.txt", "content": "B\n"}}]}
{"toolCalls": [{"id": "tc_3", "name": "write_file", "args": {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}}]}
{"text": "notes written; the other two were yours to refuse."}`},
	// dont-ask: what default would ask is denied at once (no
	// permission.requested, nobody asked), a destructive call too, a read
	// still runs, and the turn goes on to its end.
	{name: "mode-dont-ask", prompts: []string{"clean up and write"}, mode: permission.ModeDontAsk,
		setup: func(t *testing.T, cwd, _ string) {
			os.MkdirAll(filepath.Join(cwd, "dist"), 0o755)
			os.WriteFile(filepath.Join(cwd, "README.md"), []byte("# demo\n"), 0o644)
		},
		script: `{"toolCalls": [{"id": "tc_1", "name": "write_file", "args": {"path": "notes.txt", "content": "A\n"}}, {"id": "tc_2", "name": "shell", "args": {"command": "rm -rf dist"}}]}
{"toolCalls": [{"id": "tc_3", "name": "read_file", "args": {"path": "README.md"}}]}
{"text": "both were denied without a question; I read the README."}`},
	// plan: a read runs, a write is denied by the mode without a question;
	// the person switches to default between turns (session.mode_changed,
	// outside any turn), and the same write is asked.
	{name: "mode-plan-then-default", prompts: []string{"plan the change", "now make it"}, mode: permission.ModePlan,
		modes: []permission.Mode{permission.ModeDefault}, answers: []string{"allow_once"},
		setup: func(t *testing.T, cwd, _ string) {
			os.WriteFile(filepath.Join(cwd, "README.md"), []byte("# demo\n"), 0o644)
		},
		script: `{"toolCalls": [{"id": "tc_1", "name": "read_file", "args": {"path": "README.md"}}, {"id": "tc_2", "name": "write_file", "args": {"path": "notes.txt", "content": "A\n"}}]}
{"text": "in plan mode I may only read."}
{"toolCalls": [{"id": "tc_3", "name": "write_file", "args": {"path": "notes.txt", "content": "A\n"}}]}
{"text": "written."}`},
	{name: "model-runs-out", prompts: []string{"说话"},
		script: `{"toolCalls": [{"id": "tc_1", "name": "list_files", "args": {}}]}`},
}

func TestGoldenFlows(t *testing.T) {
	for _, f := range flows {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			var got string
			if f.timeoutBroker {
				synctest.Test(t, func(t *testing.T) { got = runFlow(t, f) })
			} else {
				got = runFlow(t, f)
			}
			path := filepath.Join("testdata", f.name+".golden")
			if *update {
				os.WriteFile(path, []byte(got), 0o644)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if string(want) != got {
				t.Errorf("event chain differs from %s (go test -update rewrites it):\n%s", path, got)
			}
		})
	}
}

// runFlow runs the prompts and renders the normalised event chain.
func runFlow(t *testing.T, f flow) string {
	t.Helper()
	data := t.TempDir()
	cwd, _ := filepath.EvalSymlinks(t.TempDir())
	cwdB, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := filepath.EvalSymlinks(t.TempDir())
	if f.setup != nil {
		f.setup(t, cwd, home)
	}
	store, err := sqlitestore.Open(context.Background(), filepath.Join(data, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	arts, _ := artifact.Open(filepath.Join(data, "artifacts"))
	m, err := script.Parse([]byte(f.script))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingModel{Gateway: m}
	clock := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ans := &answers{list: f.answers, cancel: cancel}
	var approver executor.Approver = ans
	if f.timeoutBroker {
		approver = approval.New(nil)
	}
	cfg := session.Config{
		Log: store, Model: rec, Router: tools.NewRouter(), Artifacts: arts, Approver: approver, MaxSteps: f.steps,
		Now: func() time.Time {
			clockMu.Lock()
			defer clockMu.Unlock()
			clock = clock.Add(time.Millisecond)
			return clock
		},
		NewID: func() string { return "sess-1" },
	}
	if f.router != nil {
		cfg.Router = f.router()
	}
	rules, err := policy.Open(policy.Options{Cwd: cwd, ConfigHome: filepath.Join(home, ".config"), Home: home, NoBuiltin: !f.builtin})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	mode := f.mode
	if mode == "" {
		mode = permission.ModeDefault
	}
	s := session.New(cfg, session.Info{Cwd: cwd, Home: home, Mode: mode, Rules: rules, Env: env})
	var out strings.Builder
	var seen uint64 // the last seq printed
	for i, p := range f.prompts {
		if i > 0 && f.modes != nil {
			if err := s.ChangeMode(ctx, f.modes[i-1], event.ActorUser); err != nil {
				t.Fatal(err)
			}
			for e, err := range store.Read(ctx, "sess-1", seen+1) {
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&out, "%3d %-26s turn=%q %s\n", e.Seq, e.Type, e.TurnID, normalise(t, e, cwd, home))
				seen = e.Seq
			}
		}
		if i > 0 && f.resumeIn != nil {
			dir := map[string]string{"A": cwd, "B": cwdB}[f.resumeIn[i-1]]
			rules, err := policy.Open(policy.Options{Cwd: dir, ConfigHome: filepath.Join(home, ".config"), Home: home, NoBuiltin: !f.builtin})
			if err != nil {
				t.Fatal(err)
			}
			s.Close() // the process ends: a new one resumes
			s, err = session.Resume(ctx, cfg, "sess-1", session.Info{Cwd: dir, Home: home, Mode: permission.ModeDefault, Rules: rules, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			moved := "not moved"
			if m := s.Moved(); m != nil {
				moved = fmt.Sprintf("moved from %s; not carried over: %d session rule(s), %d approval(s)", m.From, m.Rules, m.Approvals)
			}
			fmt.Fprintf(&out, "--- resumed in %s: %s\n", f.resumeIn[i-1], strings.NewReplacer(cwdB, "<cwdB>", cwd, "<cwd>").Replace(moved))
		}
		for e, err := range s.RunTurn(ctx, p) {
			if err != nil {
				t.Fatalf("turn failed: %v", err)
			}
			fmt.Fprintf(&out, "%3d %-26s %s\n", e.Seq, e.Type, strings.ReplaceAll(normalise(t, e, cwd, home), cwdB, "<cwdB>"))
			seen = e.Seq
		}
	}
	if err := store.Verify(context.Background(), "sess-1"); err != nil {
		t.Fatalf("chain does not verify: %v", err)
	}
	checkReplayExcept(t, store, "sess-1", f.secretArgs)
	out.WriteString("--- what the model was shown\n")
	for _, n := range rec.notes {
		out.WriteString("  " + n + "\n")
	}
	fmt.Fprintf(&out, "--- asked: %v\n", ans.asked)
	return out.String()
}

// normalise renders a payload with machine-dependent values replaced.
func normalise(t *testing.T, e event.Event, cwd, home string) string {
	var p map[string]any
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if _, ok := p["durationMs"]; ok {
		p["durationMs"] = "<ms>"
	}
	// What a decision was made from is pinned by checkReplay
	// (replay_test.go), which decides every call again from it; digests
	// cover absolute paths.
	if _, ok := p["facts"]; ok {
		p["facts"] = "<facts>"
	}
	if e.Type == event.PolicySnapshot {
		p["digest"] = "<digest>"
		if b, ok := p["builtin"].(map[string]any); ok {
			b["digest"] = "<digest>"
		}
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(p)
	s := strings.ReplaceAll(strings.TrimSpace(buf.String()), cwd, "<cwd>")
	s = strings.ReplaceAll(s, home, "<home>")
	return s
}
