package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// TestBrowserWalkFailSafeMerges: past maxFailSafeHidden, the directories
// the walk did not read are merged into their parents, never into one
// that holds the working directory, and nothing of the working directory
// is hidden.
func TestBrowserWalkFailSafeMerges(t *testing.T) {
	home := t.TempDir()
	var dirs []walkDir
	for i := range 400 {
		rel := []string{".w", "x", fmt.Sprint(i), "sub"}
		p := filepath.Join(append([]string{home}, rel...)...)
		dirs = append(dirs, walkDir{phys: p, logical: p, rel: rel})
	}
	if got := failSafe(home, dirs, nil); !slices.Equal(got, []string{filepath.Join(home, ".w", "x")}) {
		t.Errorf("failSafe = %q, want them merged into ~/.w/x", got)
	}
	cwd := filepath.Join(home, ".w", "x", "7", "sub", "proj")
	got := failSafe(home, dirs, []string{cwd})
	for _, h := range got {
		if pathrisk.Within(cwd, h) || pathrisk.Within(h, cwd) {
			t.Fatalf("failSafe hides %s, which holds or is in the working directory %s", h, cwd)
		}
	}
	if len(got) < 399 {
		t.Errorf("failSafe = %d paths, want the 399 directories not on the way to the working directory kept apart", len(got))
	}
	// Those on the way to it: their other entries (none here) only.
	if slices.Contains(got, filepath.Join(home, ".w", "x", "7", "sub")) {
		t.Errorf("failSafe hides ~/.w/x/7/sub, which holds the working directory")
	}
	// Not merged into a directory applications share.
	shared := []walkDir{}
	for i := range 300 {
		rel := []string{".config", fmt.Sprint(i)}
		p := filepath.Join(home, ".config", fmt.Sprint(i))
		shared = append(shared, walkDir{phys: p, logical: p, rel: rel})
	}
	if got := failSafe(home, shared, nil); len(got) != 300 {
		t.Errorf("failSafe = %d paths, want the 300 applications' directories, not ~/.config", len(got))
	}
}
