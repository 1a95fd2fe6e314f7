// Package streamtest holds what the provider tests share: replaying SSE
// fixtures from a local server, sending a provider's requests for the real
// API host to that server, and pinning requests in golden files.
package streamtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/model"
)

// Collect gathers a stream until its end or its error.
func Collect(seq iter.Seq2[model.Chunk, error]) ([]model.Chunk, error) {
	var got []model.Chunk
	for c, err := range seq {
		if err != nil {
			return got, err
		}
		got = append(got, c)
	}
	return got, nil
}

// CheckErr checks err against a sentinel (nil for none) and a text it must
// contain; both empty means err must be nil.
func CheckErr(t *testing.T, err, target error, text string) {
	t.Helper()
	if target == nil && text == "" {
		if err != nil {
			t.Errorf("err = %v, want nil", err)
		}
		return
	}
	if err == nil {
		t.Errorf("err = nil, want %v %q", target, text)
		return
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("err = %v, want errors.Is %v", err, target)
	}
	if !strings.Contains(err.Error(), text) {
		t.Errorf("err = %q, want it to contain %q", err, text)
	}
}

// ReadEvents splits a fixture into its SSE events, each with its blank line.
func ReadEvents(t *testing.T, fixture string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for e := range strings.SplitAfterSeq(string(b), "\n\n") {
		if e != "" {
			events = append(events, e)
		}
	}
	return events
}

// ServeFixture writes a fixture one event at a time, flushing each, as a
// streaming server does.
func ServeFixture(t *testing.T, w http.ResponseWriter, fixture string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	for _, e := range ReadEvents(t, fixture) {
		if _, err := io.WriteString(w, e); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// SSEHandler serves fixture to a POST on path.
func SSEHandler(t *testing.T, path, fixture string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			t.Errorf("request %s %s, want POST %s", r.Method, r.URL.Path, path)
		}
		ServeFixture(t, w, fixture)
	}
}

// RedirectTo returns a client that sends every request to srvURL, so a
// provider configured for the real API host can be tested offline. The
// original host is kept in X-Original-Host.
func RedirectTo(t *testing.T, srvURL string) *http.Client {
	u, err := url.Parse(srvURL)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("X-Original-Host", r.URL.Host)
		r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Request is the part of a request the golden files pin down.
type Request struct {
	Method string            `json:"method"`
	Host   string            `json:"host,omitempty"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header"`
	Body   any               `json:"body"`
}

// Record reads a request and keeps the named headers.
func Record(t *testing.T, r *http.Request, headers ...string) Request {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Error(err)
	}
	var body any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Errorf("request body is not JSON: %v\n%s", err, b)
	}
	header := map[string]string{}
	for _, k := range headers {
		if v := r.Header.Get(k); v != "" {
			header[k] = v
		}
	}
	return Request{Method: r.Method, Host: r.Header.Get("X-Original-Host"), Path: r.URL.Path, Header: header, Body: body}
}

// Golden compares a request with the golden file at path, rewriting it
// first when update is set.
func Golden(t *testing.T, path string, got Request, update bool) {
	t.Helper()
	gotJSON, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	gotJSON = append(gotJSON, '\n')
	if update {
		if err := os.WriteFile(path, gotJSON, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantJSON, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want, gotAny any
	if err := json.Unmarshal(wantJSON, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(bytes.NewReader(gotJSON)).Decode(&gotAny); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, gotAny); diff != "" {
		t.Errorf("request differs from %s (-want +got):\n%s", path, diff)
	}
}
