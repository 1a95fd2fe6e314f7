package web

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// TestSendsNormalForm is white-box review B5 end to end: the request line
// a real server receives is the URL's normal form, the same form the
// PermissionEngine judged (permission.Explain) and matched rules against.
// Go's client would otherwise send /repos/me/../../user/keys as it is, and
// a server that resolves dot segments would answer /user/keys under a rule
// for /repos/me/**.
func TestSendsNormalForm(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.RequestURI)
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	base := srv.URL // http://127.0.0.1:PORT
	tests := []struct{ path, want string }{
		{"/repos/me/../../user/keys", "/user/keys"},
		{"/repos/me/%2e%2e/%2e%2e/user/keys", "/user/keys"},
		{"/repos/me/%2E%2e/.%2E/user/keys", "/user/keys"},
		{"/repos/me/x/./y/../z", "/repos/me/x/z"},
		{"/repos/%6De/%7Euser", "/repos/me/~user"},
		{"/projects/group%2fproject", "/projects/group%2Fproject"},
		{"/a%20b/é", "/a%20b/%C3%A9"},
		{"/q?x=%7e&y=../..#frag", "/q?x=~&y=../.."},
		{"", "/"},
	}
	for _, tt := range tests {
		raw := base + tt.path
		mu.Lock()
		got = got[:0]
		mu.Unlock()
		o := run(t.Context(), NewGet(), map[string]any{"url": raw})
		if o.err != nil {
			t.Errorf("%s: %v", raw, o.err)
			continue
		}
		mu.Lock()
		sent := append([]string(nil), got...)
		mu.Unlock()
		if len(sent) != 1 || sent[0] != tt.want {
			t.Errorf("%s: the server received %q, want %q", raw, sent, tt.want)
			continue
		}
		info, _ := permission.Builtin("http_get")
		x := permission.Explain(permission.Request{Tool: info, Args: map[string]any{"url": raw}, Cwd: "/home/u/proj", Home: "/home/u"})
		if x.URL != base+sent[0] {
			t.Errorf("%s: the engine judged %q, the server received %q", raw, x.URL, base+sent[0])
		}
	}

	// A URL without a single normal form is not sent at all.
	for _, p := range []string{"/repos/me/..;/..;/user/keys", "/repos/me/x/..%5c..%5c..%5cuser", "/repos/me/%252e%252e/x", `/repos/me/x/..\..\..\user`, "/repos/me/%c0%ae%c0%ae/x"} {
		mu.Lock()
		got = got[:0]
		mu.Unlock()
		o := run(t.Context(), NewGet(), map[string]any{"url": base + p})
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if o.err == nil || n != 0 {
			t.Errorf("%s: error %v, %d requests reached the server; want it refused before sending", p, o.err, n)
		}
	}
}

// TestGuardAfterDNS checks the dial guard where it matters: a name that
// DNS resolves to a metadata address (wildcard DNS, rebinding) is refused
// at connect time, whatever the name looked like.
func TestGuardAfterDNS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "reached") }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	get := &Get{f: newFetcher(options{resolver: fakeResolver(map[string][]netip.Addr{
		"innocent.test":   {netip.MustParseAddr("127.0.0.1")},
		"rebind.test":     {netip.MustParseAddr("169.254.169.254")},
		"oracle.test":     {netip.MustParseAddr("192.0.0.192")},
		"alibaba.test":    {netip.MustParseAddr("100.100.100.200")},
		"imds6.test":      {netip.MustParseAddr("fd00:ec2::254")},
		"mapped.test":     {netip.MustParseAddr("::ffff:169.254.169.254")},
		"nat64.test":      {netip.MustParseAddr("64:ff9b::a9fe:a9fe")},
		"wireserver.test": {netip.MustParseAddr("168.63.129.16")},
	})})}

	// The control: the fake DNS works, and an ordinary address is reached.
	if o := run(t.Context(), get, map[string]any{"url": "http://innocent.test:" + port + "/"}); o.err != nil || !strings.Contains(o.stdout, "reached") {
		t.Fatalf("control: %v, stdout %q", o.err, o.stdout)
	}
	for _, name := range []string{"rebind.test", "oracle.test", "alibaba.test", "imds6.test", "mapped.test", "nat64.test", "wireserver.test"} {
		o := run(t.Context(), get, map[string]any{"url": "http://" + name + ":" + port + "/latest/meta-data/"})
		if o.err == nil || !strings.Contains(o.err.Error(), "refused to connect to") || !strings.Contains(o.err.Error(), "such addresses are never fetched") {
			t.Errorf("%s: error %v, want the guard's refusal", name, o.err)
		}
	}
}

// fakeResolver answers A and AAAA queries from names, over an in-memory
// stream (DNS over TCP framing), so no real DNS is asked.
func fakeResolver(names map[string][]netip.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		client, server := net.Pipe()
		go serveDNS(server, names)
		return client, nil
	}}
}

func serveDNS(c net.Conn, names map[string][]netip.Addr) {
	defer c.Close()
	for {
		var n uint16
		if err := binary.Read(c, binary.BigEndian, &n); err != nil {
			return
		}
		q := make([]byte, n)
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		resp, err := dnsAnswer(q, names)
		if err != nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

// dnsAnswer builds the response to a one-question query.
func dnsAnswer(q []byte, names map[string][]netip.Addr) ([]byte, error) {
	if len(q) < 12 {
		return nil, errors.New("short query")
	}
	i := 12
	var labels []string
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil, errors.New("bad name")
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	i++ // the root label
	if i+4 > len(q) {
		return nil, errors.New("short question")
	}
	qtype := binary.BigEndian.Uint16(q[i:])
	question := q[12 : i+4]
	addrs, known := names[strings.ToLower(strings.Join(labels, "."))]
	var answers [][]byte
	for _, a := range addrs {
		switch {
		case qtype == 1 && a.Is4():
			answers = append(answers, a.AsSlice())
		case qtype == 28 && a.Is6() && !a.Is4In6():
			answers = append(answers, a.AsSlice())
		case qtype == 28 && a.Is4In6():
			b := a.As16()
			answers = append(answers, b[:])
		}
	}
	flags := uint16(0x8180) // response, recursion desired and available
	if !known {
		flags |= 3 // NXDOMAIN
	}
	resp := binary.BigEndian.AppendUint16(nil, binary.BigEndian.Uint16(q[0:2]))
	resp = binary.BigEndian.AppendUint16(resp, flags)
	resp = binary.BigEndian.AppendUint16(resp, 1)
	resp = binary.BigEndian.AppendUint16(resp, uint16(len(answers)))
	resp = append(resp, 0, 0, 0, 0)
	resp = append(resp, question...)
	for _, rdata := range answers {
		resp = append(resp, 0xC0, 12) // the name, by pointer to the question
		resp = binary.BigEndian.AppendUint16(resp, qtype)
		resp = binary.BigEndian.AppendUint16(resp, 1) // IN
		resp = binary.BigEndian.AppendUint32(resp, 60)
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(rdata)))
		resp = append(resp, rdata...)
	}
	return resp, nil
}
