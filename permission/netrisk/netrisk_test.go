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
