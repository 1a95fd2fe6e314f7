//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/testsupport/ptytest"
)

// serveWith starts the test binary as custom-agent serve with stdout and
// stderr the given file; the returned function stops it (SIGINT) and
// waits for it.
func serveWith(t *testing.T, data, home string, out *os.File, args ...string) (*os.Process, func()) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self, append([]string{"--data-dir", data, "serve"}, args...)...)
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "TMPDIR=" + os.TempDir(), asCLI + "=1"}
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = c.Wait(); close(exited) }()
	stop := func() {
		_ = c.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
			<-exited
		}
	}
	t.Cleanup(stop)
	return c.Process, stop
}

// waitForFile polls path until it holds s; the bound counts looks.
func waitForFile(t *testing.T, path, s string) string {
	t.Helper()
	for i := 0; i < 1000; i++ {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), s) {
			return string(b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("%s never held %q: %q", path, s, b)
	return ""
}

// Web review 4, finding 5: serve's output kept in a file of the project
// (nohup serve > nohup.out) held the login link, and an allowed
// `cut -d= -f2 nohup.out` gave the model the token bare. Output that is not
// a terminal now holds no token: the link is in DATA-DIR/serve-PORT.link,
// readable by the user only, rewritten by SIGUSR1 and removed on exit, and
// the reviewer's calls show the model nothing of it.
func TestLoginLinkInProjectFile(t *testing.T) {
	data, proj, home := t.TempDir(), t.TempDir(), t.TempDir()
	nohup := filepath.Join(proj, "nohup.out")
	f, err := os.Create(nohup)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	proc, stop := serveWith(t, data, home, f)
	printed := waitForFile(t, nohup, "Ctrl-C stops the server")
	if m := serveLogin.FindStringSubmatch(printed); m != nil {
		t.Fatalf("nohup.out holds the login link with its token: %q", printed)
	}
	m := serveLinkFile.FindStringSubmatch(printed)
	if m == nil {
		t.Fatalf("serve names no file holding the login link: %q", printed)
	}
	linkFile := m[1]
	if filepath.Dir(linkFile) != data || !strings.HasPrefix(filepath.Base(linkFile), "serve-") || filepath.Ext(linkFile) != ".link" {
		t.Errorf("the link file is %s, want DATA-DIR/serve-PORT.link", linkFile)
	}
	st, err := os.Lstat(linkFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode() != 0o600 {
		t.Errorf("the link file's mode is %v, want -rw-------", st.Mode())
	}
	login, _, ok := loginIn(t, printed)
	if !ok {
		t.Fatal("no login link")
	}
	token := login[strings.LastIndex(login, "=")+1:]

	// The reviewer's calls, by a model in the project.
	var lines []string
	for i, c := range []string{"cat nohup.out", "cut -d= -f2 nohup.out"} {
		b, _ := json.Marshal(map[string]any{"text": "x", "toolCalls": []any{map[string]any{"id": "s" + string(rune('1'+i)), "name": "shell", "args": map[string]any{"command": c}}}})
		lines = append(lines, string(b))
	}
	lines = append(lines, `{"text":"done"}`)
	script := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(script, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runWithInput(t, "", "--data-dir", t.TempDir(), "run", "--model", "script:"+script, "--cwd", proj, "--json", "x")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, `"tool.completed"`) {
		t.Fatalf("the calls did not run:\n%s", out)
	}
	if strings.Contains(out, token) {
		t.Errorf("the login token reached the log and the model")
	}

	// A fresh link goes to the same file, never to the output.
	if err := proc.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	printed = waitForFile(t, nohup, "a fresh login link saved to "+linkFile)
	if serveLogin.MatchString(printed) {
		t.Fatalf("nohup.out holds a login link with its token after SIGUSR1: %q", printed)
	}
	fresh, _, _ := loginIn(t, printed)
	if fresh == login {
		t.Errorf("the link file still holds the first link after SIGUSR1")
	}
	stop()
	if _, err := os.Lstat(linkFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link file is left after serve exited: %v", err)
	}
}

// A symbolic link where the link file goes (the agent could make one in a
// data dir inside the project) is refused: serve does not start, and
// nothing is written where it points.
func TestServeRefusesASymlinkedLinkFile(t *testing.T) {
	data, proj := t.TempDir(), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	leak := filepath.Join(proj, "leak.txt")
	if err := os.Symlink(leak, filepath.Join(data, "serve-"+port+".link")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	// Bounded: a serve that does not refuse runs until the context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var outB, errB bytes.Buffer
	root := newRootCmd()
	root.SetArgs([]string{"--data-dir", data, "serve", "--addr", "127.0.0.1:" + port})
	root.SetOut(&outB)
	root.SetErr(&errB)
	err = root.ExecuteContext(ctx)
	out, errOut := outB.String(), errB.String()
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("serve with a symlinked link file: %v\n%s%s", err, out, errOut)
	}
	if _, err := os.Lstat(leak); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("serve wrote through the symbolic link: %v", err)
	}
	if serveLogin.MatchString(out + errOut) {
		t.Errorf("serve printed its login link: %q", out+errOut)
	}
}

// On a terminal serve prints the link, as before, and writes no link file.
func TestServePrintsTheLinkOnATerminal(t *testing.T) {
	data, home := t.TempDir(), t.TempDir()
	p := ptytest.Open(t)
	slave, err := p.OpenSlave()
	if err != nil {
		t.Fatal(err)
	}
	_, _ = serveWith(t, data, home, slave)
	slave.Close()
	p.WaitFor(t, "Ctrl-C stops the server", 20*time.Second)
	if !serveLogin.MatchString(p.Output()) {
		t.Errorf("serve printed no login link on its terminal: %q", p.Output())
	}
	if links, _ := filepath.Glob(filepath.Join(data, "*.link")); len(links) != 0 {
		t.Errorf("serve on a terminal wrote %v", links)
	}
}
