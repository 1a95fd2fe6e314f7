package diffname

import "testing"

func TestGitDiffNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rest, a, b string
		ok         bool
	}{
		{"a/main.go b/main.go", "main.go", "main.go", true},
		{"a/old name.txt b/old name.txt", "old name.txt", "old name.txt", true},
		{"a/x b/y b/z", "x b/y", "z", true},
		{`"a/t\303\251st.go" "b/t\303\251st.go"`, "tést.go", "tést.go", true},
		{"main.go main.go", "", "", false},
		{"a/only", "", "", false},
	}
	for _, tc := range tests {
		a, b, at := GitDiffNames(tc.rest)
		if a != tc.a || b != tc.b || (at > 0) != tc.ok {
			t.Errorf("GitDiffNames(%q) = %q, %q, %d; want %q, %q, ok %v", tc.rest, a, b, at, tc.a, tc.b, tc.ok)
		}
	}
}

func TestHeaderName(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"a/main.go":                            "a/main.go",
		"a/main.go\t2026-11-30 10:00:00 +0000": "a/main.go",
		`"b/sp ace\tx"`:                        "b/sp ace\tx",
		"/dev/null":                            "/dev/null",
		"trailing  ":                           "trailing",
	}
	for in, want := range tests {
		if got := HeaderName(in); got != want {
			t.Errorf("HeaderName(%q) = %q, want %q", in, got, want)
		}
	}
}
