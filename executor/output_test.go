package executor_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// lastLog keeps the events it is given, validated as the real log would.
type lastLog struct {
	mu  sync.Mutex
	evs []event.Event
}

func (l *lastLog) Append(_ context.Context, d event.Draft) (event.Event, error) {
	p, err := event.Prepare(d)
	if err != nil {
		return event.Event{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := p.Seal(uint64(len(l.evs)+1), event.GenesisHash)
	l.evs = append(l.evs, e)
	return e, nil
}

func (l *lastLog) completed(t *testing.T) event.ToolCompletedPayload {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.evs[len(l.evs)-1]
	if e.Type != event.ToolCompleted {
		t.Fatalf("last event is %s, want tool.completed", e.Type)
	}
	var p event.ToolCompletedPayload
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// printer is read_file's metadata (allowed without asking) around a tool
// that prints stdout and stderr.
func printer(stdout, stderr string) *tool.Router {
	r := tool.NewRouter()
	info, _ := permission.Builtin("read_file")
	r.Register(&fakeTool{info: info, fn: func(_ context.Context, _ tool.Call, out tool.Output) (tool.Result, error) {
		// Several writes, so the cut falls inside one of them.
		for _, part := range []string{stdout[:len(stdout)/3], stdout[len(stdout)/3:]} {
			io.WriteString(out.Stdout, part)
		}
		io.WriteString(out.Stderr, stderr)
		return tool.Result{}, nil
	}})
	return r
}

func TestMaxStoredCutsAndSaysSo(t *testing.T) {
	t.Parallel()
	stdout, stderr := strings.Repeat("0123456789", 10), "warning\n"
	arts, _ := artifact.Open(filepath.Join(t.TempDir(), "artifacts"))
	log := &lastLog{}
	x := executor.New(printer(stdout, stderr), log, arts, nil, &executor.Options{MaxStored: 42})
	sess := &executor.Session{ID: "s", TurnID: "t", Cwd: t.TempDir(), Home: "/home/u"}
	out, err := x.Execute(context.Background(), sess, executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"big"}`)})
	if err != nil || out.Status != executor.Completed {
		t.Fatalf("%+v %v", out, err)
	}
	p := log.completed(t)
	if p.Truncated == nil || *p.Truncated != (event.StreamBytes{Stdout: 58}) {
		t.Fatalf("truncated = %+v, want 58 bytes of stdout dropped and none of stderr", p.Truncated)
	}
	if len(p.Artifacts) != 2 || !p.Artifacts[0].Truncated || p.Artifacts[0].Bytes != 42 || p.Artifacts[1].Truncated {
		t.Fatalf("artifacts %+v", p.Artifacts)
	}
	f, err := arts.Open(p.Artifacts[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _ := io.ReadAll(f)
	if string(got) != stdout[:42] {
		t.Fatalf("stored %q, want the first 42 bytes", got)
	}
	if !strings.Contains(out.Content, "the last 58 bytes of stdout and 0 of stderr were not stored") {
		t.Errorf("the model is not told what was dropped: %q", out.Content)
	}
}

func TestUnderTheCapNothingIsTruncated(t *testing.T) {
	t.Parallel()
	stdout := strings.Repeat("x", 5000)
	arts, _ := artifact.Open(filepath.Join(t.TempDir(), "artifacts"))
	log := &lastLog{}
	// The default cap, and a cap of exactly the output's size.
	for _, max := range []int64{0, int64(len(stdout))} {
		x := executor.New(printer(stdout, ""), log, arts, nil, &executor.Options{MaxStored: max})
		sess := &executor.Session{ID: "s", TurnID: "t", Cwd: t.TempDir(), Home: "/home/u"}
		if _, err := x.Execute(context.Background(), sess, executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"big"}`)}); err != nil {
			t.Fatal(err)
		}
		p := log.completed(t)
		if p.Truncated != nil || len(p.Artifacts) != 1 || p.Artifacts[0].Truncated || p.Artifacts[0].Bytes != 5000 {
			t.Fatalf("cap %d: truncated %+v, artifacts %+v", max, p.Truncated, p.Artifacts)
		}
	}
}

func TestDefaultCapIsAtLeast2GiB(t *testing.T) {
	if executor.DefaultMaxStored < 2<<30 {
		t.Fatalf("DefaultMaxStored = %d, want at least 2 GiB per stream", executor.DefaultMaxStored)
	}
}

// TestLongOutputKeepsItsTail: the end of a long output (a failure printed
// last) is in the event, with the offsets of what lies between the preview
// and it, and the model is told how to read that.
func TestLongOutputKeepsItsTail(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "=== RUN   TestCase%03d ok — ✓\n", i)
	}
	b.WriteString("--- FAIL: TestLast (0.00s)\n    last_test.go:9: want 2, got 3\nFAIL\n")
	full := b.String()
	// Written in odd-sized pieces, so the tail buffer wraps many times.
	var parts []string
	for s := full; s != ""; {
		n := min(len(s), 777)
		parts = append(parts, s[:n])
		s = s[n:]
	}
	arts, _ := artifact.Open(filepath.Join(t.TempDir(), "artifacts"))
	log := &lastLog{}
	r := tool.NewRouter()
	info, _ := permission.Builtin("read_file")
	r.Register(&fakeTool{info: info, fn: func(_ context.Context, _ tool.Call, out tool.Output) (tool.Result, error) {
		for _, part := range parts {
			io.WriteString(out.Stdout, part)
		}
		return tool.Result{}, nil
	}})
	x := executor.New(r, log, arts, nil, nil)
	sess := &executor.Session{ID: "s", TurnID: "t", Cwd: t.TempDir(), Home: "/home/u"}
	out, err := x.Execute(context.Background(), sess, executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"big"}`)})
	if err != nil || out.Status != executor.Completed {
		t.Fatalf("%+v %v", out, err)
	}
	p := log.completed(t)
	tail := p.StdoutTail
	if tail == nil || tail.From+int64(len(tail.Text)) != int64(len(full)) || full[tail.From:] != tail.Text {
		t.Fatalf("tail %+v is not the end of the output", tail)
	}
	if len(tail.Text) > executor.TailBytes || len(tail.Text) < executor.TailBytes-3 {
		t.Fatalf("tail of %d bytes, want about %d", len(tail.Text), executor.TailBytes)
	}
	headEnd := tail.From - tail.Omitted
	if full[:headEnd] != p.StdoutPreview {
		t.Fatalf("the preview does not end where omitted says (%d)", headEnd)
	}
	for _, want := range []string{"last_test.go:9: want 2, got 3\nFAIL\n", fmt.Sprintf("%d bytes of stdout omitted (bytes %d to %d)", tail.Omitted, headEnd, tail.From),
		fmt.Sprintf(`read_output {"toolCallId":"tc","stream":"stdout","offset":%d,"limit":%d}`, headEnd, tail.Omitted)} {
		if !strings.Contains(out.Content, want) {
			t.Errorf("the model is not shown %q:\n%s", want, out.Content[len(out.Content)-300:])
		}
	}
}

// TestMediumOutputIsShownWhole: preview and tail together hold an output a
// little longer than the preview, with nothing omitted.
func TestMediumOutputIsShownWhole(t *testing.T) {
	t.Parallel()
	full := strings.Repeat("é", executor.PreviewBytes) // 8 KiB, a character cut at the preview's end
	arts, _ := artifact.Open(filepath.Join(t.TempDir(), "artifacts"))
	log := &lastLog{}
	x := executor.New(printer(full, ""), log, arts, nil, nil)
	sess := &executor.Session{ID: "s", TurnID: "t", Cwd: t.TempDir(), Home: "/home/u"}
	out, _ := x.Execute(context.Background(), sess, executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"big"}`)})
	p := log.completed(t)
	if p.StdoutTail == nil || p.StdoutTail.Omitted != 0 || p.StdoutPreview+p.StdoutTail.Text != full {
		t.Fatalf("preview %d bytes + tail %+v do not make the output", len(p.StdoutPreview), p.StdoutTail)
	}
	if out.Content != full {
		t.Fatalf("the model is not shown the whole output (%d bytes of %d)", len(out.Content), len(full))
	}
}

// TestShortOutputIsKeptInItsEvent: a stream that fits the preview, is
// valid UTF-8 and has nothing masked is named inEvent with the digest of
// its bytes, and the artifact store gets no copy; any other stream is
// stored whole, as before, and the event's preview is masked.
func TestShortOutputIsKeptInItsEvent(t *testing.T) {
	t.Parallel()
	secret := "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used\n"
	for _, c := range []struct {
		name, stdout string
		inEvent      bool
	}{
		{"short", "hello\n", true},
		{"exactly a preview", strings.Repeat("p", executor.PreviewBytes), true},
		{"one byte over a preview", strings.Repeat("p", executor.PreviewBytes+1), false},
		{"a secret to mask", secret, false},
		{"invalid UTF-8", "ok \xff\xfe\n", false},
		{"a character the preview would cut", strings.Repeat("p", executor.PreviewBytes-1) + "é", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "artifacts")
			arts, _ := artifact.Open(dir)
			log := &lastLog{}
			x := executor.New(printer(c.stdout, ""), log, arts, nil, nil)
			sess := &executor.Session{ID: "s", TurnID: "t", Cwd: t.TempDir(), Home: "/home/u"}
			if _, err := x.Execute(context.Background(), sess, executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"f"}`)}); err != nil {
				t.Fatal(err)
			}
			p := log.completed(t)
			if len(p.Artifacts) != 1 || p.Artifacts[0].Name != "stdout" || p.Artifacts[0].Bytes != int64(len(c.stdout)) {
				t.Fatalf("artifacts %+v, want stdout's %d bytes", p.Artifacts, len(c.stdout))
			}
			a := p.Artifacts[0]
			sum := sha256.Sum256([]byte(c.stdout))
			if want := artifact.DigestPrefix + hex.EncodeToString(sum[:]); a.Digest != want {
				t.Fatalf("digest %s, want the output's %s", a.Digest, want)
			}
			if a.InEvent != c.inEvent {
				t.Fatalf("inEvent = %v, want %v", a.InEvent, c.inEvent)
			}
			f, err := arts.Open(a.Digest)
			if c.inEvent {
				if p.StdoutPreview != c.stdout {
					t.Fatalf("the preview is not the whole output")
				}
				if !errors.Is(err, artifact.ErrNotFound) {
					t.Fatalf("the store has a copy of an output kept in its event (err %v)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got, _ := io.ReadAll(f); string(got) != c.stdout {
				t.Fatalf("stored %d bytes that differ from the %d printed", len(got), len(c.stdout))
			}
			if c.stdout == secret && strings.Contains(p.StdoutPreview, "ghp_") {
				t.Fatalf("preview not masked: %q", p.StdoutPreview)
			}
		})
	}
}

// TestStoreThatCannotBeMadeDoesNotKillTheTool: an artifact store whose
// directory cannot be made (a file stands where it should be) fails the
// store, not the tool: "Write never fails", the call completes, and the
// event says the output was not stored. Long outputs used to spill from a
// preview-sized buffer past its end once the store had failed (found in
// review).
func TestStoreThatCannotBeMadeDoesNotKillTheTool(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "artifacts")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	arts, _ := artifact.Open(file)
	for _, n := range []int{executor.PreviewBytes + 1, 3 * executor.PreviewBytes} {
		log := &lastLog{}
		long := strings.Repeat("p", n)
		x := executor.New(printer(long, ""), log, arts, nil, nil)
		sess := &executor.Session{ID: "s", TurnID: "t", Cwd: t.TempDir(), Home: "/home/u"}
		if _, err := x.Execute(context.Background(), sess, executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"f"}`)}); err != nil {
			t.Fatal(err)
		}
		if p := log.completed(t); p.StdoutBytes != int64(n) || p.Truncated == nil || p.Truncated.Stdout != int64(n) || len(p.Artifacts) != 0 {
			t.Fatalf("%d bytes: stdoutBytes %d, truncated %+v, artifacts %+v", n, p.StdoutBytes, p.Truncated, p.Artifacts)
		}
	}
}

// TestSecretsCutByThePreviewOrTheTailAreMasked: the preview and the tail
// are slices of the stream, and a secret one of their edges cuts through
// is masked whole, found in the text around the cut: neither half reaches
// the event (nor the model), on stdout or stderr, in a short output or a
// long one whose tail starts inside the secret.
func TestSecretsCutByThePreviewOrTheTailAreMasked(t *testing.T) {
	t.Parallel()
	pad := func(n int) string { return strings.Repeat("x", n-1) + "\n" }
	const token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	const password = "password=Hunter2SuperSecretValue99"
	const aws = "AKIAIOSFODNN7EXAMPLQ"
	for _, tc := range []struct {
		name, out string
		leaks     []string // what must not be in the event
	}{
		// "passw" ends the preview, "ord=Hunter2…" starts the tail.
		{"password at the preview's end", pad(executor.PreviewBytes-5) + password + "\n" + pad(200), []string{"Hunter2"}},
		{"token at the preview's end", pad(executor.PreviewBytes-2) + token + "\n" + pad(300), []string{"p_A1b2C3", "gh" + "p_"}},
		// The tail (the last TailBytes) starts two bytes into the key.
		{"key at the tail's start", pad(30000) + aws + "\n" + pad(executor.TailBytes-len(aws)-1+2), []string{"IAIOSFODNN7", "AKIA"}},
	} {
		for _, stream := range []string{"stdout", "stderr"} {
			t.Run(tc.name+" "+stream, func(t *testing.T) {
				t.Parallel()
				out, errOut := tc.out, ""
				if stream == "stderr" {
					out, errOut = "", tc.out
				}
				arts, _ := artifact.Open(filepath.Join(t.TempDir(), "artifacts"))
				log := &lastLog{}
				x := executor.New(printer(out, errOut), log, arts, nil, nil)
				sess := &executor.Session{ID: "s", TurnID: "t", Cwd: t.TempDir(), Home: "/home/u"}
				res, err := x.Execute(context.Background(), sess, executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"f"}`)})
				if err != nil {
					t.Fatal(err)
				}
				p := log.completed(t)
				b, _ := json.Marshal(p)
				for _, leak := range tc.leaks {
					if i := strings.Index(string(b), leak); i >= 0 {
						t.Errorf("the event holds %q: …%s…", leak, b[max(0, i-40):min(len(b), i+60)])
					}
					if strings.Contains(res.Content, leak) {
						t.Errorf("the model is shown %q", leak)
					}
				}
				if !strings.Contains(string(b), "[REDACTED]") {
					t.Errorf("nothing was masked")
				}
			})
		}
	}
}

// TestAKeyLongerThanTheContextIsMaskedInTheTail: a private key longer than
// the context kept before the tail (an exported keyring) begins far
// before the tail; the tail that starts inside it shows none of its body
// or its END line, also when the output ends before the key does.
func TestAKeyLongerThanTheContextIsMaskedInTheTail(t *testing.T) {
	t.Parallel()
	const line = "lQcYBGVxZ2kBEAC7rXlTmQ9Jc3c1Vb2QmH0VqN8sE4rL6yP1tZ5wK3xA9dF2gH7j\n"
	body := strings.Repeat(line, 40<<10/len(line))
	for _, tc := range []struct{ name, out string }{
		{"whole key", "export:\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + body + "=Ab1c\n-----END PGP PRIVATE KEY BLOCK-----\ndone\n"},
		{"cut before its end", "export:\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + body},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			arts, _ := artifact.Open(filepath.Join(t.TempDir(), "artifacts"))
			log := &lastLog{}
			x := executor.New(printer(tc.out, ""), log, arts, nil, nil)
			sess := &executor.Session{ID: "s", TurnID: "t", Cwd: t.TempDir(), Home: "/home/u"}
			res, err := x.Execute(context.Background(), sess, executor.Call{ID: "tc", Tool: "read_file", Args: json.RawMessage(`{"path":"f"}`)})
			if err != nil {
				t.Fatal(err)
			}
			p := log.completed(t)
			if p.StdoutTail == nil {
				t.Fatal("no tail: the output is not long enough to test it")
			}
			b, _ := json.Marshal(p)
			for _, leak := range []string{"lQcYBGVxZ2kBEAC7", "END PGP PRIVATE KEY"} {
				if strings.Contains(string(b), leak) || strings.Contains(res.Content, leak) {
					t.Errorf("the event or the model holds %q (tail %.80q)", leak, p.StdoutTail.Text)
				}
			}
			if tc.name == "whole key" && !strings.HasSuffix(p.StdoutTail.Text, "done\n") {
				t.Errorf("what follows the key is hidden too: tail ends %q", p.StdoutTail.Text[max(0, len(p.StdoutTail.Text)-20):])
			}
		})
	}
}
