package secrets

import (
	"encoding/json"
	"strings"
	"testing"
)

const (
	ghToken  = "ghp_Z8xQ2mN4vB6nM1kL9pO3iU7yT5rE0wQaSdFg"
	openAI   = "sk-proj-Qw3rTy7uIo9pAs2dFg4hJk6lZx8cVb1nM5"
	pemBlock = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAv9Kp3xQz7LmN2bVc8dWe\nR5tYh6Ui8Oj1Kl2Mn3Bv4Cx5Za6Sd7Fg8Hj9\n-----END RSA PRIVATE KEY-----"
)

func TestCollectFindsEverySecretMaskJSONHides(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"command":"echo OPENAI_API_KEY=` + openAI + `","headers":{"X-Api-Key":"abc123xyz","Accept":"*/*"},"` + ghToken + `":1,"n":2}`)
	s := Collect(raw)
	if s.Len() != 3 {
		t.Fatalf("Collect found %d secrets, want 3 (key, header value, object key): %q", s.Len(), s.whole)
	}
	masked := string(MaskJSON(raw))
	for _, w := range []string{openAI, "abc123xyz", ghToken} {
		if strings.Contains(masked, w) {
			t.Errorf("MaskJSON left %q in %s", w, masked)
		}
	}
	if !Holds(raw) || Holds(json.RawMessage(`{"command":"go test ./...","headers":{"Accept":"*/*","X-Token":"$TOKEN"}}`)) {
		t.Fatal("Holds disagrees with what MaskJSON hides")
	}
	if Collect(json.RawMessage(`not json ` + ghToken)).Empty() {
		t.Fatal("invalid JSON is not scanned as text")
	}
}

func TestSetMaskHidesFragments(t *testing.T) {
	t.Parallel()
	s := Collect(json.RawMessage(`{"command":"printf '%s' ` + openAI + `; cat <<EOF\n` + strings.ReplaceAll(pemBlock, "\n", `\n`) + `\nEOF"}`))
	tests := []struct{ name, in string }{
		{"whole key", "the key is " + openAI},
		{"tail cut by a preview", "…printed " + openAI[:14]},
		{"head cut by a span", openAI[10:] + " was seen"},
		{"key body without its header", "bash: line 2: MIIEowIBAAKCAQEAv9Kp3xQz7LmN2bVc8dWe: command not found"},
		{"key body split over lines", "R5tYh6Ui8Oj1Kl2Mn3Bv4Cx5Za6Sd7Fg8Hj9"},
	}
	for _, tc := range tests {
		got := s.Mask(tc.in)
		if !strings.Contains(got, Redacted) {
			t.Errorf("%s: Mask(%q) = %q, nothing hidden", tc.name, tc.in, got)
		}
		for _, frag := range []string{openAI[8:16], openAI[20:28], "MIIEowIB", "v9Kp3xQz", "Kl2Mn3Bv"} {
			if strings.Contains(got, frag) {
				t.Errorf("%s: Mask(%q) = %q still shows %q", tc.name, tc.in, got, frag)
			}
		}
	}
	if got := s.Mask("PASS ok 27 tests"); got != "PASS ok 27 tests" {
		t.Fatalf("ordinary text changed: %q", got)
	}
	var none *Set
	if none.Mask("token="+ghToken) != "token="+Redacted || !none.Empty() {
		t.Fatal("a nil Set does not mask as Mask does")
	}
}

func TestMaskSpanHidesTheSecretASpanCuts(t *testing.T) {
	t.Parallel()
	v := "curl -H 'Authorization: Bearer " + ghToken + "' https://api.example.test"
	s := Collect(json.RawMessage(`{"command":` + mustJSON(v) + `}`))
	i := strings.Index(v, ghToken) + 6 // a span starting inside the token
	got := s.MaskSpan(v, i, len(v))
	if strings.Contains(got, ghToken[6:12]) || !strings.HasPrefix(got, Redacted) || !strings.HasSuffix(got, "https://api.example.test") {
		t.Fatalf("MaskSpan = %q", got)
	}
	// Even a set that knows nothing hides a span cutting a pattern match.
	if got := (*Set)(nil).MaskSpan(v, i, i+4); got != Redacted {
		t.Fatalf("nil set MaskSpan = %q", got)
	}
	if got := s.MaskSpan(v, 0, 4); got != "curl" {
		t.Fatalf("span with no secret = %q", got)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func FuzzSetMask(f *testing.F) {
	f.Add(`{"a":"token=`+ghToken+`"}`, "x "+ghToken[3:])
	f.Fuzz(func(t *testing.T, args, text string) {
		s := Collect(json.RawMessage(args))
		got := s.Mask(text)
		if s.Empty() && got != Mask(text) {
			t.Fatal("an empty set masks differently from Mask")
		}
		for _, w := range s.whole {
			if len(w) >= minExact && strings.Contains(got, w) && !strings.Contains(w, Redacted) {
				t.Fatalf("known secret %q left in %q", w, got)
			}
		}
	})
}
