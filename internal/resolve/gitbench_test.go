package resolve

import (
	"os"
	"testing"
)

// BenchmarkGitConfigs judges the repository the tests run in (this
// checkout), as a git status request does.
func BenchmarkGitConfigs(b *testing.B) {
	wd, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	if _, _, ok := findRepo(wd); !ok {
		b.Skip("not run inside a git checkout")
	}
	b.ReportAllocs()
	for b.Loop() {
		if m := GitConfigs([]string{wd}); m[wd] != "" {
			b.Fatalf("this checkout is not judged clean: %s", m[wd])
		}
	}
}
