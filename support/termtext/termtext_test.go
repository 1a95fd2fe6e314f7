package termtext_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/custom-agent/custom-agent/support/termtext"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, escape, line string
	}{
		{"plain", "go test ./...", "go test ./...", "go test ./..."},
		{"empty", "", "", ""},
		{"tab kept", "a\tb", "a\tb", "a\tb"},
		{"newline", "a\nb\n", "a\nb\n", `a\nb\n`},
		{"crlf", "a\r\nb", "a\r\nb", `a\r\nb`},
		{"lone cr", "ok\rFAKE", `ok\rFAKE`, `ok\rFAKE`},
		{"title", "\x1b]0;pwned\x07", `\x1b]0;pwned\a`, `\x1b]0;pwned\a`},
		{"cursor up and erase line", "x\x1b[1A\x1b[2Kallowed by you", `x\x1b[1A\x1b[2Kallowed by you`, `x\x1b[1A\x1b[2Kallowed by you`},
		{"backspace and del", "ab\b\bxy\x7f", `ab\b\bxy\x7f`, `ab\b\bxy\x7f`},
		{"other c0", "\x00\x01\x0b\x0c\x1f", `\x00\x01\v\f\x1f`, `\x00\x01\v\f\x1f`},
		{"c1 controls", "a\u0085b\u009bc\u0080", `a\u0085b\u009bc\u0080`, `a\u0085b\u009bc\u0080`},
		{"bidi override", "file\u202etxt.exe", `file\u202etxt.exe`, `file\u202etxt.exe`},
		{"bidi range", "\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`, `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"marks and separators", "\u200e\u200f\u061c\u2028\u2029", `\u200e\u200f\u061c\u2028\u2029`, `\u200e\u200f\u061c\u2028\u2029`},
		{"not utf-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
		{"c1 as raw bytes is not utf-8", "\x9b2J", `\x9b2J`, `\x9b2J`},
		{"unicode kept", "héllo → 世界 ✓ \ufffd", "héllo → 世界 ✓ \ufffd", "héllo → 世界 ✓ \ufffd"},
		{"unicode then escape", "é\x1b[31m", `é\x1b[31m`, `é\x1b[31m`},
		// Invisible characters act on no terminal: free text keeps them
		// (an emoji's joiner), a one-line field shows them, so that
		// "./run\u3164tests" does not look like "./run tests".
		{"u+2060 is not a bidi control", "a\u2060b\u202fc", "a\u2060b\u202fc", `a\u2060b` + "\u202fc"},
		{"invisible in a field", "./run\u3164tests && cat notes\u200b.txt\u00ad\ufeff", "./run\u3164tests && cat notes\u200b.txt\u00ad\ufeff", `./run\u3164tests && cat notes\u200b.txt\u00ad\ufeff`},
		{"tag characters", "a\U000e0041b", "a\U000e0041b", `a\U000e0041b`},
		{"emoji joiner in free text", "👨\u200d👩", "👨\u200d👩", `👨\u200d👩`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := termtext.Escape(tt.in); got != tt.escape {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.escape)
			}
			if got := termtext.Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
		})
	}
}

// Whatever the input, the output holds no ESC, no C1 control, no bidi
// control and no CR but one before a newline, is valid UTF-8, and Line's
// output holds no newline.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "\x1b]0;t\x07", "a\r\n\rb", "\xc2\x9b", "\u202e", "é\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, got := range map[string]string{"Escape": termtext.Escape(s), "Line": termtext.Line(s)} {
			if !utf8.ValidString(got) {
				t.Fatalf("%s(%q) = %q is not UTF-8", name, s, got)
			}
			for i, r := range got {
				if r == '\r' && name == "Escape" && strings.HasPrefix(got[i:], "\r\n") {
					continue
				}
				if termtext.Unsafe(r) || name == "Line" && r == '\n' {
					t.Fatalf("%s(%q) = %q holds %U", name, s, got, r)
				}
			}
		}
	})
}
