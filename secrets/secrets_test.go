package secrets

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"github token", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used", "token [REDACTED] used"},
		{"openai key", "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx", "OPENAI_API_KEY=[REDACTED]"},
		{"anthropic key in text", "key is sk-ant-api03-abcdefghijklmnop1234 ok", "key is [REDACTED] ok"},
		{"aws key id", "aws id AKIAIOSFODNN7EXAMPLE here", "aws id [REDACTED] here"},
		{"aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED]"},
		{"bearer", "Authorization: Bearer abc.def.ghi-123456", "Authorization: Bearer [REDACTED]"},
		{"password assignment", `db password="hunter2" port=5432`, `db password="[REDACTED]" port=5432`},
		{"json password", `{"user":"u","password":"p@ss"}`, `{"user":"u","password":"[REDACTED]"}`},
		{"url password", "postgres://app:s3cr3t@db.internal:5432/x", "postgres://app:[REDACTED]@db.internal:5432/x"},
		{"private key", "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nz", "a\n[REDACTED]\nz"},
		{"truncated private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow", "[REDACTED]"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "[REDACTED]"},
		{"token split by quotes", `echo sk-proj-"abcdefghijklmnopqrstuvwx"`, `echo [REDACTED]"`},
		{"token split by single quotes", `x='AKIA''IOSFODNN7EXAMPLE'`, `x='[REDACTED]'`},
		{"token split by a line continuation", "ghp_abcdefghij\\\nklmnopqrstuvwxyz0123456789", "[REDACTED]"},
		// Formats a fourth reviewer found unmasked.
		{"age secret key", "key: AGE-SECRET-KEY-1QQPQQ3F0ZFSA9XMKQFMPGAL7DT2AKLU4EHZ2HXPK9NKEVJ8R3SCQ6WZ9JS", "key: [REDACTED]"},
		{"pypi token", "password = pypi-AgEIcHlwaS5vcmcCJGQ4ZTRhNmM2LWEwNjgtNDk0Zi04Y2NhLTk5YWQ5ZGQzNDFkNQ", "password = [REDACTED]"},
		{"pypi token alone", "use pypi-AgEIcHlwaS5vcmcCJGQ4ZTRhNmM2LWEwNjgtNDk0Zi04Y2NhLTk5YWQ5ZGQzNDFkNQ now", "use [REDACTED] now"},
		{"kubeconfig client key", "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=", "    client-key-data: [REDACTED]"},
		{"openvpn static key", "-----BEGIN OpenVPN Static key V1-----\ne0a2f1b3c4d5\n-----END OpenVPN Static key V1-----\nok", "[REDACTED]\nok"},
		{"pgp 2 secret key", "-----BEGIN PGP SECRET KEY BLOCK-----\nlQOYBF\n-----END PGP SECRET KEY BLOCK-----", "[REDACTED]"},
		{"netrc on one line", "machine api.example.com login bob password NetrcPw42", "machine api.example.com login bob password [REDACTED]"},
		{"netrc on lines", "machine h\n  login bob\n  password NetrcPw42\n", "machine h\n  login bob\n  password [REDACTED]\n"},
		{"azure account key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=ab12CD34ef56GH78==;EndpointSuffix=core.windows.net", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED];EndpointSuffix=core.windows.net"},
		{"base64 of a PEM key", "key: LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0KYjNCbGJuTnphQzFyWlhr=", "key: [REDACTED]"},
		{"xml password", "<user>u</user><password>hunter22</password>", "<user>u</user><password>[REDACTED]</password>"},
		// What must stay visible.
		{"ordinary text", "PASS  packages/storage 27 tests", "PASS  packages/storage 27 tests"},
		{"words containing key names", "monkey=banana tokenizer=bpe", "monkey=banana tokenizer=bpe"},
		{"variable reference", `curl -H "Authorization: Bearer $TOKEN"`, `curl -H "Authorization: Bearer $TOKEN"`},
		{"placeholder", "password=****", "password=****"},
		{"short sk", "sk-1", "sk-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Mask(tc.in); got != tc.want {
				t.Fatalf("Mask(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestMaskJSON(t *testing.T) {
	t.Parallel()
	in := `{"url":"https://x.test","headers":{"Authorization":"Basic dXNlcjpwYXNz","X-Api-Key":"abc","Accept":"*/*"},"body":"token=ghp_abcdefghijklmnopqrstuvwxyz0123456789","n":1.50}`
	got := string(MaskJSON(json.RawMessage(in)))
	want := `{"body":"token=[REDACTED]","headers":{"Accept":"*/*","Authorization":"[REDACTED]","X-Api-Key":"[REDACTED]"},"n":1.50,"url":"https://x.test"}`
	if got != want {
		t.Fatalf("MaskJSON\n got %s\nwant %s", got, want)
	}
	if got := string(MaskJSON(json.RawMessage(`{"command":`))); !json.Valid([]byte(got)) {
		t.Fatalf("MaskJSON of invalid JSON gave invalid JSON: %s", got)
	}
}

func FuzzMask(f *testing.F) {
	f.Add("password=x ghp_abcdefghijklmnopqrstuvwxyz0123456789 -----BEGIN RSA PRIVATE KEY-----")
	f.Fuzz(func(t *testing.T, s string) {
		m := Mask(s)
		if len(Find(s)) == 0 && m != s {
			t.Fatal("Mask changed a string with no secret")
		}
		if strings.Count(m, Redacted) > len(Find(s)) {
			t.Fatal("more redactions than matches")
		}
	})
}

// TestPatternsCompile compiles every pattern: they are compiled lazily, on
// first use, so a bad expression would otherwise show only on a text that
// holds its literal.
func TestPatternsCompile(t *testing.T) {
	for _, p := range patterns() {
		if p.re() == nil {
			t.Errorf("%s: no expression", p.kind)
		}
	}
}
