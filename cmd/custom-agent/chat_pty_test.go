//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/testsupport/ptytest"
)

// chatOnPTY starts the test binary as "custom-agent chat" with a
// pseudo-terminal as its controlling terminal, stdin, stdout and stderr,
// and returns the terminal and a function that waits for it to exit.
func chatOnPTY(t *testing.T, dir string, env []string, args ...string) (*ptytest.PTY, func() error) {
	t.Helper()
	p := ptytest.Open(t)
	if err := p.Resize(100, 40); err != nil {
		t.Fatal(err)
	}
	slave, err := p.OpenSlave()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self, args...)
	c.Env = append(os.Environ(), append(env, asCLI+"=1", "NO_COLOR=1", "TERM=xterm")...)
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	c.Dir = dir
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = c.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = c.Process.Kill()
			<-exited
		}
	})
	return p, func() error {
		select {
		case <-exited:
			return waitErr
		case <-time.After(20 * time.Second):
			t.Fatalf("chat did not exit; the terminal shows:\n%s", p.Output())
			return nil
		}
	}
}

// waitAfter waits until the output after offset from holds s, and returns
// where it ends.
func waitAfter(t *testing.T, p *ptytest.PTY, from int, s string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := p.Output()
		if i := strings.Index(out[min(from, len(out)):], s); i >= 0 {
			return from + i + len(s)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q after byte %d; it shows:\n%s", s, from, out[min(from, len(out)):])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A person at a terminal: three turns whose questions are answered allow
// once, allow for the session and deny; a fourth turn whose allowed
// `sleep 30` is cancelled with Ctrl-C, after which the conversation goes
// on; a prompt holding a secret is sent but not kept in the history;
// Ctrl-C at a question denies it and cancels the turn; Ctrl-D ends it. A later chat, opened by custom-agent with no command,
// recalls the first one's prompts with Up.
func TestChatOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs chat in a pseudo-terminal for several seconds")
	}
	data, cwd, cfg := t.TempDir(), t.TempDir(), t.TempDir()
	m := writeScript(t, `{"text":"one","toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch one"}}]}
{"text":"done one"}
{"text":"two","toolCalls":[{"id":"t2","name":"shell","args":{"command":"touch two"}}]}
{"text":"done two"}
{"text":"three","toolCalls":[{"id":"t3","name":"shell","args":{"command":"touch three"}}]}
{"text":"done three"}
{"text":"sleeping","toolCalls":[{"id":"t4","name":"shell","args":{"command":"sleep 30"}}]}
{"text":"still here"}
{"text":"noted"}
{"text":"asking","toolCalls":[{"id":"t5","name":"shell","args":{"command":"touch five"}}]}
`)
	env := []string{"CUSTOM_AGENT_DATA_DIR=" + data, "XDG_CONFIG_HOME=" + cfg, builtinRulesEnv + "=off"}
	p, wait := chatOnPTY(t, cwd, env, "chat", "--model", "script:"+m, "--cwd", cwd)
	at := waitAfter(t, p, 0, "› ")

	answer := func(prompt, key, outcome, done string) {
		t.Helper()
		p.Type(t, prompt+"\r")
		at = waitAfter(t, p, at, "approval needed")
		at = waitAfter(t, p, at, "press a key")
		time.Sleep(400 * time.Millisecond) // past the key guard
		p.Type(t, key)
		at = waitAfter(t, p, at, outcome)
		at = waitAfter(t, p, at, done)
		at = waitAfter(t, p, at, "› ")
	}
	answer("make one", "o", "allowed (allow_once)", "done one")
	answer("make two", "s", "allowed (allow_session)", "done two")
	answer("make three", "d", "denied", "done three")

	// Ctrl-C while the allowed sleep runs cancels the turn only.
	p.Type(t, "sleep now\r")
	at = waitAfter(t, p, at, "press a key")
	time.Sleep(400 * time.Millisecond)
	p.Type(t, "o")
	at = waitAfter(t, p, at, "allowed (allow_once)")
	time.Sleep(time.Second) // the sleep runs
	start := time.Now()
	p.Type(t, "\x03")
	at = waitAfter(t, p, at, "turn cancelled")
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the cancelled turn took %v to end", el)
	}
	at = waitAfter(t, p, at, "› ")
	p.Type(t, "after the cancel\r")
	at = waitAfter(t, p, at, "still here")
	at = waitAfter(t, p, at, "› ")
	// A prompt that holds a secret is sent, and not kept in the history.
	p.Type(t, "the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\r")
	at = waitAfter(t, p, at, "not kept in the prompt history")
	at = waitAfter(t, p, at, "noted")
	at = waitAfter(t, p, at, "› ")
	// Ctrl-C at a question denies it and cancels the turn.
	p.Type(t, "ask me\r")
	at = waitAfter(t, p, at, "press a key")
	time.Sleep(400 * time.Millisecond)
	p.Type(t, "\x03")
	at = waitAfter(t, p, at, "turn cancelled")
	at = waitAfter(t, p, at, "› ")
	p.Type(t, "\x04")
	waitAfter(t, p, at, "session ")
	if err := wait(); err != nil {
		t.Fatalf("chat exited with %v:\n%s", err, p.Output())
	}
	for f, exists := range map[string]bool{"one": true, "two": true, "three": false} {
		if _, err := os.Stat(filepath.Join(cwd, f)); (err == nil) != exists {
			t.Errorf("%s exists=%v, want %v", f, err == nil, exists)
		}
	}

	// The log: one session, five turns, the fourth cancelled.
	ended := regexp.MustCompile(`session (\S+) \(custom-agent log`).FindStringSubmatch(p.Output())
	if ended == nil {
		t.Fatalf("chat did not name its session:\n%s", p.Output())
	}
	id := ended[1]
	out, _, err := runWithInput(t, "", "--data-dir", data, "log", id, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var stops []string
	for _, p := range payloadsOf[event.TurnCompletedPayload](t, chatEvents(t, out), event.TurnCompleted) {
		stops = append(stops, p.StopReason)
	}
	if strings.Join(stops, " ") != "final final final cancelled final final cancelled" {
		t.Errorf("the turns ended %v, want final ×3, cancelled, final ×2, cancelled", stops)
	}
	var options []string
	for _, p := range payloadsOf[event.PermissionResolvedPayload](t, chatEvents(t, out), event.PermissionResolved) {
		options = append(options, p.Decision+":"+p.Option+":"+p.Reason)
	}
	want := []string{"allow:allow_once:", "allow:allow_session:", "deny:deny:", "allow:allow_once:", "deny:deny:user pressed Ctrl-C"}
	if len(options) != len(want) {
		t.Fatalf("the answers were %q, want %q", options, want)
	}
	for i := range want {
		if !strings.HasPrefix(options[i], want[i]) {
			t.Errorf("answer %d was %q, want %q…", i+1, options[i], want[i])
		}
	}
	hist, err := os.ReadFile(filepath.Join(data, historyFile))
	if err != nil {
		t.Fatal(err)
	}
	var last string
	lines := strings.Split(strings.TrimSpace(string(hist)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last != "ask me" {
		t.Errorf("the history ends with %q (%v), want the last prompt", last, err)
	}
	if strings.Contains(string(hist), "sk-proj-") {
		t.Errorf("the history kept a secret:\n%s", hist)
	}

	// A later chat, a new session, opened by custom-agent with no command:
	// Up brings back the first one's prompts.
	p2, wait2 := chatOnPTY(t, cwd, append(env, "CUSTOM_AGENT_MODEL=script:"+m))
	at = waitAfter(t, p2, 0, "new session")
	at = waitAfter(t, p2, at, "› ")
	p2.Type(t, "\x1b[A")
	at = waitAfter(t, p2, at, "ask me")
	p2.Type(t, "\x1b[A") // the prompt with the secret was not kept
	at = waitAfter(t, p2, at, "after the cancel")
	p2.Type(t, "\x15\x04") // clear the prompt, then Ctrl-D at the empty one
	if err := wait2(); err != nil {
		t.Fatalf("the second chat exited with %v:\n%s", err, p2.Output())
	}
}
