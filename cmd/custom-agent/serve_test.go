package main

import (
	"slices"
	"strings"
	"testing"
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
		{"127.0.0.2:7717", false, true, false},
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
