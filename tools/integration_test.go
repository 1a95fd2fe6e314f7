package tools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/memwatch"
	"github.com/custom-agent/custom-agent/tools"
)

type allowOnce struct{ asked atomic.Int32 }

func (a *allowOnce) Ask(context.Context, executor.Question) (executor.Answer, error) {
	a.asked.Add(1)
	return executor.Answer{Allow: true, Option: executor.OptionAllowOnce, Actor: event.ActorUser}, nil
}

type rig struct {
	x     *executor.Executor
	store *sqlitestore.Store
	sess  *executor.Session
	ask   *allowOnce
	cwd   string
	arts  *artifact.Store
}

func newRig(t testing.TB) *rig {
	t.Helper()
	data := t.TempDir()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(data, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	arts, _ := artifact.Open(filepath.Join(data, "artifacts"))
	cwd, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := filepath.EvalSymlinks(t.TempDir())
	r := &rig{store: store, ask: &allowOnce{}, cwd: cwd, arts: arts}
	r.x = executor.New(tools.NewRouter(), store, arts, r.ask, nil)
	r.sess = &executor.Session{ID: "s", TurnID: "t", Cwd: cwd, Home: home, Mode: permission.ModeDefault,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SECRET_TOKEN=hunter2"}}
	return r
}

func (r *rig) exec(t *testing.T, name string, args any) executor.Outcome {
	t.Helper()
	raw, _ := json.Marshal(args)
	out, err := r.x.Execute(context.Background(), r.sess, executor.Call{ID: "tc", Tool: name, Args: raw})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

func (r *rig) last(t *testing.T) event.Event {
	t.Helper()
	var last event.Event
	for e, err := range r.store.Read(context.Background(), "s", 1) {
		if err != nil {
			t.Fatal(err)
		}
		last = e
	}
	return last
}

func TestBuiltinsMatchTheTable(t *testing.T) {
	t.Parallel()
	var names []string
	for _, info := range tools.NewRouter().Infos() {
		names = append(names, info.Name)
		if want, ok := permission.Builtin(info.Name); !ok || want.Risk != info.Risk || want.Schema != info.Schema {
			t.Errorf("%s does not carry the shared table's metadata", info.Name)
		}
	}
	if len(names) != len(permission.Builtins()) {
		t.Fatalf("registered %v, want every built-in", names)
	}
}

func TestShellThroughTheGate(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	out := r.exec(t, "shell", map[string]any{"command": `printf 'hello\n'; [ -z "${SECRET_TOKEN:+set}" ] && echo scrubbed >&2; exit 3`})
	if out.Status != executor.Completed || r.ask.asked.Load() != 1 {
		t.Fatalf("outcome %+v, asked %d", out, r.ask.asked.Load())
	}
	var done event.ToolCompletedPayload
	json.Unmarshal(r.last(t).Payload, &done)
	if done.ExitCode == nil || *done.ExitCode != 3 || done.StdoutPreview != "hello\n" {
		t.Fatalf("tool.completed %+v", done)
	}
	if done.StderrPreview != "scrubbed\n" {
		t.Fatalf("secret env reached the process or the log: %q", done.StderrPreview)
	}
}

func TestShellTimeoutIsToolFailed(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	out := r.exec(t, "shell", map[string]any{"command": "sleep 30", "timeoutMs": 200})
	if out.Status != executor.Failed || !strings.Contains(out.Content, "timed out") {
		t.Fatalf("outcome %+v", out)
	}
	if e := r.last(t); e.Type != event.ToolFailed {
		t.Fatalf("last event %s", e.Type)
	}
}

func TestPatchThatDoesNotApplyChangesNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	os.WriteFile(filepath.Join(r.cwd, "a.txt"), []byte("one\ntwo\n"), 0o644)
	os.WriteFile(filepath.Join(r.cwd, "b.txt"), []byte("three\n"), 0o644)
	patch := "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-not three\n+THREE\n"
	out := r.exec(t, "apply_patch", map[string]any{"patch": patch})
	if out.Status != executor.Failed || !strings.Contains(out.Content, "b.txt") {
		t.Fatalf("outcome %+v", out)
	}
	if a, _ := os.ReadFile(filepath.Join(r.cwd, "a.txt")); string(a) != "one\ntwo\n" {
		t.Fatalf("a.txt was half-patched: %q", a)
	}
}

func TestSymlinkToCredentialDeniedWithoutReading(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	os.MkdirAll(filepath.Join(r.sess.Home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(r.sess.Home, ".ssh", "id_rsa"), []byte("PRIVATE"), 0o600)
	os.Symlink(filepath.Join(r.sess.Home, ".ssh", "id_rsa"), filepath.Join(r.cwd, "notes.txt"))
	out := r.exec(t, "read_file", map[string]any{"path": "notes.txt"})
	if out.Status != executor.Denied || out.Decision.RiskAtDecision.String() != "credential" || r.ask.asked.Load() != 0 {
		t.Fatalf("outcome %+v (asked %d)", out, r.ask.asked.Load())
	}
}

func TestRedirectIsJudgedAgain(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "http://169.254.169.254/latest/meta-data/iam/", http.StatusFound)
	}))
	defer srv.Close()
	out := r.exec(t, "http_get", map[string]any{"url": srv.URL})
	if out.Status != executor.Completed || !strings.Contains(out.Content, "169.254.169.254") {
		t.Fatalf("first request: %+v", out)
	}
	// The model follows the redirect: a new call, judged on its own.
	out = r.exec(t, "http_get", map[string]any{"url": "http://169.254.169.254/latest/meta-data/iam/"})
	if out.Status != executor.Denied {
		t.Fatalf("the metadata address was not denied: %+v", out)
	}
}

// TestLargeOutputStreams checks that output is streamed, not buffered: the
// heap grows far less than the output while a real process prints it.
func TestLargeOutputStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 64 MiB")
	}
	r := newRig(t)
	stop := memwatch.Start(5 * time.Millisecond)
	out := r.exec(t, "shell", map[string]any{"command": "head -c 67108864 /dev/zero"})
	growth := stop()
	var done event.ToolCompletedPayload
	json.Unmarshal(r.last(t).Payload, &done)
	if out.Status != executor.Completed || done.StdoutBytes != 64<<20 || len(done.Artifacts) != 1 || done.Artifacts[0].Bytes != 64<<20 {
		t.Fatalf("outcome %s, event %+v", out.Status, done)
	}
	if growth > 32<<20 {
		t.Fatalf("heap grew %d MiB while printing 64 MiB", growth>>20)
	}
	if err := r.arts.Verify(done.Artifacts[0].Digest); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkShell1GiB measures the heap growth while the real shell tool
// prints 1 GiB through the executor (all of it stored as an artifact).
func BenchmarkShell1GiB(b *testing.B) {
	for range b.N {
		r := newRig(b)
		stop := memwatch.Start(5 * time.Millisecond)
		raw, _ := json.Marshal(map[string]any{"command": "head -c 1073741824 /dev/zero"})
		out, err := r.x.Execute(context.Background(), r.sess, executor.Call{ID: "tc", Tool: "shell", Args: raw})
		growth := stop()
		if err != nil || out.Status != executor.Completed {
			b.Fatal(out, err)
		}
		b.ReportMetric(float64(growth)/(1<<20), "peak-heap-growth-MiB")
	}
	b.SetBytes(1 << 30)
}
