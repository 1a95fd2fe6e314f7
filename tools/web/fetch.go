package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/custom-agent/custom-agent/permission/netrisk"
	"github.com/custom-agent/custom-agent/tool"
)

// Defaults of the HTTP tools.
const (
	ConnectTimeout = 10 * time.Second // resolving, connecting and the TLS handshake
	TotalTimeout   = 30 * time.Second // the whole request, body included
	MaxBody        = 5 << 20          // bytes of body read; the rest is cut
)

// options are the knobs tests turn; the zero value means the defaults.
type options struct {
	connectTimeout time.Duration
	totalTimeout   time.Duration
	maxBody        int64
	resolver       *net.Resolver // nil: the system's
}

func (o options) withDefaults() options {
	if o.connectTimeout <= 0 {
		o.connectTimeout = ConnectTimeout
	}
	if o.totalTimeout <= 0 {
		o.totalTimeout = TotalTimeout
	}
	if o.maxBody <= 0 {
		o.maxBody = MaxBody
	}
	return o
}

// errTotalTimeout is the cause of a request's context when its total
// timeout passed, which tells it apart from the caller's cancellation.
var errTotalTimeout = errors.New("total timeout")

// fetcher makes the requests of both tools. It is safe for concurrent use.
type fetcher struct {
	opts   options
	client *http.Client
}

func newFetcher(o options) *fetcher {
	o = o.withDefaults()
	d := &net.Dialer{Timeout: o.connectTimeout, ControlContext: guard, Resolver: o.resolver}
	tr := &http.Transport{
		Proxy:                  nil, // the guard must see the real peer
		DialContext:            d.DialContext,
		TLSHandshakeTimeout:    o.connectTimeout,
		ForceAttemptHTTP2:      true,
		DisableKeepAlives:      true, // nothing lingers between calls
		MaxResponseHeaderBytes: 1 << 20,
	}
	return &fetcher{opts: o, client: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// summary is Result.Summary of both tools.
type summary struct {
	Status    int    `json:"status"`
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated"`
	Location  string `json:"location,omitempty"`
}

// fetch makes one request and writes the response to out.
func (f *fetcher) fetch(ctx context.Context, name, method string, call tool.Call, body *string, out tool.Output) (tool.Result, error) {
	rawURL := call.String("url")
	if p, err := url.Parse(rawURL); err == nil && p.Scheme != "" && !strings.EqualFold(p.Scheme, "http") && !strings.EqualFold(p.Scheme, "https") {
		return tool.Result{}, fmt.Errorf("%s: only http and https URLs can be fetched, not %q", name, rawURL)
	}
	// The request goes to the URL's normal form, the one form the
	// PermissionEngine judged and matched rules against: what is judged is
	// what is sent. A URL without one (a path some server reads as going
	// up) is not sent at all.
	u, err := netrisk.NormalizeURL(rawURL)
	if err != nil {
		var ue *netrisk.URLError
		if errors.As(err, &ue) && ue.Best != nil {
			return tool.Result{}, fmt.Errorf("%s: %v, so servers may read it differently and it is not sent; write the path without it", name, err)
		}
		return tool.Result{}, fmt.Errorf("%s: %v", name, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, f.opts.totalTimeout, errTotalTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(*body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return tool.Result{}, fmt.Errorf("%s %s: %v", name, rawURL, err)
	}
	req.URL = u // exactly the normal form, not a re-parse of its text
	if err := setHeaders(req, call.Args["headers"], body); err != nil {
		return tool.Result{}, fmt.Errorf("%s: %v", name, err)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return tool.Result{}, f.failure(ctx, name, rawURL, err)
	}
	defer resp.Body.Close()

	if err := writeHead(out.Stdout, resp); err != nil {
		return tool.Result{}, err
	}
	sum := summary{Status: resp.StatusCode}
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		to, err := u.Parse(loc)
		if err != nil {
			return tool.Result{}, fmt.Errorf("%s %s: the server redirects to %q, which is not a URL", name, rawURL, loc)
		}
		sum.Location = to.String()
		if _, err := fmt.Fprintln(out.Stdout, followHint(method, resp.StatusCode, sum.Location)); err != nil {
			return tool.Result{}, err
		}
	} else {
		sum.Bytes, sum.Truncated, err = f.writeBody(out.Stdout, resp)
		if err != nil {
			return tool.Result{}, f.failure(ctx, name, rawURL, fmt.Errorf("reading the body: %w", err))
		}
	}
	js, err := json.Marshal(sum)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Summary: js}, nil
}

// followHint tells the model how to follow a redirect: as a new call,
// judged again by the engine.
func followHint(method string, status int, to string) string {
	if method == http.MethodPost && (status == http.StatusTemporaryRedirect || status == http.StatusPermanentRedirect) {
		return "the server redirects to " + to + "; call http_post on that URL with the same body to follow it (it is judged again as a new request)"
	}
	return "the server redirects to " + to + "; call http_get on that URL to follow it (it is judged again as a new request)"
}

// setHeaders copies the headers argument (string values, as the schema
// requires) onto req, and gives a POST a Content-Type when it has none.
func setHeaders(req *http.Request, arg any, body *string) error {
	headers, _ := arg.(map[string]any)
	for k, v := range headers {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("header %q must be a string", k)
		}
		if strings.EqualFold(k, "Host") {
			return errors.New("the Host header cannot be set: it comes from the url")
		}
		req.Header.Set(k, s)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		ct := "text/plain; charset=utf-8"
		if t := strings.TrimSpace(*body); json.Valid([]byte(t)) && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	return nil
}

// writeHead writes the status line, the headers worth showing and a blank
// line.
func writeHead(w io.Writer, resp *http.Response) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", resp.Proto, resp.Status)
	for _, k := range []string{"Content-Type", "Content-Length", "Location"} {
		if v := resp.Header.Get(k); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		} else if k == "Content-Length" && resp.ContentLength >= 0 {
			fmt.Fprintf(&b, "%s: %d\n", k, resp.ContentLength)
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeBody streams a text body to w, or counts a binary one and writes
// "<N bytes of TYPE>". It reads at most maxBody bytes.
func (f *fetcher) writeBody(w io.Writer, resp *http.Response) (n int64, truncated bool, err error) {
	br := bufio.NewReaderSize(resp.Body, sniffLen)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return 0, false, err
	}
	ct := resp.Header.Get("Content-Type")
	text := isText(ct, head)
	dst := w
	if !text {
		dst = io.Discard
	}
	n, err = io.Copy(dst, io.LimitReader(br, f.opts.maxBody))
	if err != nil {
		return n, false, err
	}
	if n == f.opts.maxBody {
		var one [1]byte
		m, _ := io.ReadFull(br, one[:])
		truncated = m > 0
	}
	cut := ""
	if truncated {
		cut = ", truncated at " + size(f.opts.maxBody)
	}
	switch {
	case !text:
		if ct == "" {
			ct = "unknown type"
		}
		_, err = fmt.Fprintf(w, "<%d bytes of %s%s>\n", n, ct, cut)
	case truncated:
		_, err = fmt.Fprintf(w, "\n[body truncated at %s]\n", size(f.opts.maxBody))
	}
	return n, truncated, err
}

// failure turns a transport error into one the model can act on.
func (f *fetcher) failure(ctx context.Context, name, rawURL string, err error) error {
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("%s %s: %v; such addresses are never fetched", name, rawURL, refused)
	case context.Cause(ctx) == errTotalTimeout:
		return fmt.Errorf("%s %s: timed out after %s; the server is slow or unreachable, try again later or another URL", name, rawURL, f.opts.totalTimeout)
	case ctx.Err() != nil:
		return fmt.Errorf("%s %s: %w", name, rawURL, ctx.Err())
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s %s failed: %v; check the URL and that the host is reachable", name, rawURL, err)
}

func size(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
