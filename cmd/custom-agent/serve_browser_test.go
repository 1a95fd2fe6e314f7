package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// serveChromium starts headless Chromium (Debian's chromium package, which
// scripts/test installs); without one the test skips, except under
// CI=true, where it fails (as web's browser tests do).
func serveChromium(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium found (chromium, chromium-browser, google-chrome): scripts/test installs Debian's chromium")
		}
		t.Skip("skipping the browser test: Chromium is not installed (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.WindowSize(1200, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// TestServeTurnInChromium: in a real browser, a person types a prompt on
// the sessions page and starts it, opens the question from the session's
// timeline and allows it: the tool runs in serve's process and the turn
// completes. Then they continue the session, and Cancel ends that turn
// cancelled, its question denied by system.
func TestServeTurnInChromium(t *testing.T) {
	testenv.NeedProgram(t, "touch")
	ctx := serveChromium(t)
	data, cwd, home := t.TempDir(), t.TempDir(), t.TempDir()
	script := writeScript(t, `{"text":"touching","toolCalls":[{"id":"t1","name":"shell","args":{"command":"touch ran.txt"}}]}
{"text":"done"}
{"text":"again","toolCalls":[{"id":"t2","name":"shell","args":{"command":"touch second.txt"}}]}
{"text":"never"}
`)
	p := startServe(t, data, home, "--model", "script:"+script, "--cwd", cwd, "--approval-timeout", "60s")
	var path, result string
	err := chromedp.Run(ctx,
		chromedp.Navigate(p.login),
		chromedp.WaitVisible("#turn-prompt", chromedp.ByQuery),
		chromedp.SendKeys("#turn-prompt", "touch a file", chromedp.ByQuery),
		chromedp.Click("#turn-go", chromedp.ByQuery),
		// The page moves to the new session; its timeline links the
		// question.
		chromedp.WaitVisible("#timeline a.asklink", chromedp.ByQuery),
		chromedp.Evaluate(`location.pathname`, &path),
		chromedp.Click("#timeline a.asklink", chromedp.ByQuery),
		chromedp.WaitVisible(`button[data-option="allow_once"][data-armed]`, chromedp.ByQuery),
		chromedp.Click(`button[data-option="allow_once"]`, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("result").textContent.includes("recorded")`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Text("#result", &result, chromedp.ByQuery),
	)
	if err != nil {
		var dbg string
		_ = chromedp.Run(ctx, chromedp.Evaluate(`location.href + " | " + document.body.innerText`, &dbg))
		t.Fatalf("in the browser: %v\npage: %s\nserve's stderr:\n%s", err, dbg, p.stderr.String())
	}
	session := strings.TrimPrefix(path, "/session/")
	if session == path || session == "" {
		t.Fatalf("the page went to %q, not a session", path)
	}
	evs := p.await(t, session, "turn.completed", completed(1))
	if _, err := os.Stat(filepath.Join(cwd, "ran.txt")); err != nil {
		t.Fatalf("the tool did not run after the allow in the browser (%q): %v", result, err)
	}
	if done := payloads[event.TurnCompletedPayload](t, evs, event.TurnCompleted); done[0].StopReason != event.StopFinal {
		t.Errorf("turn.completed %+v", done[0])
	}
	// Continue the session from its page, then cancel that turn while
	// its question waits.
	var msg string
	var shot []byte
	err = chromedp.Run(ctx,
		chromedp.Navigate(p.ui+path),
		chromedp.WaitVisible("#turn-prompt", chromedp.ByQuery),
		chromedp.SendKeys("#turn-prompt", "touch another", chromedp.ByQuery),
		chromedp.Click("#turn-go", chromedp.ByQuery),
		chromedp.WaitVisible("#turn-cancel", chromedp.ByQuery),
		// Cancel once the question is on the timeline.
		chromedp.Poll(`document.querySelectorAll("#timeline a.asklink").length === 2`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.FullScreenshot(&shot, 100),
		chromedp.Click("#turn-cancel", chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("turn-result").textContent.includes("cancelled")`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.WaitNotVisible("#running-here", chromedp.ByQuery),
		chromedp.Text("#turn-result", &msg, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("continue and cancel in the browser: %v\nserve's stderr:\n%s", err, p.stderr.String())
	}
	keepScreenshot(t, "serve-turn-running.png", shot)
	evs = p.await(t, session, "the second turn.completed", completed(2))
	done := payloads[event.TurnCompletedPayload](t, evs, event.TurnCompleted)
	if done[1].StopReason != event.StopCancelled {
		t.Errorf("the cancelled turn: %+v (the page said %q)", done[1], msg)
	}
	resolved := payloads[event.PermissionResolvedPayload](t, evs, event.PermissionResolved)
	if n := len(resolved); n != 2 || resolved[1].Actor != event.ActorSystem || resolved[1].Decision != "deny" {
		t.Errorf("permission.resolved %+v: want the second denied by system", resolved)
	}
	if _, err := os.Stat(filepath.Join(cwd, "second.txt")); err == nil {
		t.Error("the cancelled turn's tool ran")
	}
}

// keepScreenshot writes a screenshot as a test artifact: under
// $WEB_TEST_ARTIFACTS, else the system's temp dir (as web's browser tests).
func keepScreenshot(t *testing.T, name string, b []byte) {
	t.Helper()
	dir := os.Getenv("WEB_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "custom-agent-web-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}
