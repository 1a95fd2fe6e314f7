package web

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// The browser tests drive a real Chromium (Debian's chromium package, which
// scripts/test installs) with chromedp. Without one they skip, except under
// CI=true, where they fail.

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found (chromium, chromium-browser, google-chrome): scripts/test installs Debian's chromium")
	}
	t.Skip("skipping the browser test: Chromium is not installed (apt-get install chromium)")
	return ""
}

// artifactDir is where screenshots are kept: $WEB_TEST_ARTIFACTS, else
// a directory under the system's temp dir. The path is logged.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("WEB_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "custom-agent-web-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts headless Chromium; its context ends with the test.
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.WindowSize(width, height),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// live serves a log on a real loopback port, as serve does.
type live struct {
	base string // the UI host, for the browser: http://LABEL.localhost:PORT
	api  string // for Go clients with the script token: http://127.0.0.1:PORT
	srv  *Server
	stop func()
}

func serveLog(t testing.TB, log *sqlitestore.Store, inbox Inbox) *live {
	return serveLogPoll(t, log, inbox, 50*time.Millisecond)
}

func serveLogPoll(t testing.TB, log *sqlitestore.Store, inbox Inbox, poll time.Duration) *live {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	var in Inbox = log
	if inbox != nil {
		in = inbox
	}
	s, err := New(Options{Log: log, Inbox: in, Token: testToken, ScriptToken: testScriptToken, Poll: poll,
		UIHost: testLabel + ".localhost:" + port, Hosts: []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs := httptest.NewUnstartedServer(s.Handler())
	hs.Config = HTTPServer(ctx, s.Handler())
	hs.Listener.Close()
	hs.Listener = LimitListener(ln)
	hs.Start()
	go func() { _ = s.Run(ctx) }()
	l := &live{base: "http://" + testLabel + ".localhost:" + port, api: "http://127.0.0.1:" + port, srv: s, stop: func() { cancel(); hs.CloseClientConnections(); hs.Close() }}
	t.Cleanup(l.stop)
	return l
}

func (l *live) login() chromedp.Action {
	return chromedp.Navigate(l.base + "/?token=" + testToken)
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var buf []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&buf, 100)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(artifactDir(t), name)
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

func TestBrowserRiskLevelsHaveTheirColourAndWords(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	ctx := browser(t, 1000, 900)
	levels := []struct {
		level risk.Level
		bg    string
	}{
		{risk.Read, "rgb(26, 127, 55)"},
		{risk.Write, "rgb(234, 197, 79)"},
		{risk.Execute, "rgb(188, 76, 0)"},
		{risk.Network, "rgb(130, 80, 223)"},
		{risk.Credential, "rgb(207, 34, 46)"},
		{risk.Destructive, "rgb(164, 14, 38)"},
	}
	if err := chromedp.Run(ctx, l.login()); err != nil {
		t.Fatal(err)
	}
	for i, c := range levels {
		e := appendEvent(t, f.log, "sess-R", askPayload(fmt.Sprintf("tc_r%d", i), "shell", c.level, `{"command":"true"}`))
		var bg, word, words string
		err := chromedp.Run(ctx,
			chromedp.Navigate(fmt.Sprintf("%s/session/sess-R/ask/%d", l.base, e.Seq)),
			chromedp.WaitVisible("#risk .risk", chromedp.ByQuery),
			chromedp.Evaluate(`getComputedStyle(document.querySelector("#risk .risk")).backgroundColor`, &bg),
			chromedp.Text("#risk .risk", &word, chromedp.ByQuery),
			chromedp.Text("#risk .risk-words", &words, chromedp.ByQuery),
		)
		if err != nil {
			t.Fatalf("%s: %v", c.level, err)
		}
		if bg != c.bg || word != strings.ToUpper(c.level.String()) || words != riskWordsFor(c.level) {
			t.Errorf("%s: background %s, word %q, words %q; want %s, %q, %q", c.level, bg, word, words, c.bg, strings.ToUpper(c.level.String()), riskWordsFor(c.level))
		}
		screenshot(t, ctx, "risk-"+c.level.String()+".png")
	}
}

func riskWordsFor(l risk.Level) string { return funcs["riskWords"].(func(risk.Level) string)(l) }

func TestBrowserHostileTextStaysText(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	ctx := browser(t, 1000, 900)
	payload := `<script>window.__xss=1</script><img src=x onerror="window.__xss=2"> <img src="http://evil.example/p.png"> ![m](http://evil.example/m.png) <a href="javascript:window.__xss=3">x</a>`
	args := fmt.Sprintf(`{"command":%q}`, payload)
	startSession(t, f.log, "sess-X")
	appendEvent(t, f.log, "sess-X", modelText(payload))
	e := appendEvent(t, f.log, "sess-X", askPayload("tc_x", "shell", risk.Execute, args))
	appendEvent(t, f.log, "sess-X", toolOutput("tc_x", payload))
	for _, page := range []string{fmt.Sprintf("/session/sess-X/ask/%d", e.Seq), "/session/sess-X"} {
		var xss, imgs, anchors int
		var text string
		err := chromedp.Run(ctx, l.login(),
			chromedp.Navigate(l.base+page),
			chromedp.WaitReady("body", chromedp.ByQuery),
			chromedp.Sleep(700*time.Millisecond), // the timeline arrives over SSE
			chromedp.Evaluate(`window.__xss || 0`, &xss),
			chromedp.Evaluate(`document.images.length`, &imgs),
			chromedp.Evaluate(`Array.from(document.querySelectorAll("a")).filter(a => !a.href.startsWith(location.origin)).length`, &anchors),
			chromedp.Evaluate(`document.body.innerText`, &text),
		)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		if xss != 0 || imgs != 0 || anchors != 0 {
			t.Errorf("%s: script ran (%d), %d images, %d foreign links", page, xss, imgs, anchors)
		}
		if !strings.Contains(text, "<script>window.__xss=1</script>") {
			t.Errorf("%s does not show the payload as text", page)
		}
	}
	screenshot(t, ctx, "hostile-timeline.png")
}

func TestBrowserPhoneWidth(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	ctx := browser(t, 390, 844)
	var overflow bool
	var visible bool
	err := chromedp.Run(ctx, chromedp.EmulateViewport(390, 844), l.login(),
		chromedp.Navigate(fmt.Sprintf("%s/session/sess-D/ask/%d", l.base, f.seq["sess-D"])),
		chromedp.WaitVisible("button.deny", chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow),
		chromedp.Evaluate(`(() => { const r = document.querySelector("button.deny").getBoundingClientRect(); return r.width >= 44 && r.right <= window.innerWidth; })()`, &visible),
	)
	if err != nil {
		t.Fatal(err)
	}
	if overflow || !visible {
		t.Errorf("at 390 px: the page scrolls sideways (%v) or the deny button is not fully usable (%v)", overflow, !visible)
	}
	screenshot(t, ctx, "phone-390-dialog.png")
	if err := chromedp.Run(ctx, chromedp.Navigate(l.base+"/"), chromedp.WaitVisible("table", chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow)); err != nil {
		t.Fatal(err)
	}
	if overflow {
		t.Error("at 390 px the sessions page scrolls sideways")
	}
	screenshot(t, ctx, "phone-390-sessions.png")
}

// TestBrowserAllowWaitsAMoment: an allow answer counts only once the
// dialog has been visible for a moment (a click meant for another page, a
// popup opened under the pointer, never allows a call), and a lost focus
// disarms it again. Deny is never delayed.
func TestBrowserAllowWaitsAMoment(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	ctx := browser(t, 1000, 900)
	startSession(t, f.log, "sess-W")
	seq := appendEvent(t, f.log, "sess-W", askPayload("tc_w", "shell", risk.Execute, `{"command":"make"}`)).Seq
	var armedAtOnce bool
	err := chromedp.Run(ctx, l.login(),
		chromedp.Navigate(fmt.Sprintf("%s/session/sess-W/ask/%d", l.base, seq)),
		chromedp.WaitVisible(`button[data-option="allow_once"]`, chromedp.ByQuery),
		// The click a page opened under the pointer would get.
		chromedp.Evaluate(`(() => { const b = document.querySelector('button[data-option="allow_once"]'); const armed = b.hasAttribute("data-armed"); b.click(); return armed; })()`, &armedAtOnce),
		chromedp.Sleep(300*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	if armedAtOnce {
		t.Fatal("the allow button was armed as soon as the dialog showed")
	}
	if n := f.inbox.count(); n != 0 {
		t.Fatalf("a click on the unarmed allow button answered the question (%d offers)", n)
	}
	// A lost focus disarms it.
	var armedAfterBlur bool
	err = chromedp.Run(ctx,
		chromedp.WaitVisible(`button[data-option="allow_once"][data-armed]`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { window.dispatchEvent(new Event("blur")); return document.querySelector('button[data-option="allow_once"]').hasAttribute("data-armed"); })()`, &armedAfterBlur),
	)
	if err != nil {
		t.Fatal(err)
	}
	if armedAfterBlur {
		t.Error("the allow button stayed armed after the window lost the focus")
	}
	// Back in focus, after the moment, the same click answers.
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`window.dispatchEvent(new Event("focus"))`, nil),
		chromedp.WaitVisible(`button[data-option="allow_once"][data-armed]`, chromedp.ByQuery),
		chromedp.Click(`button[data-option="allow_once"]`, chromedp.ByQuery),
		waitResult(ctx, "recorded"),
	)
	if err != nil {
		t.Fatal(err)
	}
	f.inbox.mu.Lock()
	offers := append([]Answer(nil), f.inbox.offers...)
	f.inbox.mu.Unlock()
	if len(offers) != 1 || offers[0].RequestSeq != seq || offers[0].Option != "allow_once" {
		t.Fatalf("the armed click did not answer once: %+v", offers)
	}
}
