package resolve_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custom-agent/custom-agent/support/resolve"
)

// TestDanglingLinkThroughADirectoryLink: with d a link to . and l a
// dangling link to ../x, the kernel reads d/l as the l beside d, whose
// ../x lies beside the project, not inside it; the path is resolved as the
// kernel resolves it, whichever resolver does it.
func TestDanglingLinkThroughADirectoryLink(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(proj, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../x", filepath.Join(proj, "l")); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "x")
	if got := (&resolve.Resolver{}).Path(filepath.Join(proj, "d", "l")); got != want {
		t.Errorf("Resolver: d/l resolves to %s, want %s", got, want)
	}
	if got := resolve.PathUncached(filepath.Join(proj, "d", "l")); got != want {
		t.Errorf("uncached: d/l resolves to %s, want %s", got, want)
	}
	if got := (&resolve.Resolver{}).Path(filepath.Join(proj, "l")); got != want {
		t.Errorf("l resolves to %s, want %s", got, want)
	}
}
