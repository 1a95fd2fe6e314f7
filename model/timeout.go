package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultTimeout is how long a model call waits for the server's first
// byte, and then between two pieces of its answer, before it fails.
const DefaultTimeout = 120 * time.Second

// TimeoutEnv names the environment variable that sets the timeout (a Go
// duration such as 90s or 5m); the run command's --model-timeout wins.
const TimeoutEnv = "CUSTOM_AGENT_MODEL_TIMEOUT"

// TimeoutFromEnv returns the timeout $CUSTOM_AGENT_MODEL_TIMEOUT sets, or
// DefaultTimeout when it is unset; an error says what is wrong with it.
func TimeoutFromEnv(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv(TimeoutEnv))
	if v == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive duration such as 90s or 5m", TimeoutEnv, v)
	}
	return d, nil
}

// ErrTimeout is wrapped by the error of a model call the server stopped
// answering.
var ErrTimeout = errors.New("the model server did not answer in time")

// TimeoutError says which wait ran out.
type TimeoutError struct {
	BaseURL string
	After   time.Duration
	// FirstByte is set when nothing at all came back; else the answer
	// stalled between two pieces.
	FirstByte bool
}

func (e *TimeoutError) Error() string {
	what := "sent nothing back"
	if !e.FirstByte {
		what = "stopped sending its answer"
	}
	return fmt.Sprintf("the model server at %s %s for %s (the model timeout; set it with --model-timeout or %s)", e.BaseURL, what, e.After, TimeoutEnv)
}

func (e *TimeoutError) Unwrap() error { return ErrTimeout }

// Refused explains a connection the model server refused, or returns nil
// when err is not one.
func Refused(baseURL string, err error) error {
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return nil
	}
	return &refusedError{baseURL: baseURL, err: err}
}

// refusedError names the server once; the transport's own text (which
// repeats the URL with the request's path) stays behind Unwrap.
type refusedError struct {
	baseURL string
	err     error
}

func (e *refusedError) Error() string {
	return "connection refused: is the server at " + e.baseURL + " running?"
}

func (e *refusedError) Unwrap() error { return e.err }

// watchKey carries a call's watchdog in its request context, so that the
// transport can report the bytes it receives.
type watchKey struct{}

// watchdog cancels a call's context when the server is silent for longer
// than the timeout: before the response's first byte, or between two
// reads of its body.
type watchdog struct {
	mu        sync.Mutex
	timer     *time.Timer
	after     time.Duration
	firstByte bool // nothing has been received yet
	fired     bool
	attempts  atomic.Int32 // HTTP requests made (retries included)
}

func (w *watchdog) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.fired {
		w.firstByte = false
		w.timer.Reset(w.after)
	}
}

// Watch starts a watchdog over one model call. The returned context is
// cancelled when the server is silent for d; the call's HTTP client must
// use WatchedTransport for received bytes to count. timedOut reports, after
// the call, whether the watchdog ended it and how; stop releases it.
func Watch(ctx context.Context, d time.Duration, baseURL string) (watched context.Context, timedOut func() error, stop func()) {
	if d <= 0 {
		return ctx, func() error { return nil }, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &watchdog{after: d, firstByte: true}
	w.timer = time.AfterFunc(d, func() {
		w.mu.Lock()
		w.fired = true
		w.mu.Unlock()
		cancel()
	})
	timedOut = func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.fired {
			return nil
		}
		return &TimeoutError{BaseURL: baseURL, After: d, FirstByte: w.firstByte}
	}
	stop = func() {
		w.timer.Stop()
		cancel()
	}
	return context.WithValue(ctx, watchKey{}, w), timedOut, stop
}

// WatchedTransport wraps base (nil: http.DefaultTransport) so that the
// response headers and every body read of a call under Watch count as
// the server answering.
func WatchedTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return watched{base}
}

type watched struct{ base http.RoundTripper }

func (t watched) RoundTrip(req *http.Request) (*http.Response, error) {
	w, _ := req.Context().Value(watchKey{}).(*watchdog)
	if w != nil {
		w.attempts.Add(1)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || w == nil {
		return resp, err
	}
	w.touch()
	resp.Body = &watchedBody{ReadCloser: resp.Body, w: w}
	return resp, nil
}

type watchedBody struct {
	io.ReadCloser
	w *watchdog
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.touch()
	}
	return n, err
}

// TimeoutOrDefault is $CUSTOM_AGENT_MODEL_TIMEOUT, or DefaultTimeout when
// it is unset or not a duration (the run command reports a bad value).
func TimeoutOrDefault(getenv func(string) string) time.Duration {
	d, err := TimeoutFromEnv(getenv)
	if err != nil {
		return DefaultTimeout
	}
	return d
}

// WatchedClient returns a client like c (nil: a default one) whose
// responses feed Watch: every header and chunk read counts as the server
// answering.
func WatchedClient(c *http.Client) *http.Client {
	out := &http.Client{}
	if c != nil {
		cp := *c
		out = &cp
	}
	out.Transport = WatchedTransport(out.Transport)
	return out
}

// Attempts returns how many HTTP requests the call under Watch (ctx) has
// made so far: more than one when the SDK retried. 0 when ctx is not
// watched.
func Attempts(ctx context.Context) int {
	if w, ok := ctx.Value(watchKey{}).(*watchdog); ok {
		return int(w.attempts.Load())
	}
	return 0
}

// RetriedNote is " (after N attempts)" when the call was retried, for the
// end of an error message; "" otherwise.
func RetriedNote(ctx context.Context) string {
	if n := Attempts(ctx); n > 1 {
		return fmt.Sprintf(" (after %d attempts)", n)
	}
	return ""
}
