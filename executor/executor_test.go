package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// fakeTool has a built-in tool's metadata and runs fn.
type fakeTool struct {
	info permission.ToolInfo
	fn   func(ctx context.Context, c tool.Call, out tool.Output) (tool.Result, error)
}

func (f *fakeTool) Info() permission.ToolInfo { return f.info }
func (f *fakeTool) Run(ctx context.Context, c tool.Call, out tool.Output) (tool.Result, error) {
	return f.fn(ctx, c, out)
}

// recorder is an Appender that keeps the event types in order, in front of
// a real SQLite store.
type recorder struct {
	mu    sync.Mutex
	store *sqlitestore.Store
	types []event.Type
	fail  bool
}

func (r *recorder) Append(ctx context.Context, d event.Draft) (event.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return event.Event{}, errors.New("disk on fire")
	}
	e, err := r.store.Append(ctx, d)
	if err == nil {
		r.types = append(r.types, e.Type)
	}
	return e, err
}

func (r *recorder) seen() []event.Type {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Type(nil), r.types...)
}

type approverFunc func(ctx context.Context, q executor.Question) (executor.Answer, error)

func (f approverFunc) Ask(ctx context.Context, q executor.Question) (executor.Answer, error) {
	return f(ctx, q)
}

func answer(option string) executor.Approver {
	return approverFunc(func(context.Context, executor.Question) (executor.Answer, error) {
		return executor.Answer{Allow: option != executor.OptionDeny, Option: option, Actor: event.ActorUser}, nil
	})
}

type fixture struct {
	x     *executor.Executor
	rec   *recorder
	arts  *artifact.Store
	store *sqlitestore.Store
	sess  *executor.Session
	ran   map[string]int
	mu    sync.Mutex
	// router and opts made x; batched is x over the same recorder as a
	// BatchAppender (batch_test.go).
	router *tool.Router
	opts   *executor.Options
}

// newFixture registers every built-in tool as a fake that writes "ran NAME"
// (or runs behave[name]) and records that it ran.
func newFixture(t *testing.T, approver executor.Approver, behave map[string]func(context.Context, tool.Call, tool.Output) (tool.Result, error)) *fixture {
	t.Helper()
	dir := t.TempDir()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	arts, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	f := &fixture{rec: &recorder{store: store}, arts: arts, store: store, ran: map[string]int{}}
	r := tool.NewRouter()
	for _, info := range permission.Builtins() {
		name := info.Name
		fn := behave[name]
		r.Register(&fakeTool{info: info, fn: func(ctx context.Context, c tool.Call, out tool.Output) (tool.Result, error) {
			f.mu.Lock()
			f.ran[name]++
			f.mu.Unlock()
			// The chain so far must be durable before anything runs.
			if got := f.rec.seen(); len(got) == 0 || got[len(got)-1] != event.ToolStarted {
				t.Errorf("%s ran before tool.started was durable: %v", name, got)
			}
			if fn != nil {
				return fn(ctx, c, out)
			}
			io.WriteString(out.Stdout, "ran "+name)
			return tool.Result{}, nil
		}})
	}
	clock := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	f.router, f.opts = r, &executor.Options{Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }}
	f.x = executor.New(r, f.rec, arts, approver, f.opts)
	f.sess = &executor.Session{ID: "s1", TurnID: "t1", Cwd: "/home/u/proj", Home: "/home/u", Mode: permission.ModeDefault, Env: []string{"PATH=/usr/bin", "OPENAI_API_KEY=sk-x", "GITHUB_TOKEN=ghp_x", "LANG=C"}}
	return f
}

func (f *fixture) events(t *testing.T) []event.Event {
	t.Helper()
	var out []event.Event
	for e, err := range f.store.Read(context.Background(), "s1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func payload[P any](t *testing.T, e event.Event) P {
	t.Helper()
	var p P
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func call(tool, args string) executor.Call {
	return executor.Call{ID: "tc_1", Tool: tool, Args: json.RawMessage(args)}
}

func TestChains(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		approver executor.Approver
		call     executor.Call
		want     []event.Type
		status   executor.Status
		ran      bool
		content  string
	}{
		{"read allowed without asking", nil, call("read_file", `{"path":"README.md"}`),
			[]event.Type{event.PermissionResolved, event.ToolStarted, event.ToolCompleted}, executor.Completed, true, "ran read_file"},
		{"execute asked and allowed once", answer(executor.OptionAllowOnce), call("shell", `{"command":"npm test"}`),
			[]event.Type{event.PermissionRequested, event.PermissionResolved, event.ToolStarted, event.ToolCompleted}, executor.Completed, true, "ran shell"},
		{"execute asked and denied", answer(executor.OptionDeny), call("shell", `{"command":"npm test"}`),
			[]event.Type{event.PermissionRequested, event.PermissionResolved}, executor.Denied, false, "Permission denied: user denied"},
		{"credential denied without asking", answer(executor.OptionAllowOnce), call("read_file", `{"path":"/home/u/.ssh/id_rsa"}`),
			[]event.Type{event.PermissionResolved}, executor.Denied, false, "Permission denied"},
		{"unknown tool", nil, call("run_shell", `{"command":"ls"}`),
			[]event.Type{event.ToolFailed}, executor.Failed, false, "unknown tool"},
		{"args failing the schema", nil, call("read_file", `{"file":"README.md"}`),
			[]event.Type{event.ToolFailed}, executor.Failed, false, `"path": missing (required)`},
		{"destructive allowed for the session is refused", answer(executor.OptionAllowSession), call("shell", `{"command":"rm -rf dist"}`),
			[]event.Type{event.PermissionRequested, event.PermissionResolved}, executor.Denied, false, "was not offered"},
		{"destructive allowed once", answer(executor.OptionAllowOnce), call("shell", `{"command":"rm -rf dist"}`),
			[]event.Type{event.PermissionRequested, event.PermissionResolved, event.ToolStarted, event.ToolCompleted}, executor.Completed, true, "ran shell"},
		{"no approval UI denies", nil, call("write_file", `{"path":"a.txt","content":"x"}`),
			[]event.Type{event.PermissionRequested, event.PermissionResolved}, executor.Denied, false, "no approval UI"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.approver, nil)
			out, err := f.x.Execute(context.Background(), f.sess, tc.call)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, f.rec.seen()); diff != "" {
				t.Errorf("event chain (-want +got):\n%s", diff)
			}
			if out.Status != tc.status || !strings.Contains(out.Content, tc.content) {
				t.Errorf("outcome %s %q; want %s containing %q", out.Status, out.Content, tc.status, tc.content)
			}
			if ran := f.ran[tc.call.Tool] > 0; ran != tc.ran {
				t.Errorf("tool ran = %v, want %v", ran, tc.ran)
			}
		})
	}
}

func TestResolvedEventSaysWhoAndWhy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, answer(executor.OptionAllowOnce), nil)
	out, err := f.x.Execute(context.Background(), f.sess, call("shell", `{"command":"npm test"}`))
	if err != nil {
		t.Fatal(err)
	}
	evs := f.events(t)
	req := payload[event.PermissionRequestedPayload](t, evs[0])
	// Without Rules, no session or project rule can be made, so neither is offered.
	if req.RiskAtDecision.String() != "execute" || req.SuggestedDecision != "ask" || req.TimeoutMs != 30000 || len(req.Options) != 2 {
		t.Errorf("permission.requested = %+v", req)
	}
	res := payload[event.PermissionResolvedPayload](t, evs[1])
	if res.Decision != "allow" || res.Actor != event.ActorUser || res.Reason != "user approved (allow_once)" || res.Option != "allow_once" {
		t.Errorf("permission.resolved = %+v", res)
	}
	if out.Prior == nil || out.Prior.Tool != "shell" || !out.Prior.ByUser {
		t.Errorf("a user approval gives the session a prior: %+v", out.Prior)
	}
}

func TestOutputPreviewArtifactAndMasking(t *testing.T) {
	t.Parallel()
	// 10 MiB of output with a secret at the start and a 3-byte character
	// straddling the preview boundary.
	big := strings.Repeat("a", executor.PreviewBytes-1) + "€" + strings.Repeat("b", 10<<20)
	secret := "token ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
	f := newFixture(t, nil, map[string]func(context.Context, tool.Call, tool.Output) (tool.Result, error){
		"read_file": func(_ context.Context, c tool.Call, out tool.Output) (tool.Result, error) {
			io.WriteString(out.Stdout, secret)
			for i := 0; i < len(big); i += 64 << 10 {
				io.WriteString(out.Stdout, big[i:min(i+64<<10, len(big))])
			}
			io.WriteString(out.Stderr, "warn\n")
			return tool.Result{}, nil
		},
	})
	out, err := f.x.Execute(context.Background(), f.sess, call("read_file", `{"path":"big.txt"}`))
	if err != nil || out.Status != executor.Completed {
		t.Fatalf("%v %v", out, err)
	}
	evs := f.events(t)
	done := payload[event.ToolCompletedPayload](t, evs[len(evs)-1])
	if done.StdoutBytes != int64(len(secret)+len(big)) || done.StderrBytes != 5 {
		t.Errorf("byte counts %d/%d", done.StdoutBytes, done.StderrBytes)
	}
	if strings.Contains(done.StdoutPreview, "ghp_") || !strings.Contains(done.StdoutPreview, "[REDACTED]") {
		t.Errorf("secret not masked in the preview: %.80q", done.StdoutPreview)
	}
	if len(done.StdoutPreview) > executor.PreviewBytes+len("[REDACTED]") || strings.ContainsRune(done.StdoutPreview, '\uFFFD') {
		t.Errorf("preview of %d bytes, or cut inside a character", len(done.StdoutPreview))
	}
	if len(done.Artifacts) != 2 || done.Artifacts[0].Name != "stdout" {
		t.Fatalf("artifacts %+v", done.Artifacts)
	}
	fh, err := f.arts.Open(done.Artifacts[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(fh)
	fh.Close()
	if !bytes.Equal(raw, []byte(secret+big)) {
		t.Error("the artifact does not hold the raw output")
	}
	if !strings.Contains(out.Content, "bytes of stdout omitted") || !strings.Contains(out.Content, "read_output") {
		t.Errorf("the model is not told the output was cut: %.200q", out.Content[len(out.Content)-200:])
	}
}

func TestArgsMaskedInEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, answer(executor.OptionAllowOnce), nil)
	if _, err := f.x.Execute(context.Background(), f.sess, call("http_post", `{"url":"https://example.test/hook","body":"hello","headers":{"Authorization":"Bearer abcdefghijkl"}}`)); err != nil {
		t.Fatal(err)
	}
	for _, e := range f.events(t) {
		if strings.Contains(string(e.Payload), "abcdefghijkl") {
			t.Errorf("%s carries the raw secret: %s", e.Type, e.Payload)
		}
	}
}

func TestToolErrorIsToolFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, map[string]func(context.Context, tool.Call, tool.Output) (tool.Result, error){
		"read_file": func(context.Context, tool.Call, tool.Output) (tool.Result, error) {
			return tool.Result{}, errors.New("open README.md: no such file or directory")
		},
	})
	out, err := f.x.Execute(context.Background(), f.sess, call("read_file", `{"path":"README.md"}`))
	if err != nil {
		t.Fatal(err)
	}
	evs := f.events(t)
	failed := payload[event.ToolFailedPayload](t, evs[len(evs)-1])
	if out.Status != executor.Failed || failed.Stage != event.StageExecute || !strings.Contains(failed.Error, "no such file") {
		t.Fatalf("outcome %+v, event %+v", out, failed)
	}
}

func TestEnvironmentScrubbed(t *testing.T) {
	t.Parallel()
	var got []string
	f := newFixture(t, answer(executor.OptionAllowOnce), map[string]func(context.Context, tool.Call, tool.Output) (tool.Result, error){
		"shell": func(_ context.Context, c tool.Call, _ tool.Output) (tool.Result, error) {
			got = c.Env
			return tool.Result{}, nil
		},
	})
	if _, err := f.x.Execute(context.Background(), f.sess, call("shell", `{"command":"env"}`)); err != nil {
		t.Fatal(err)
	}
	// env dumps are credential: denied without asking, so nothing ran.
	if got != nil {
		t.Fatal("env ran")
	}
	if _, err := f.x.Execute(context.Background(), f.sess, call("shell", `{"command":"npm test"}`)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"PATH=/usr/bin", "LANG=C"}, got); diff != "" {
		t.Fatalf("environment (-want +got):\n%s", diff)
	}
}

func TestCancelWhileAsking(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	f := newFixture(t, approverFunc(func(ctx context.Context, q executor.Question) (executor.Answer, error) {
		cancel()
		<-ctx.Done()
		return executor.Answer{}, ctx.Err()
	}), nil)
	out, err := f.x.Execute(ctx, f.sess, call("shell", `{"command":"npm test"}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	evs := f.events(t)
	res := payload[event.PermissionResolvedPayload](t, evs[len(evs)-1])
	if res.Decision != "deny" || res.Actor != event.ActorSystem || out.Status != executor.Denied || f.ran["shell"] > 0 {
		t.Fatalf("cancel while asking: %+v, outcome %+v", res, out)
	}
}

func TestLogFailureStopsEverything(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.rec.fail = true
	_, err := f.x.Execute(context.Background(), f.sess, call("read_file", `{"path":"README.md"}`))
	if !errors.Is(err, executor.ErrLog) {
		t.Fatalf("err = %v, want ErrLog", err)
	}
	if f.ran["read_file"] > 0 {
		t.Fatal("the tool ran although its decision could not be recorded")
	}
}

func TestPriorApprovalReused(t *testing.T) {
	t.Parallel()
	asked := 0
	f := newFixture(t, approverFunc(func(context.Context, executor.Question) (executor.Answer, error) {
		asked++
		return executor.Answer{Allow: true, Option: executor.OptionAllowOnce, Actor: event.ActorUser}, nil
	}), nil)
	for _, cmd := range []string{"npm test", "npm test", "rm -rf dist", "rm -rf dist"} {
		out, err := f.x.Execute(context.Background(), f.sess, call("shell", `{"command":"`+cmd+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if out.Prior != nil {
			f.sess.History = append(f.sess.History, *out.Prior)
		}
	}
	// npm test asked once then reused; rm -rf asked both times (spec §6).
	if asked != 3 {
		t.Fatalf("asked %d times, want 3", asked)
	}
}

// fakeRules proposes a rule for any shell call and records what was added.
type fakeRules struct {
	session, project []permission.Rule
	failProject      bool
}

func (f *fakeRules) SessionRuleFor(t permission.ToolInfo, args map[string]any) (permission.Rule, bool) {
	cmd, _ := args["command"].(string)
	return permission.Rule{ID: "session-" + cmd, Tool: t.Name, Command: cmd, Decision: permission.Allow}, t.Name == "shell"
}

func (f *fakeRules) ProjectRuleFor(t permission.ToolInfo, args map[string]any) (permission.Rule, bool) {
	r, ok := f.SessionRuleFor(t, args)
	r.ID = "project-" + r.Command
	return r, ok
}

func (f *fakeRules) AddSession(r permission.Rule) error { f.session = append(f.session, r); return nil }

func (f *fakeRules) AddProject(r permission.Rule) error {
	if f.failProject {
		return errors.New("project file is locked")
	}
	f.project = append(f.project, r)
	return nil
}

func TestAnswersThatMakeRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		option      string
		failProject bool
		want        []event.Type
		changed     bool
	}{
		{"allow for the session", executor.OptionAllowSession, false,
			[]event.Type{event.PermissionRequested, event.PermissionResolved, event.PolicyChanged, event.ToolStarted, event.ToolCompleted}, true},
		{"always allow in the project", executor.OptionAllowProject, false,
			[]event.Type{event.PermissionRequested, event.PermissionResolved, event.PolicyChanged, event.ToolStarted, event.ToolCompleted}, true},
		{"project rule that cannot be written is allowed once", executor.OptionAllowProject, true,
			[]event.Type{event.PermissionRequested, event.PermissionResolved, event.ToolStarted, event.ToolCompleted}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var q executor.Question
			f := newFixture(t, approverFunc(func(_ context.Context, got executor.Question) (executor.Answer, error) {
				q = got
				return executor.Answer{Allow: true, Option: tc.option, Actor: event.ActorUser}, nil
			}), nil)
			rules := &fakeRules{failProject: tc.failProject}
			f.sess.Rules = rules
			out, err := f.x.Execute(context.Background(), f.sess, call("shell", `{"command":"npm test"}`))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, f.rec.seen()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if q.SessionRule == nil || q.ProjectRule == nil || len(q.Options) != 4 {
				t.Errorf("the question does not show the rules it offers: %+v", q)
			}
			if out.PolicyChanged != tc.changed {
				t.Errorf("PolicyChanged = %v", out.PolicyChanged)
			}
			evs := f.events(t)
			res := payload[event.PermissionResolvedPayload](t, evs[1])
			if tc.failProject && !strings.Contains(res.Reason, "could not be made") {
				t.Errorf("reason %q does not say the rule failed", res.Reason)
			}
			if tc.changed {
				pc := payload[event.PolicyChangedPayload](t, evs[2])
				if pc.Op != "add" || !strings.Contains(string(pc.Rule), `"command":"npm test"`) {
					t.Errorf("policy.changed = %+v", pc)
				}
			}
		})
	}
}

func TestDestructiveOffersNoRules(t *testing.T) {
	t.Parallel()
	var q executor.Question
	f := newFixture(t, approverFunc(func(_ context.Context, got executor.Question) (executor.Answer, error) {
		q = got
		return executor.Answer{Option: executor.OptionDeny, Actor: event.ActorUser}, nil
	}), nil)
	f.sess.Rules = &fakeRules{}
	if _, err := f.x.Execute(context.Background(), f.sess, call("shell", `{"command":"rm -rf dist"}`)); err != nil {
		t.Fatal(err)
	}
	if q.SessionRule != nil || q.ProjectRule != nil || len(q.Options) != 2 {
		t.Fatalf("a destructive call offered rules: %+v", q)
	}
}

// TestDurationExcludesTheWaitForAnAnswer: durationMs is the tool's run
// time; the minutes a person took to answer are not in it.
func TestDurationExcludesTheWaitForAnAnswer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	arts, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	var mu sync.Mutex
	clock := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	r := tool.NewRouter()
	info, _ := permission.Builtin("shell")
	r.Register(&fakeTool{info: info, fn: func(context.Context, tool.Call, tool.Output) (tool.Result, error) {
		advance(250 * time.Millisecond) // the tool runs
		return tool.Result{}, nil
	}})
	x := executor.New(r, store, arts, approverFunc(func(context.Context, executor.Question) (executor.Answer, error) {
		advance(2 * time.Minute) // the person thinks
		return executor.Answer{Allow: true, Option: executor.OptionAllowOnce, Actor: event.ActorUser}, nil
	}), &executor.Options{Now: now})
	sess := &executor.Session{ID: "s1", TurnID: "t1", Cwd: dir, Home: dir}
	if _, err := x.Execute(context.Background(), sess, call("shell", `{"command":"npm test"}`)); err != nil {
		t.Fatal(err)
	}
	var last event.Event
	for e, err := range store.Read(context.Background(), "s1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		last = e
	}
	done := payload[event.ToolCompletedPayload](t, last)
	if done.DurationMs != 250 {
		t.Fatalf("durationMs = %d, want 250 (the tool's time only)", done.DurationMs)
	}
}
