package secrets

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// TestPropPrefilterChangesNothing: Find gives the same matches with the
// literal prefilter as without it, over texts made of the patterns'
// keywords in any case, separators, token-like runs and non-ASCII letters
// that fold onto ASCII ones (the Kelvin sign, the long s).
func TestPropPrefilterChangesNothing(t *testing.T) {
	parts := []string{
		"password", "PassWord", "passwd", "passphrase", "secret", "SECRET", "token", "Token", "api_key", "apikey", "API-KEY",
		"access_key", "private-key", "client_secret", "credentials", "auth", "Auth", "AccessKey", "access-key", "PrivateKey", "private_key", "apiKey", "api-key", "PASS:", "client-secret", "Credential", "PASSPHRASE", "bearer", "Bearer", "basic", "BASIC",
		"pa\u017fsword", "\u212aey", "api\u212aey", "to\u212aen", "\u017fecret", "au\u017f", "ß", "é",
		"=", ":", " = ", ": ", "\"", "'", " ", "\n", "\t", ",", ";", "@", "://", "https://", "user:", "x@",
		"sk-", "sk-ant-", "sk-proj-", "ghp_", "github_pat_", "glpat-", "xoxb-", "rk_live_", "sk_test_", "AIza", "npm_",
		"AKIA", "ASIA", "eyJ", ".", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
		"abcdefghijklmnopqrstuvwxyz0123456789", "ABCDEFGHIJKLMNOP", "0123456789abcdef", "hunter2",
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "n")
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(rapid.SampledFrom(parts).Draw(t, "part"))
		}
		s := b.String()
		got := Find(s)
		prefilter = false
		want := Find(s)
		prefilter = true
		if !slices.Equal(got, want) {
			t.Fatalf("Find(%q) = %v with the prefilter, %v without", s, got, want)
		}
	})
}

func BenchmarkMaskToolOutput(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 10<<10; i++ {
		fmt.Fprintf(&sb, "=== RUN   TestCase%03d\n--- PASS: TestCase%03d (0.00s) — ok\n", i, i)
	}
	s := sb.String()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Mask(s)
	}
}

// TestFoldASCIIIsComplete: every rune whose case folding reaches an ASCII
// letter is mapped by foldASCII to that letter in lower case, so a (?i)
// pattern's literal is found in the folded text wherever the pattern can
// match.
func TestFoldASCIIIsComplete(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < utf8.RuneSelf && unicode.IsLetter(f) {
				want := string(unicode.ToLower(f))
				if got := foldASCII(string(r)); got != want {
					t.Fatalf("foldASCII(%U) = %q, want %q (it folds onto %q)", r, got, want, f)
				}
				break
			}
		}
	}
}
