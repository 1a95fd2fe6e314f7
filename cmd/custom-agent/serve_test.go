package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/web"
)

func TestServeListensOnLoopbackOnly(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ok     bool
		warn   bool
	}{
		{"127.0.0.1:0", false, true, false},
		{"localhost:7717", false, true, false},
		{"[::1]:7717", false, true, false},
		{"127.0.0.2:7717", false, false, false}, // a browser reaches NAME.localhost at 127.0.0.1 or ::1 only
		{"0.0.0.0:7717", false, false, false},
		{":7717", false, false, false},
		{"[::]:7717", false, false, false},
		{"192.168.1.5:7717", false, false, false},
		{"example.com:7717", false, false, false},
		{"0.0.0.0:7717", true, true, true},
		{"nonsense", false, false, false},
	} {
		_, _, warn, err := listenAddr(c.addr, c.remote)
		if (err == nil) != c.ok || (warn != "") != c.warn {
			t.Errorf("%s (allow-remote %v): err %v, warning %q", c.addr, c.remote, err, warn)
		}
		if err != nil && c.addr != "nonsense" && !strings.Contains(err.Error(), "SSH tunnel") {
			t.Errorf("%s: the refusal does not name the SSH tunnel: %v", c.addr, err)
		}
	}
}

func TestServeAllowsExactHosts(t *testing.T) {
	got := allowedHosts("127.0.0.1", "7717", nil)
	want := []string{"127.0.0.1:7717", "localhost:7717", "[::1]:7717"}
	if !slices.Equal(got, want) {
		t.Errorf("hosts %v, want %v", got, want)
	}
	got = allowedHosts("0.0.0.0", "7717", []string{"box.lan", "10.0.0.2:80"})
	want = []string{"127.0.0.1:7717", "localhost:7717", "[::1]:7717", "box.lan:7717", "10.0.0.2:80"}
	if !slices.Equal(got, want) {
		t.Errorf("remote hosts %v, want %v", got, want)
	}
}

// lockedBuffer is a bytes.Buffer the server goroutine writes while the test
// reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servedURL = regexp.MustCompile(`(http://([0-9a-f]{32})\.localhost:(\d+)/\?token=([0-9a-f]{64}))\n`)

// startServeOpen runs serve --open with a fake xdg-open that records its argv,
// and returns the printed URL's parts and the recorded argv's file.
func startServeOpen(t *testing.T) (dir, url, port, token, argvFile string, out *lockedBuffer) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the fake browser opener is a shell script named xdg-open")
	}
	dir = t.TempDir()
	bin := t.TempDir()
	argvFile = filepath.Join(bin, "argv")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argvFile + ".tmp && mv " + argvFile + ".tmp " + argvFile + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx, cancel := context.WithCancel(context.Background())
	out = &lockedBuffer{}
	done := make(chan error, 1)
	root := newRootCmd()
	root.SetArgs([]string{"--data-dir", dir, "serve", "--open"})
	root.SetOut(out)
	root.SetErr(out)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		var m []string
		if login, _, ok := loginIn(t, out.String()); ok {
			m = servedURL.FindStringSubmatch(login + "\n")
		}
		_, err := os.Stat(argvFile)
		if m != nil && err == nil {
			return dir, m[1], m[3], m[4], argvFile, out
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no URL or did not open a browser: %q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Finding 4 of the web review: --open put the token URL in xdg-open's argv,
// which every user reads in /proc/PID/cmdline. It opens a 0600 file that
// redirects instead.
func TestServeOpenKeepsTheTokenOutOfArgv(t *testing.T) {
	_, url, _, token, argvFile, _ := startServeOpen(t)
	argv, err := os.ReadFile(argvFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(argv), token) {
		t.Fatalf("the browser opener's argv holds the token: %q", argv)
	}
	page := strings.TrimSpace(string(argv))
	st, err := os.Stat(page)
	if err != nil {
		t.Fatalf("the opener was given %q, not a file: %v", page, err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", page, st.Mode().Perm())
	}
	b, _ := os.ReadFile(page)
	if !strings.Contains(string(b), `http-equiv="refresh" content="0;url=`+url+`"`) {
		t.Errorf("the page does not redirect to the URL: %s", b)
	}
}

// Findings 1, 2 and 6 of the web review, end to end: the URL names a random
// host under .localhost, its token works once, the cookie it sets works on
// that host only, and scripts use a Bearer token from a 0600 file at
// 127.0.0.1.
func TestServeTokenIsSingleUseAndTheCookieHostOnly(t *testing.T) {
	dir, url, port, _, _, out := startServeOpen(t)
	// Go does not resolve NAME.localhost (browsers do): dial loopback.
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+port)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusOK || len(cs) != 1 || cs[0].Domain != "" {
		t.Fatalf("first use: %d, cookies %v: want 200 and one host-only cookie", resp.StatusCode, cs)
	}
	km := regexp.MustCompile(`data-key="([0-9a-f]{64})"`).FindSubmatch(body)
	if km == nil {
		t.Fatalf("the login answer holds no tab key: %q", body)
	}
	key := string(km[1])
	get := func(u string, c *http.Cookie, auth string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", u, nil)
		if c != nil {
			req.AddCookie(c)
			req.Header.Set(web.HeaderKey, key)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(url, nil, ""); code != http.StatusUnauthorized {
		t.Errorf("second use of the token URL: %d, want 401", code)
	}
	uiBase := strings.Split(url, "/?")[0]
	if code := get(uiBase+"/queue", cs[0], ""); code != http.StatusOK {
		t.Errorf("the cookie on the UI host: %d", code)
	}
	for _, h := range []string{"127.0.0.1:" + port, "localhost:" + port} {
		if code := get("http://"+h+"/queue", cs[0], ""); code != http.StatusUnauthorized {
			t.Errorf("the cookie at %s: %d, want 401", h, code)
		}
	}
	m := regexp.MustCompile(`Bearer \$\(cat (\S+)\)`).FindStringSubmatch(out.String())
	if m == nil || filepath.Dir(m[1]) != dir {
		t.Fatalf("serve names no script token file in the data dir: %q", out.String())
	}
	st, err := os.Stat(m[1])
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("script token file: %v %v, want mode 0600", st, err)
	}
	b, _ := os.ReadFile(m[1])
	script := strings.TrimSpace(string(b))
	if strings.Contains(url, script) {
		t.Fatal("the script token is in the URL")
	}
	if code := get("http://127.0.0.1:"+port+"/queue", nil, "Bearer "+script); code != http.StatusOK {
		t.Errorf("Bearer script token at 127.0.0.1: %d", code)
	}
}

// A browser may try NAME.localhost at ::1 before 127.0.0.1: serve holds the
// port on both, and will not start on a port another program holds on the
// other address (it would get the browser's requests, cookie included).
func TestServeHoldsThePortOnBothLoopbacks(t *testing.T) {
	other, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here (%v): no one can take ::1 either", err)
	}
	defer other.Close()
	_, port, _ := net.SplitHostPort(other.Addr().String())
	if lns, err := listenLoopback("127.0.0.1", port); err == nil {
		for _, ln := range lns {
			ln.Close()
		}
		t.Fatalf("serve listened on 127.0.0.1:%s while another program holds [::1]:%s", port, port)
	} else if !strings.Contains(err.Error(), "taken by another program") {
		t.Errorf("the refusal does not say why: %v", err)
	}
	lns, err := listenLoopback("127.0.0.1", "0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	if len(lns) != 2 || lns[0].Addr().(*net.TCPAddr).Port != lns[1].Addr().(*net.TCPAddr).Port || !lns[1].Addr().(*net.TCPAddr).IP.Equal(net.IPv6loopback) {
		t.Fatalf("listeners %v %v: want 127.0.0.1 and ::1 on one port", lns[0].Addr(), lns[len(lns)-1].Addr())
	}
}

// TestServeRefusesADataDirOthersCanChange: serve keeps its script token
// and its --open page in the data directory; one that other users can
// write to (third serve review: they could swap the token file) is
// refused before anything is written or served.
func TestServeRefusesADataDirOthersCanChange(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetArgs([]string{"--data-dir", dir, "serve", "--addr", "127.0.0.1:0"})
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "can be changed by other users") {
		t.Fatalf("serve on a 0777 data dir: %v\n%s%s", err, out.String(), errOut.String())
	}
	if strings.Contains(out.String(), "token") {
		t.Errorf("serve printed a login before refusing: %s", out.String())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "serve-*")); len(m) > 0 {
		t.Errorf("serve wrote %v into the data dir it refused", m)
	}
}

// The third review's finding 4, end to end: the printed link says until
// when it works and stops working then if unused; SIGUSR1 makes serve print
// a fresh one, which works once.
func TestServeLinkExpiresAndSIGUSR1PrintsAFreshOne(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGUSR1")
	}
	p := startServe(t, t.TempDir(), t.TempDir(), "--link-ttl", "1s")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(p.base, "http://"))
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+port)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial}, Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(u string) (int, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	time.Sleep(1200 * time.Millisecond)
	if code, body := login(p.login); code != http.StatusUnauthorized || !strings.Contains(body, "expired") {
		t.Fatalf("the printed link after its time: %d %q, want 401 expired", code, body)
	}
	if err := p.proc.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var fresh string
	deadline := time.Now().Add(10 * time.Second)
	for fresh == "" {
		if strings.Contains(p.stdout.String(), "a fresh login link") {
			fresh, _, _ = loginIn(t, p.stdout.String())
		} else if time.Now().After(deadline) {
			t.Fatalf("no fresh link after SIGUSR1: %q", p.stdout.String())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !strings.Contains(p.stdout.String(), "until ") || fresh == p.login {
		t.Fatalf("the fresh link %q (%q)", fresh, p.stdout.String())
	}
	if code, body := login(fresh); code != http.StatusOK || !strings.Contains(body, "data-key=") {
		t.Fatalf("the fresh link: %d %q, want 200 and a tab key", code, body)
	}
	if code, _ := login(fresh); code != http.StatusUnauthorized {
		t.Fatalf("the fresh link used twice: %d, want 401", code)
	}
}

// The policy page's list of trusted projects comes from the user's trust
// file, as custom-agent trust writes it.
func TestServePolicyListsTrustedProjects(t *testing.T) {
	ch := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", ch)
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(filepath.Join(d, ".custom-agent"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, ".custom-agent", "policy.json"), []byte(`{"version":1,"rules":[]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		root := newRootCmd()
		root.SetArgs([]string{"trust", d})
		root.SetOut(io.Discard)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
	}
	v, err := servePolicy{}.Trusted()
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := filepath.EvalSymlinks(a)
	rb, _ := filepath.EvalSymlinks(b)
	if len(v.Projects) != 2 || !slices.Contains(v.Projects, ra) || !slices.Contains(v.Projects, rb) || !strings.HasPrefix(v.File, ch) {
		t.Fatalf("trusted: %+v, want %s and %s from a file under %s", v, ra, rb, ch)
	}
}
