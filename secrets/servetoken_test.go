package secrets_test

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/secrets"
)

const serveToken = "5f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190807060"

// TestSetWithKnownTokens: a serve script token the runner knows of is
// hidden wherever a call's output shows it, whole or in part, though
// nothing marks it as a secret (`cat` of a copy prints 64 bare hex
// digits); other 64-hex values, a checksum or a git SHA-256 object id,
// stay visible.
func TestSetWithKnownTokens(t *testing.T) {
	t.Parallel()
	s := secrets.Collect([]byte(`{"command":"cat notes.txt"}`)).With(serveToken, "short")
	checksum := strings.Repeat("ab", 32)
	tests := []struct{ in, want string }{
		{serveToken + "\n", "[REDACTED]\n"},
		{"head -c 20 gives " + serveToken[:20] + " then", "head -c 20 gives [REDACTED] then"},
		{checksum + "  go.sum\n", checksum + "  go.sum\n"},
		{"short is short", "short is short"}, // below minExact: not known
	}
	for _, tc := range tests {
		if got := s.Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := secrets.Mask(serveToken); got != serveToken {
		t.Errorf("without the known token a bare 64-hex value is %q; it must stay visible (checksums, object ids)", got)
	}
	var nilSet *secrets.Set
	if got := nilSet.With(serveToken).Mask("x " + serveToken); got != "x [REDACTED]" {
		t.Errorf("nil set With = %q", got)
	}
}

// TestLoginLinkTokenMasked: serve's login link as a browser history or a
// log prints it, in the forms the secret-assignment pattern did not reach.
func TestLoginLinkTokenMasked(t *testing.T) {
	t.Parallel()
	sha := strings.Repeat("0123456789abcdef", 4)
	tests := []struct{ in, want string }{
		{"http://abc.localhost:7717/?token=" + serveToken, "http://abc.localhost:7717/?token=[REDACTED]"},
		{"visited abc.localhost:7717/%3Ftoken%3D" + serveToken + " at 10:02", "visited abc.localhost:7717/%3Ftoken%3D[REDACTED] at 10:02"},
		{"https://abc.localhost:7717/?t=" + serveToken + "&x=1", "https://abc.localhost:7717/?t=[REDACTED]&x=1"},
		// Not a login link: a commit id and a checksum stay.
		{"commit " + sha + "\n", "commit " + sha + "\n"},
		{"sha256=" + sha, "sha256=" + sha},
		{"https://example.com/blob/" + sha + "?plain=1", "https://example.com/blob/" + sha + "?plain=1"},
	}
	for _, tc := range tests {
		if got := secrets.Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
