package resolve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// BenchmarkGitConfigsModules judges a repository whose .git/modules holds
// 40 submodules' git directories with loose objects (256 objects/XX
// directories each): the walk that looks into every directory there.
// cached is a long-lived process's second and later checks; cold is each
// check of its own, as a hook's process makes (the cache emptied).
func BenchmarkGitConfigsModules(b *testing.B) {
	old := racyWindow
	racyWindow = 0
	b.Cleanup(func() { racyWindow = old })
	dir := b.TempDir()
	mk := func(p, content string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		if content != "" {
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	mk(filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
	mk(filepath.Join(dir, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n")
	mk(filepath.Join(dir, ".git", "objects", "x"), "")
	mk(filepath.Join(dir, ".git", "refs", "heads", "x"), "")
	for i := range 40 {
		m := filepath.Join(dir, ".git", "modules", fmt.Sprintf("m%02d", i))
		mk(filepath.Join(m, "HEAD"), "ref: refs/heads/main\n")
		mk(filepath.Join(m, "config"), "[core]\n\tbare = false\n")
		mk(filepath.Join(m, "refs", "heads", "x"), "")
		for o := range 256 {
			mk(filepath.Join(m, "objects", fmt.Sprintf("%02x", o), strings.Repeat("0", 38)), "x")
		}
	}
	for _, cold := range []bool{false, true} {
		name := "cached"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if cold {
					linkFree = newStampCache[dirEntryList](maxCachedDirs)
				}
				if m := GitConfigs([]string{dir}); m[dir] != "" {
					b.Fatalf("not judged clean: %s", m[dir])
				}
			}
		})
	}
}
