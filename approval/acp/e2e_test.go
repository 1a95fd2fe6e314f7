package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds custom-agent once per test process, with the race
// detector when the tests run under it.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "custom-agent-acp-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "custom-agent")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "../../cmd/custom-agent")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building custom-agent: %v", buildErr)
	}
	return binPath
}

// TestE2EOfficialClient runs testdata/e2e/client.mjs: the official ACP
// TypeScript client (@agentclientprotocol/sdk, pinned in
// testdata/e2e/package-lock.json) drives `custom-agent acp --model
// script:FILE` through every scenario and validates each message against
// the JSON schema the SDK ships. scripts/test installs it (npm ci); without
// node or node_modules the test skips, except under CI=true, where it fails.
func TestE2EOfficialClient(t *testing.T) {
	dir := filepath.Join("testdata", "e2e")
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed (the e2e test runs the official ACP TypeScript client)"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		missing = "node_modules is not installed in approval/acp/testdata/e2e: run (cd approval/acp/testdata/e2e && npm ci --no-audit --no-fund), as scripts/test does"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s", missing)
		}
		t.Skip(missing)
	}
	bin := binary(t)
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", bin, work)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("node client.mjs:\n%s", out.String())
	if err != nil {
		t.Fatalf("the official client's scenarios failed: %v", err)
	}
	if !strings.Contains(out.String(), "\nPASS\n") {
		t.Fatal("client.mjs did not report PASS")
	}
}

// TestStdoutOnlyProtocol runs the binary with a tool that prints to stdout
// and stderr, malformed input and a session that logs: every byte on its
// stdout must belong to a JSON-RPC 2.0 message, one a line.
func TestStdoutOnlyProtocol(t *testing.T) {
	bin := binary(t)
	e := newEnv(t)
	script := e.script(`{"text":"Printing.","toolCalls":[{"id":"tc_1","name":"shell","args":{"command":"touch printed.txt; echo to-stdout; echo to-stderr >&2"}}]}`, finalOK)
	cmd := exec.Command(bin, "acp", "--data-dir", e.dataDir, "--model", "script:"+script, "--log-level", "debug")
	cmd.Env = append(os.Environ(), "HOME="+e.home, "XDG_CONFIG_HOME="+filepath.Join(e.home, ".config"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testenv.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	var raw bytes.Buffer
	go func() {
		defer close(lines)
		r := bufio.NewReader(stdoutR)
		for {
			l, err := r.ReadString('\n')
			raw.WriteString(l)
			if l != "" {
				lines <- l
			}
			if err != nil {
				return
			}
		}
	}()
	send := func(s string) {
		if _, err := stdin.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	var seen []map[string]any
	wait := func(pred func(map[string]any) bool) map[string]any {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed; stderr:\n%s", stderr.String())
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" || !strings.HasSuffix(l, "\n") {
					t.Fatalf("a line on stdout is not a JSON-RPC 2.0 message: %q", l)
				}
				seen = append(seen, m)
				if pred(m) {
					return m
				}
			case <-timeout:
				t.Fatalf("timed out; stderr:\n%s", stderr.String())
			}
		}
	}
	hasID := func(id float64) func(map[string]any) bool {
		return func(m map[string]any) bool { v, ok := m["id"].(float64); return ok && v == id && m["method"] == nil }
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	wait(hasID(1))
	send(`not json at all`)
	wait(func(m map[string]any) bool { return m["error"] != nil })
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + e.cwd + `","mcpServers":[]}}`)
	r := wait(hasID(2))
	sid := r["result"].(map[string]any)["sessionId"].(string)
	send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"print"}]}}`)
	req := wait(func(m map[string]any) bool { return m["method"] == "session/request_permission" })
	reqID, _ := json.Marshal(req["id"])
	send(`{"jsonrpc":"2.0","id":` + string(reqID) + `,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`)
	wait(hasID(3))
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
	}
	for range lines {
	}
	// The tool's output reaches the client inside a tool_call_update only.
	if !strings.Contains(raw.String(), `to-stdout\n`) {
		t.Errorf("the tool's output is not in any message: %s", raw.String())
	}
	if !strings.Contains(stderr.String(), "level=") {
		t.Errorf("no log on stderr: %q", stderr.String())
	}
	for _, l := range strings.SplitAfter(raw.String(), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["jsonrpc"] != "2.0" {
			t.Errorf("a byte on stdout is not protocol: %q", l)
		}
	}
}
