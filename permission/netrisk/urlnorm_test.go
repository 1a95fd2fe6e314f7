package netrisk

import (
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://api.github.com/repos/me/x", "https://api.github.com/repos/me/x"},
		{"HTTPS://API.GitHub.COM/repos/Me/X", "https://api.github.com/repos/Me/X"},
		{"https://api.github.com", "https://api.github.com/"},
		{"https://api.github.com:443/a", "https://api.github.com/a"},
		{"http://api.github.com:80/a", "http://api.github.com/a"},
		{"http://api.github.com:443/a", "http://api.github.com:443/a"},
		{"https://api.github.com:0443/a", "https://api.github.com/a"},
		{"https://api.github.com:08080/a", "https://api.github.com:8080/a"},
		{"https://api.github.com:/a", "https://api.github.com/a"},
		{"https://api.github.com./a", "https://api.github.com/a"},
		{"https://api.github.com/repos/me/../../user/keys", "https://api.github.com/user/keys"},
		{"https://api.github.com/repos/me/%2e%2e/%2e%2e/user/keys", "https://api.github.com/user/keys"},
		{"https://api.github.com/repos/me/%2E%2e/%2e%2E/user/keys", "https://api.github.com/user/keys"},
		{"https://api.github.com/repos/me/.%2e/%2e./user/keys", "https://api.github.com/user/keys"},
		{"https://h/a/./b/.", "https://h/a/b/"},
		{"https://h/a/b/..", "https://h/a/"},
		{"https://h/../../..", "https://h/"},
		{"https://h/a//../b", "https://h/a/b"},
		{"https://h/%7Euser/%41%42c", "https://h/~user/ABc"},
		{"https://h/a%2fb/%3a", "https://h/a%2Fb/%3A"},
		{"https://h/a b", "https://h/a%20b"},
		{"https://h/é", "https://h/%C3%A9"},
		{"https://h/a?x=%7e%2f&y=../..#frag", "https://h/a?x=~%2F&y=../.."},
		{"https://h/.well-known/x", "https://h/.well-known/x"},
		{"https://h/a;v=1/b", "https://h/a;v=1/b"},
		{"https://h/100%25", "https://h/100%25"},
		{"https://user:pw@h/a", "https://user:pw@h/a"},
		{"http://0xA9FEA9FE/latest", "http://169.254.169.254/latest"},
		{"http://2852039166/", "http://169.254.169.254/"},
		{"http://0251.0376.0251.0376/", "http://169.254.169.254/"},
		{"http://[::ffff:169.254.169.254]/", "http://169.254.169.254/"},
		{"http://[FD00:EC2:0::254]:8080/", "http://[fd00:ec2::254]:8080/"},
		{"http://[fe80::1%25eth0]/", "http://[fe80::1%25eth0]/"},
		{"https://bücher.example/a", "https://xn--bcher-kva.example/a"},
		{"https://BÜCHER.example/a", "https://xn--bcher-kva.example/a"},
		{"http://ｍｅｔａｄａｔａ.google.internal/x", "http://metadata.google.internal/x"},
		{"http://１６９.２５４.１６９.２５４/x", "http://169.254.169.254/x"},
		{"http://169｡254｡169｡254/x", "http://169.254.169.254/x"},
		{"http://①.example/", "http://1.example/"},
	}
	for _, tt := range tests {
		got, err := NormalizeURL(tt.in)
		if err != nil {
			t.Errorf("NormalizeURL(%q): %v", tt.in, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", tt.in, got.String(), tt.want)
		}
		again, err := NormalizeURL(got.String())
		if err != nil || again.String() != got.String() {
			t.Errorf("NormalizeURL(%q) = %v, %v; not idempotent", got.String(), again, err)
		}
	}
}

func TestNormalizeURLRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // in the reason
		best string // Best.String(), "" when nil
	}{
		{"ftp://h/a", "not an http or https URL", ""},
		{"https:h/a", "no // before its host", ""},
		{"https:///a", "names no host", ""},
		{"http://h:99999/", "port", ""},
		{"http://a..b/", "empty label", ""},
		{"http://h/%zz", "cannot be parsed", ""},
		{"http://a\u05d0.example/", "IDNA", ""},
		{`https://h/a/..\..\b`, "once a server decodes it", "https://h/a/..%5C..%5Cb"},
		{"https://h/a/..%5c..%5cb", "once a server decodes it", "https://h/a/..%5C..%5Cb"},
		{"https://h/a/..;/b", `"..;", which servers may read as ".."`, "https://h/a/..;/b"},
		{"https://h/a/.;x/b", `".;x"`, ""},
		{"https://h/a/%252e%252e/b", "decodes it twice", "https://h/a/%252e%252e/b"},
		{"https://h/a/%25252e%25252e/b", "decodes it 3 times", ""},
		{"https://h/a/%%32%65%%32%65/b", "", ""},
		{"https://h/a/..%2fb", "once a server decodes it", ""},
		{"https://h/a/%2e%2e%2f", "once a server decodes it", ""},
		{"https://h/a/%c0%ae%c0%ae/b", "overlong", ""},
		{"https://h/a/%e0%80%ae/b", "overlong", ""},
		{"https://h/a/%ef%bc%8e%ef%bc%8e/b", "once a server decodes it", ""},
		{"https://h/a/\u2025/b", "dot segment", ""},
		{"https://h/a/..%00/b", "once a server decodes it", ""},
		{"https://h/a/.../b", `"...", which servers read as a dot segment`, ""},
		{"https://h/a/..%20/b", "once a server decodes it", ""},
		{"https://h/a/%20../b", "once a server decodes it", ""},
	}
	for _, tt := range tests {
		got, err := NormalizeURL(tt.in)
		var ue *URLError
		if !errors.As(err, &ue) {
			t.Errorf("NormalizeURL(%q) = %v, %v; want a *URLError", tt.in, got, err)
			continue
		}
		if !strings.Contains(ue.Reason, tt.want) {
			t.Errorf("NormalizeURL(%q): reason %q does not say %q", tt.in, ue.Reason, tt.want)
		}
		if tt.best != "" && (ue.Best == nil || ue.Best.String() != tt.best) {
			t.Errorf("NormalizeURL(%q): best %v, want %s", tt.in, ue.Best, tt.best)
		}
	}
}

// FuzzNormalizeURL checks the promises of NormalizeURL on any input: the
// normal form is its own normal form, Go's parser reads it back to the
// same path it sends, and no segment it sends is a dot segment.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{
		"https://api.github.com/repos/me/../../user/keys", "https://h/a/%2e%2E/b", "http://0xA9FEA9FE/x",
		"https://bücher.example/a?b=%7e#c", "https://h/a%2fb/%3a", "http://[::ffff:1.2.3.4]:80/", "https://h/a b/é",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := NormalizeURL(s)
		if err != nil {
			return
		}
		again, err := NormalizeURL(n.String())
		if err != nil || again.String() != n.String() {
			t.Fatalf("NormalizeURL(%q) = %q; again %v, %v", s, n, again, err)
		}
		back, err := url.Parse(n.String())
		if err != nil || back.EscapedPath() != n.EscapedPath() || back.RequestURI() != n.RequestURI() {
			t.Fatalf("%q does not parse back to what it sends: %v %v", n, back, err)
		}
		if slices.ContainsFunc(strings.Split(n.EscapedPath(), "/"), func(seg string) bool { return seg == "." || seg == ".." }) {
			t.Fatalf("%q sends a dot segment", n)
		}
	})
}

func TestMetadataHostByName(t *testing.T) {
	t.Parallel()
	for _, h := range []string{
		"169.254.169.254.nip.io", "app.169.254.169.254.nip.io", "169-254-169-254.sslip.io", "app-169-254-169-254.nip.io",
		"a9fea9fe.nip.io", "A9FEA9FE.nip.io.", "app-a9fea9fe.sslip.io", "7f000001.a9fea9fe.rbndr.us",
		"make-1.2.3.4-rebind-169.254.169.254-rr.1u.ms", "169.254.169.254.anything.example", "fd00-ec2--254.sslip.io",
		"metadata", "metadata.google.internal", "METADATA.GOOGLE.INTERNAL.", "instance-data", "instance-data.ec2.internal",
		"metadata.tencentyun.com", "ｍｅｔａｄａｔａ.google.internal", "１６９.２５４.１６９.２５４",
		"192.0.0.192", "100.100.100.200", "168.63.129.16", "[fd00:ec2::254]", "[fd00:ec2::23]", "[fd20:ce::254]",
		"[fe80::1]", "[64:ff9b::a9fe:a9fe]", "[::169.254.169.254]", "[::ffff:a9fe:a9fe]", "169.254.170.2", "169.254.170.23",
	} {
		if !MetadataHost(h) {
			t.Errorf("MetadataHost(%q) = false", h)
		}
	}
	for _, h := range []string{
		"nip.io", "sslip.io", "10.0.0.1.nip.io", "127.0.0.1.nip.io", "1.2.3.4.nip.io", "metadata.example.com",
		"my-metadata.internal", "deadbeef.example.com", "v1-2-3-4.example.com", "1169.254.169.2544.example",
		"[::1]", "[::]", "0.0.0.0", "example.com", "xn--bcher-kva.example",
	} {
		if MetadataHost(h) {
			t.Errorf("MetadataHost(%q) = true", h)
		}
	}
}

func TestWildcardAddrs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		want []string
	}{
		{"10.0.0.1.nip.io", []string{"10.0.0.1"}},
		{"app.192.168.1.2.sslip.io", []string{"192.168.1.2"}},
		{"app-10-0-0-1.nip.io", []string{"10.0.0.1"}},
		{"0a000001.nip.io", []string{"10.0.0.1"}},
		{"--1.sslip.io", []string{"::1"}},
		{"foo.localtest.me", []string{"127.0.0.1"}},
		{"lvh.me", []string{"127.0.0.1"}},
		{"example.com", nil},
		{"10.0.0.1.example.com", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, a := range WildcardAddrs(tt.host) {
			got = append(got, a.String())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("WildcardAddrs(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

func TestIsMetadataSpellings(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"169.254.169.254", "::ffff:169.254.169.254", "64:ff9b::169.254.169.254", "64:ff9b:1::a9fe:a9fe", "fe80::1%eth0", "fd00:ec2::254"} {
		if !IsMetadata(netip.MustParseAddr(s)) {
			t.Errorf("IsMetadata(%s) = false", s)
		}
	}
	for _, s := range []string{"::1", "::", "10.0.0.1", "fd00::1", "64:ff9b::808:808", "100.100.100.201"} {
		if IsMetadata(netip.MustParseAddr(s)) {
			t.Errorf("IsMetadata(%s) = true", s)
		}
	}
}
