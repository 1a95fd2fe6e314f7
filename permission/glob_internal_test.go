package permission

import (
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"pgregory.net/rapid"
)

// TestCompileGlobValidates: compileGlob refuses exactly the patterns
// doublestar calls malformed, although it only asks doublestar about the
// shapes it has no fast path for.
func TestCompileGlobValidates(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "a", "*", "**", "/**", "a/**", "a*", "a**", "[", "a/[/**", "a\\", "\\", "{a,b", "a/{b/**", "[a]*", "a]", "}", "a/**/b", "*/x"} {
		if _, ok := compileGlob(p, false); ok != doublestar.ValidatePattern(p) {
			t.Errorf("compileGlob(%q) ok = %v, doublestar.ValidatePattern = %v", p, ok, !ok)
		}
	}
	pat := rapid.StringOfN(rapid.SampledFrom([]rune{'a', 'B', '/', '*', '?', '[', ']', '{', '}', ',', '\\', '!', '-'}), 0, 10, -1)
	rapid.Check(t, func(t *rapid.T) {
		p, fold := pat.Draw(t, "pattern"), rapid.Bool().Draw(t, "fold")
		g, ok := compileGlob(p, fold)
		want := p
		if fold {
			want = toLowerASCII(p)
		}
		if ok != doublestar.ValidatePattern(want) {
			t.Fatalf("compileGlob(%q, %v) ok = %v, doublestar.ValidatePattern(%q) = %v", p, fold, ok, want, !ok)
		}
		if ok && g.pat != want {
			t.Fatalf("compileGlob(%q, %v) keeps %q, want %q", p, fold, g.pat, want)
		}
	})
}

func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
