package secrets

import (
	"strings"
	"testing"
)

func TestKeyBlocksFollowAStreamWrittenInPieces(t *testing.T) {
	body := strings.Repeat("MIIEpAIBAAKCAQEAwJ3xq9Vbm1c2Hn4XkQ8sT5yZ0aR6uI7oP3lK9jH2gF4dS1aZ\n", 600)
	stream := "log line\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\nafter\n"
	begin := strings.Index(stream, "-----BEGIN")
	end := strings.Index(stream, "-----END")
	for _, piece := range []int{1, 7, 64, 4096, len(stream)} { // every marker cut somewhere
		var k KeyBlocks
		for i := 0; i < len(stream); i += piece {
			k.Write([]byte(stream[i:min(i+piece, len(stream))]))
		}
		for _, c := range []struct {
			off  int
			open bool
		}{{0, false}, {begin, false}, {begin + 1, true}, {begin + len(body)/2, true}, {end, true}, {end + 1, false}, {len(stream) - 1, false}} {
			if got := k.OpenAt(int64(c.off)); got != c.open {
				t.Errorf("writes of %d bytes: OpenAt(%d) = %v, want %v", piece, c.off, got, c.open)
			}
		}
	}
	tail := stream[end-200:]
	if n := KeyEnd([]byte(tail)); tail[:n] != stream[end-200:end]+"-----END RSA PRIVATE KEY-----" {
		t.Errorf("KeyEnd stops at %q", tail[max(0, n-20):n])
	}
	if n := KeyEnd([]byte(body)); n != len(body) {
		t.Errorf("a body with no END: KeyEnd = %d, want all %d", n, len(body))
	}
}

func TestKeyBlocksRememberAnOpenKeyPastTheEventsKept(t *testing.T) {
	var k KeyBlocks
	for range maxKeyEvents + 10 {
		k.Write([]byte("-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n"))
	}
	k.Write([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"))
	at := k.total
	for range maxKeyEvents + 10 {
		k.Write([]byte("-----BEGIN PGP PRIVATE KEY BLOCK-----\n")) // opens again and again, never closed
	}
	if !k.OpenAt(at + 1) {
		t.Error("a key opened before the events kept is forgotten")
	}
}

func TestPrivateKeysOfOtherFormatsAreMaskedAndFollowed(t *testing.T) {
	rfc := "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20240101\"\nRFCBODYP2gk7Xq0Vb9Lm3Nc8Rz1Tq6Wx2Ey5Ua4Io7\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n"
	ppk := "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIF\nPrivate-Lines: 1\nPPKPRIVATELINE8sT5yZ0aR6uI7oP3lK9jH2gF4dS1a\nPrivate-MAC: abababababababababababababababab\n"
	for name, key := range map[string]string{"RFC 4716": rfc, "PuTTY": ppk} {
		text := "before\n" + key + "after\n"
		got := Mask(text)
		if strings.Contains(got, "BODY") || strings.Contains(got, "PRIVATELINE") {
			t.Errorf("%s: the key's body is shown: %q", name, got)
		}
		if !strings.HasPrefix(got, "before\n") || !strings.HasSuffix(got, "after\n") {
			t.Errorf("%s: what surrounds the key is masked too: %q", name, got)
		}
		var k KeyBlocks
		for i := 0; i < len(text); i += 5 {
			k.Write([]byte(text[i:min(i+5, len(text))]))
		}
		mid := strings.Index(text, "BODY")
		if mid < 0 {
			mid = strings.Index(text, "PRIVATELINE")
		}
		if !k.OpenAt(int64(mid)) || k.OpenAt(int64(strings.Index(text, "after"))) {
			t.Errorf("%s: OpenAt inside the key %v, after it %v", name, k.OpenAt(int64(mid)), k.OpenAt(int64(strings.Index(text, "after"))))
		}
		if n := KeyEnd([]byte(text[mid:])); !strings.HasPrefix(text[mid+n:], "\nafter") {
			t.Errorf("%s: KeyEnd stops before %q", name, text[mid+n:])
		}
	}
}
