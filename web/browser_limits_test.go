package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// newTab opens a tab that stays open until the test ends (a timeout on the
// first Run of a tab's context would close the tab with it).
func newTab(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	tctx, _ := chromedp.NewContext(ctx)
	if err := chromedp.Run(tctx); err != nil {
		t.Fatal(err)
	}
	return tctx
}

// waitPage waits until the loader has put the page named page (its
// body's data-page) in place.
func waitPage(page string) chromedp.Action {
	return chromedp.WaitReady(`body[data-page="`+page+`"]`, chromedp.ByQuery)
}

// tabKey is the tab key the page in ctx keeps.
func tabKey(t *testing.T, ctx context.Context) string {
	t.Helper()
	var key string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`sessionStorage.getItem("custom-agent-key") || ""`, &key)); err != nil || len(key) != 64 {
		t.Fatalf("the tab key: %q, %v", key, err)
	}
	return key
}

func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// Finding 1 of the web review, in real Chromium: after the UI is opened,
// pages of another server on another port of 127.0.0.1 and localhost (any
// local user's, or a preview server an agent's tool started) get no cookie
// of the UI.
func TestBrowserCookieReachesNoOtherPort(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	var mu sync.Mutex
	var cookies []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cookies = append(cookies, r.Header.Get("Cookie"))
		mu.Unlock()
		// and it tries to toss a cookie of the UI's name
		w.Header().Add("Set-Cookie", CookieName+"=junk; Path=/api")
		fmt.Fprint(w, "<!doctype html><p>preview</p>")
	})}
	go func() { _ = other.Serve(ln) }()
	t.Cleanup(func() { other.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx := browser(t, 800, 600)
	var status int
	probe := `fetch("/api/answer",{method:"POST",credentials:"same-origin",headers:{"Content-Type":"application/json","X-Custom-Agent":"1","X-Custom-Agent-Key":sessionStorage.getItem("custom-agent-key")},body:"{}"}).then(r=>r.status)`
	err = chromedp.Run(ctx, l.login(), waitPage("sessions"),
		chromedp.Navigate("http://127.0.0.1:"+port+"/"), chromedp.WaitReady("body"),
		chromedp.Navigate("http://localhost:"+port+"/x"), chromedp.WaitReady("body"),
		chromedp.Navigate(l.base+"/queue"), waitPage("queue"),
		chromedp.Evaluate(probe, &status, awaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cookies) < 2 {
		t.Fatalf("the other server saw %d requests, want 2", len(cookies))
	}
	for _, c := range cookies {
		if strings.Contains(c, CookieName) {
			t.Errorf("the other port got the UI's cookie: %q", c)
		}
	}
	// The UI still works (the tossed cookie is another host's): the empty
	// answer is refused as a bad body, not as unauthenticated.
	if status != http.StatusBadRequest {
		t.Errorf("an answer from the UI after the other port's visit: %d, want 400", status)
	}
}

// Finding 8 of the web review: every page held its own queue stream, and a
// browser opens at most 6 connections to one host, so with six tabs open the
// next page and every answer waited forever. Tabs share one stream now.
func TestBrowserManyTabsLeaveConnectionsFree(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	ctx := browser(t, 800, 600)
	if err := chromedp.Run(ctx, l.login(), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		tctx := newTab(t, ctx)
		c, cancel := context.WithTimeout(tctx, 15*time.Second)
		err := chromedp.Run(c, chromedp.Navigate(l.base+"/queue"),
			chromedp.Poll(`(document.getElementById("queue-count") || {}).textContent === "3"`, nil, chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
		cancel()
		if err != nil {
			t.Fatalf("tab %d did not load its queue (the connections are used up?): %v", i+2, err)
		}
	}
	key := tabKey(t, ctx)
	tctx, _ := chromedp.NewContext(ctx)
	if err := chromedp.Run(tctx, chromedp.Navigate(l.base+"/assets/app.css")); err != nil {
		t.Fatal(err)
	}
	c2, cancel := context.WithTimeout(tctx, 10*time.Second)
	defer cancel()
	var status int
	probe := `fetch("/queue",{credentials:"same-origin",headers:{"X-Custom-Agent-Key":"` + key + `"}}).then(r=>r.status)`
	if err := chromedp.Run(c2, chromedp.Evaluate(probe, &status, awaitPromise)); err != nil || status != http.StatusOK {
		t.Fatalf("a page fetched from a ninth tab with eight open: %d, %v; want 200", status, err)
	}
}

// setHidden makes the page believe its tab was hidden or shown again, as a
// browser says when the person switches tabs (headless tabs never are).
func setHidden(hidden bool) chromedp.Action {
	state := "visible"
	if hidden {
		state = "hidden"
	}
	return chromedp.Evaluate(`Object.defineProperty(document, "visibilityState", {get: () => "`+state+`", configurable: true});
document.dispatchEvent(new Event("visibilitychange")); true`, nil)
}

// Finding 8 for timelines: a session page holds a stream of its own; a
// hidden tab closes it and, shown again, resumes after the last event it
// showed, so tabs in the background use up no connection.
func TestBrowserHiddenTimelinesLeaveConnectionsFree(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	ctx := browser(t, 800, 600)
	if err := chromedp.Run(ctx, l.login(), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	var tabs []context.Context
	for i := range 7 {
		tctx := newTab(t, ctx)
		c, cancel := context.WithTimeout(tctx, 15*time.Second)
		err := chromedp.Run(c, chromedp.Navigate(l.base+"/session/sess-A"),
			chromedp.Poll(`document.querySelectorAll("#timeline li.event").length >= 3 && document.getElementById("stream-status").textContent.startsWith("live")`, nil, chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)),
			setHidden(true),
			chromedp.Poll(`document.getElementById("stream-status").textContent.startsWith("paused")`, nil, chromedp.WithPollingTimeout(5*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
		cancel()
		if err != nil {
			t.Fatalf("session tab %d: %v", i+2, err)
		}
		tabs = append(tabs, tctx)
	}
	key := tabKey(t, ctx)
	tctx := newTab(t, ctx)
	c2, cancel := context.WithTimeout(tctx, 10*time.Second)
	defer cancel()
	var status int
	if err := chromedp.Run(c2, chromedp.Navigate(l.base+"/assets/app.css"),
		chromedp.Evaluate(`fetch("/queue",{credentials:"same-origin",headers:{"X-Custom-Agent-Key":"`+key+`"}}).then(r=>r.status)`, &status, awaitPromise)); err != nil || status != http.StatusOK {
		t.Fatalf("a page fetched with seven hidden session tabs: %d, %v; want 200", status, err)
	}
	// Shown again, a tab resumes after its last event: one new event, shown once.
	e := appendEvent(t, f.log, "sess-A", modelText("after the pause"))
	var n int
	c3, cancel3 := context.WithTimeout(tabs[0], 10*time.Second)
	defer cancel3()
	if err := chromedp.Run(c3, setHidden(false),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('#timeline li.event[data-seq="%d"]') !== null`, e.Seq), nil, chromedp.WithPollingTimeout(8*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)),
		chromedp.Evaluate(`document.querySelectorAll("#timeline li.event").length`, &n)); err != nil {
		var dbg string
		_ = chromedp.Run(tabs[0], chromedp.Evaluate(`document.getElementById("stream-status").textContent + " | " + Array.from(document.querySelectorAll("#timeline li.event")).map(e => e.dataset.seq).join(",") + " | " + document.visibilityState`, &dbg))
		t.Fatalf("%v (page: %s)", err, dbg)
	}
	if uint64(n) != e.Seq {
		t.Errorf("%d events shown after resuming, want %d (each once)", n, e.Seq)
	}
}
