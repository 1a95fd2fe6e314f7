package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/tool"
)

type outcome struct {
	stdout  string
	summary string
	err     error
}

func run(ctx context.Context, tl tool.Tool, args map[string]any) outcome {
	var stdout, stderr strings.Builder
	res, err := tl.Run(ctx, tool.Call{Args: args}, tool.Output{Stdout: &stdout, Stderr: &stderr})
	return outcome{stdout: stdout.String(), summary: string(res.Summary), err: err}
}

func TestGet(t *testing.T) {
	t.Parallel()
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Other", "hidden")
		io.WriteString(w, "hello\n")
	})
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.Header.Get("X-Token"))
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no sniffing by the server
		w.Write([]byte{0, 1, 2, 3})
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/followed", http.StatusFound)
	})
	mux.HandleFunc("/followed", func(w http.ResponseWriter, r *http.Request) { followed.Add(1) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "5000")
		io.WriteString(w, strings.Repeat("a", 5000))
	})
	mux.HandleFunc("/bigbin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Length", "5000")
		w.Write(make([]byte, 5000))
	})
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("b", 1024))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	get := &Get{f: newFetcher(options{maxBody: 1024})}

	tests := []struct {
		name        string
		path        string
		headers     map[string]any
		wantStdout  string
		wantSummary string
	}{
		{name: "text", path: "/text",
			wantStdout:  "HTTP/1.1 200 OK\nContent-Type: text/plain; charset=utf-8\nContent-Length: 6\n\nhello\n",
			wantSummary: `{"status":200,"bytes":6,"truncated":false}`},
		{name: "headers sent", path: "/headers", headers: map[string]any{"X-Token": "abc"},
			wantStdout:  "HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 3\n\nabc",
			wantSummary: `{"status":200,"bytes":3,"truncated":false}`},
		{name: "binary summarised", path: "/png",
			wantStdout:  "HTTP/1.1 200 OK\nContent-Type: image/png\nContent-Length: 16\n\n<16 bytes of image/png>\n",
			wantSummary: `{"status":200,"bytes":16,"truncated":false}`},
		{name: "untyped binary sniffed", path: "/untyped",
			wantStdout:  "HTTP/1.1 200 OK\nContent-Length: 4\n\n<4 bytes of unknown type>\n",
			wantSummary: `{"status":200,"bytes":4,"truncated":false}`},
		{name: "redirect not followed", path: "/redirect",
			wantStdout: "HTTP/1.1 302 Found\nContent-Type: text/html; charset=utf-8\nContent-Length: 32\nLocation: /followed\n\n" +
				"the server redirects to " + srv.URL + "/followed; call http_get on that URL to follow it (it is judged again as a new request)\n",
			wantSummary: `{"status":302,"bytes":0,"truncated":false,"location":"` + srv.URL + `/followed"}`},
		{name: "text cut at the cap", path: "/big",
			wantStdout:  "HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 5000\n\n" + strings.Repeat("a", 1024) + "\n[body truncated at 1024 bytes]\n",
			wantSummary: `{"status":200,"bytes":1024,"truncated":true}`},
		{name: "binary cut at the cap", path: "/bigbin",
			wantStdout:  "HTTP/1.1 200 OK\nContent-Type: application/zip\nContent-Length: 5000\n\n<1024 bytes of application/zip, truncated at 1024 bytes>\n",
			wantSummary: `{"status":200,"bytes":1024,"truncated":true}`},
		{name: "exactly the cap is not truncated", path: "/exact",
			wantStdout:  "HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 1024\n\n" + strings.Repeat("b", 1024),
			wantSummary: `{"status":200,"bytes":1024,"truncated":false}`},
		{name: "an error status is a completion", path: "/missing",
			wantStdout:  "HTTP/1.1 404 Not Found\nContent-Type: text/plain; charset=utf-8\nContent-Length: 19\n\n404 page not found\n",
			wantSummary: `{"status":404,"bytes":19,"truncated":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := map[string]any{"url": srv.URL + tt.path}
			if tt.headers != nil {
				args["headers"] = tt.headers
			}
			o := run(t.Context(), get, args)
			if o.err != nil {
				t.Fatalf("Run: %v", o.err)
			}
			if o.stdout != tt.wantStdout {
				t.Errorf("stdout:\n%q\nwant:\n%q", o.stdout, tt.wantStdout)
			}
			if o.summary != tt.wantSummary {
				t.Errorf("summary %s, want %s", o.summary, tt.wantSummary)
			}
		})
	}
	if n := followed.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

func TestPost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.Method+"|"+r.Header.Get("Content-Type")+"|"+r.Header.Get("X-Req")+"|"+string(body))
	}))
	t.Cleanup(srv.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	tests := []struct {
		name     string
		url      string
		body     string
		headers  map[string]any
		wantBody string
	}{
		{name: "JSON body", url: srv.URL, body: `{"a":1}`, headers: map[string]any{"X-Req": "yes"},
			wantBody: `POST|application/json|yes|{"a":1}`},
		{name: "text body", url: srv.URL, body: "plain words",
			wantBody: `POST|text/plain; charset=utf-8||plain words`},
		{name: "content type given", url: srv.URL, body: "a=1", headers: map[string]any{"Content-Type": "application/x-www-form-urlencoded"},
			wantBody: `POST|application/x-www-form-urlencoded||a=1`},
		{name: "307 keeps the method", url: redirect.URL, body: "x",
			wantBody: "call http_post on that URL with the same body to follow it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := map[string]any{"url": tt.url, "body": tt.body}
			if tt.headers != nil {
				args["headers"] = tt.headers
			}
			o := run(t.Context(), NewPost(), args)
			if o.err != nil {
				t.Fatalf("Run: %v", o.err)
			}
			if !strings.Contains(o.stdout, tt.wantBody) {
				t.Errorf("stdout %q lacks %q", o.stdout, tt.wantBody)
			}
		})
	}
}

func TestFetchErrors(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	slowBody := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "start")
		w.(http.Flusher).Flush()
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slowBody.Close)
	short := &Get{f: newFetcher(options{totalTimeout: 200 * time.Millisecond})}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name   string
		tool   tool.Tool
		ctx    context.Context
		args   map[string]any
		want   string
		wantIs error
	}{
		{name: "scheme", tool: NewGet(), args: map[string]any{"url": "file:///etc/passwd"}, want: "only http and https URLs"},
		{name: "no host", tool: NewGet(), args: map[string]any{"url": "http:///x"}, want: "names no host"},
		{name: "no single meaning", tool: NewGet(), args: map[string]any{"url": "http://127.0.0.1:1/a/..;/b"}, want: "servers may read it differently and it is not sent"},
		{name: "Host header", tool: NewGet(), args: map[string]any{"url": slow.URL, "headers": map[string]any{"host": "x"}}, want: "Host header cannot be set"},
		{name: "metadata address", tool: NewGet(), args: map[string]any{"url": "http://169.254.169.254/latest/meta-data/"},
			want: "http_get http://169.254.169.254/latest/meta-data/: refused to connect to 169.254.169.254: cloud metadata / link-local address"},
		{name: "link-local IPv6", tool: NewPost(), args: map[string]any{"url": "http://[fe80::1]:8080/", "body": ""},
			want: "refused to connect to fe80::1: cloud metadata / link-local address"},
		{name: "slow headers", tool: short, args: map[string]any{"url": slow.URL}, want: "timed out after 200ms"},
		{name: "slow body", tool: short, args: map[string]any{"url": slowBody.URL}, want: "timed out after 200ms"},
		{name: "connection refused", tool: NewGet(), args: map[string]any{"url": "http://127.0.0.1:1/"}, want: "http_get http://127.0.0.1:1/ failed: dial tcp 127.0.0.1:1: connect: connection refused"},
		{name: "cancelled", tool: NewGet(), ctx: cancelled, args: map[string]any{"url": slow.URL}, wantIs: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			start := time.Now()
			o := run(ctx, tt.tool, tt.args)
			if o.err == nil {
				t.Fatalf("no error; stdout %q", o.stdout)
			}
			if tt.want != "" && !strings.Contains(o.err.Error(), tt.want) {
				t.Errorf("error %q, want one containing %q", o.err, tt.want)
			}
			if tt.wantIs != nil && !errors.Is(o.err, tt.wantIs) {
				t.Errorf("error %v is not %v", o.err, tt.wantIs)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

func TestGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    string
		refused bool
	}{
		{"169.254.169.254:80", true},
		{"169.254.170.2:80", true},
		{"169.254.1.1:443", true},
		{"[fd00:ec2::254]:80", true},
		{"100.100.100.200:80", true},
		{"[fe80::1%eth0]:80", true},
		{"[febf::1]:80", true},
		{"[::ffff:169.254.169.254]:80", true},
		{"[64:ff9b::a9fe:a9fe]:80", true},   // NAT64 of 169.254.169.254
		{"[64:ff9b:1::a9fe:a9fe]:80", true}, // local-use NAT64
		{"[::a9fe:a9fe]:80", true},          // IPv4-compatible
		{"192.0.0.192:80", true},            // Oracle Cloud
		{"168.63.129.16:80", true},          // Azure WireServer
		{"[fd00:ec2::23]:80", true},         // EKS Pod Identity
		{"[fd20:ce::254]:80", true},         // GCP over IPv6
		{"169.254.170.23:80", true},
		{"127.0.0.1:8080", false},
		{"[::1]:80", false},
		{"10.0.0.1:80", false},
		{"100.100.100.201:80", false},
		{"[fec0::1]:80", false},
		{"93.184.216.34:443", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			err := guard(t.Context(), "tcp", tt.addr, nil)
			var re *RefusedError
			if got := errors.As(err, &re); got != tt.refused {
				t.Fatalf("guard(%s) = %v, want refused=%v", tt.addr, err, tt.refused)
			}
			if tt.refused && !strings.Contains(err.Error(), "cloud metadata / link-local address") {
				t.Errorf("error %q", err)
			}
		})
	}
	if err := guard(t.Context(), "tcp", "example.com:80", nil); err == nil {
		t.Error("guard accepted a name it cannot check")
	}
	if !refused(netip.MustParseAddr("169.254.169.254")) {
		t.Error("refused(169.254.169.254) = false")
	}
}

func TestIsText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ct   string
		head string
		want bool
	}{
		{"text/html; charset=utf-8", "<html>", true},
		{"application/json", "{}", true},
		{"application/vnd.api+json", "{}", true},
		{"image/png", "\x89PNG", false},
		{"application/pdf", "%PDF-1.7", false},
		{"", "plain words", true},
		{"", "\x00\x01", false},
		{"application/octet-stream", "caf\xc3", true}, // a rune cut at the end of the sniffed head
		{"", "\xff\xfe", false},
		{"not a type", "words", true},
	}
	for _, tt := range tests {
		if got := isText(tt.ct, []byte(tt.head)); got != tt.want {
			t.Errorf("isText(%q, %q) = %v, want %v", tt.ct, tt.head, got, tt.want)
		}
	}
}
