//go:build linux

package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/testsupport/ptytest"
)

// TestModelTimeoutNamesTheServer: a server that accepts and never answers
// ends the turn after --model-timeout with a message naming its base URL.
func TestModelTimeoutNamesTheServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	start := time.Now()
	out, errOut, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "openai:test-model", "--model-timeout", "300ms", "--cwd", t.TempDir(), "hello")
	if err == nil {
		t.Fatal("the turn did not fail")
	}
	msg := out + errOut + err.Error()
	if !strings.Contains(msg, "the model server at "+srv.URL+"/v1 sent nothing back for 300ms") || !strings.Contains(msg, "--model-timeout") {
		t.Fatalf("the message does not name the server and the setting:\n%s", msg)
	}
	// The SDK retries a call that got no answer twice, with backoff.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s", d)
	}
	// Not a terminal: no status line.
	if strings.Contains(out, "\r") || strings.Contains(out, "waiting for") {
		t.Fatalf("a status line was printed to a pipe: %q", out)
	}
}

func TestModelTimeoutEnvAndFlagChecked(t *testing.T) {
	t.Setenv("CUSTOM_AGENT_MODEL_TIMEOUT", "soon")
	_, _, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "openai:m", "--cwd", t.TempDir(), "hello")
	if err == nil || !strings.Contains(err.Error(), `CUSTOM_AGENT_MODEL_TIMEOUT="soon" is not a positive duration`) {
		t.Fatalf("bad env: %v", err)
	}
	_, _, err = runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "openai:m", "--model-timeout", "-1s", "--cwd", t.TempDir(), "hello")
	if err == nil || !strings.Contains(err.Error(), "--model-timeout must be positive") {
		t.Fatalf("bad flag: %v", err)
	}
}

// TestConnectionRefusedExplained: nothing listening at the base URL.
func TestConnectionRefusedExplained(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()
	t.Setenv("OPENAI_BASE_URL", url)
	t.Setenv("OPENAI_API_KEY", "")
	out, errOut, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "openai:test-model", "--cwd", t.TempDir(), "hello")
	if msg := out + errOut; err == nil || !strings.Contains(msg+err.Error(), "is the server at "+url+" running?") {
		t.Fatalf("refused connection not explained: %v\n%s", err, msg)
	}
}

// TestStatusLineOnATerminal: on a pseudo-terminal a status line with the
// time elapsed is drawn while the model has not begun answering and while
// a tool runs, and erased before the next output.
func TestStatusLineOnATerminal(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		switch calls.Add(1) {
		case 1:
			time.Sleep(1300 * time.Millisecond) // the model thinks
			io.WriteString(w, chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"command\":\"sleep 1.3; echo slept\"}"}}]}`, ""))
			io.WriteString(w, chunk(`{}`, "tool_calls"))
		default:
			io.WriteString(w, chunk(`{"role":"assistant","content":"done"}`, ""))
			io.WriteString(w, chunk(`{}`, "stop"))
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	p := ptytest.Open(t)
	root := newRootCmd()
	root.SetArgs([]string{"--data-dir", t.TempDir(), "run", "--model", "openai:test-model", "--cwd", t.TempDir(), "hello"})
	root.SetIn(strings.NewReader("allow_once\n"))
	root.SetOut(p.Slave)
	var errOut strings.Builder
	root.SetErr(&errOut)
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	p.WaitFor(t, "done", 5*time.Second)
	got := p.Output()
	for _, want := range []string{"waiting for openai:test-model · 1s", "running shell · 1s", "\r\x1b[K"} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal was not shown %q:\n%q", want, got)
		}
	}
	// Erased before the output that follows it: the last status line is
	// followed by an erase, and the tool's result line comes after that.
	// (How many seconds the status counted depends on the machine.)
	i := strings.LastIndex(got, "running shell")
	j := strings.Index(got, "exit 0 ·")
	if i < 0 || j < i || !strings.Contains(got[i:j], "\r\x1b[K") {
		t.Errorf("the status line was not erased when the tool ended:\n%q", got)
	}
}
