package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkBrowserProfiles is the walk for browser databases a plan makes
// in each home (every homeTTL at most), over a home of 60 applications'
// data with 40 files each, two levels deep, and one browser profile.
//
//	go test ./sandbox -run '^$' -bench BrowserProfiles -benchtime 200x
func BenchmarkBrowserProfiles(b *testing.B) {
	home := b.TempDir()
	for i := range 60 {
		for _, root := range []string{".config", ".local/share"} {
			d := filepath.Join(home, root, fmt.Sprintf("app%d", i), "sub")
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
			for j := range 20 {
				for _, dir := range []string{filepath.Dir(d), d} {
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.json", j)), nil, 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	p := filepath.Join(home, ".config", "newbrowser", "Default", "History")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if got := browserProfiles(home, "", nil, nil).hidden; len(got) != 1 {
			b.Fatalf("found %q, want the one profile", got)
		}
	}
}

func TestBrowserProfilesWalkRoot(t *testing.T) {
	if os.Getenv("BROWSERWALK_HOME") == "" {
		t.Skip("set BROWSERWALK_HOME to time the walk of a real home")
	}
	t.Log(browserProfiles(os.Getenv("BROWSERWALK_HOME"), "", nil, nil))
}
