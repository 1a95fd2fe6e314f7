package permission

import (
	"net/url"
	"testing"
)

// TestPlainHostPort: where plainHostPort splits a host[:port], url.Parse
// splits it the same way, so compileURL may skip url.Parse for it.
func TestPlainHostPort(t *testing.T) {
	t.Parallel()
	for _, hp := range []string{
		"example.com", "API.Example.COM", "host5.example.com:8443", "*.example.com", "*.example.com:443",
		"localhost:0", "127.0.0.1", "10.0.0.1:65535", "x:99999", "a..b", "-a.b", "1", "a:", ":80", "*.", "*",
		"a:b", "a:123456", "[::1]:80", "user@host", "ex ample.com", "exa%41mple.com", "é.com", "a_b.com",
	} {
		host, port, ok := plainHostPort(hp)
		if !ok {
			continue
		}
		u, err := url.Parse("x://" + hp)
		if err != nil || u.User != nil || u.Hostname() != host || u.Port() != port {
			t.Errorf("plainHostPort(%q) = %q, %q; url.Parse gives %v, %v", hp, host, port, u, err)
		}
	}
	for _, hp := range []string{"example.com", "*.example.com:443", "x:99999"} {
		if _, _, ok := plainHostPort(hp); !ok {
			t.Errorf("plainHostPort(%q) refuses a plain host", hp)
		}
	}
}
