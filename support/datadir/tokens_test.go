package datadir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestServeTokens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("serve-7717.token", "aaaa1111\n")
	write("serve-8080.token", "bbbb2222")
	write("serve-9090.token", "") // empty: nothing to hide
	write("events.db", "not a token")
	other := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(other, []byte("cccc3333"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A link is not followed: serve writes regular files only.
	if err := os.Symlink(other, filepath.Join(dir, "serve-1.token")); err != nil {
		t.Fatal(err)
	}
	got := ServeTokens(dir)
	slices.Sort(got)
	if want := []string{"aaaa1111", "bbbb2222"}; !slices.Equal(got, want) {
		t.Fatalf("ServeTokens = %q, want %q", got, want)
	}
	if ServeTokens("") != nil || ServeTokens(filepath.Join(dir, "missing")) != nil {
		t.Error("no directory, no tokens")
	}
}
