package netrisk

import "testing"

func TestMetadataHost(t *testing.T) {
	for _, h := range []string{"169.254.169.254", "2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518", "[fd00:ec2::254]", "metadata.google.internal", "100.100.100.200", "[::ffff:169.254.169.254]"} {
		if !MetadataHost(h) {
			t.Errorf("MetadataHost(%q) = false", h)
		}
	}
	for _, h := range []string{"example.com", "10.0.0.1", "127.0.0.1", "1.2.3.4"} {
		if MetadataHost(h) {
			t.Errorf("MetadataHost(%q) = true", h)
		}
	}
}

func TestFindSecret(t *testing.T) {
	for _, s := range []string{"x?k=AKIAIOSFODNN7EXAMPLE", "/ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "-----BEGIN OPENSSH PRIVATE KEY-----"} {
		if _, _, _, ok := FindSecret(s); !ok {
			t.Errorf("FindSecret(%q) found nothing", s)
		}
	}
	for _, s := range []string{"https://example.com/docs?q=go", "npm_config", "AKIA"} {
		if _, _, _, ok := FindSecret(s); ok {
			t.Errorf("FindSecret(%q) found a secret", s)
		}
	}
}

func TestHostAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		want string // "" when not an address
	}{
		{"169.254.169.254", "169.254.169.254"},
		{"2852039166", "169.254.169.254"},
		{"0xA9FEA9FE", "169.254.169.254"},
		{"0251.0376.0251.0376", "169.254.169.254"},
		{"169.254.43518", "169.254.169.254"},
		{"127.1", "127.0.0.1"},
		{"[::1]", "::1"},
		{"::ffff:169.254.169.254", "169.254.169.254"},
		{"example.com", ""},
		{"host5.example.com", ""},
		{"1.example", ""},
		{"example.1", ""},
		{"1.2.3.4.", ""},
		{"1.2.3.4.5", ""},
		{"256.1.1.1", ""},
		{"", ""},
		{".", ""},
	}
	for _, tc := range tests {
		a, ok := HostAddr(tc.host)
		got := ""
		if ok {
			got = a.String()
		}
		if got != tc.want {
			t.Errorf("HostAddr(%q) = %q, %v; want %q", tc.host, got, ok, tc.want)
		}
	}
}
