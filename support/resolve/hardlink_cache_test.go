package resolve

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// credRemembered reports whether what was read of dir for the credential
// files of env is remembered at dir's present stamp.
func credRemembered(t *testing.T, env pathrisk.Env, dir string) bool {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	_, ok := credDirScans.get(credEnvKey(env)+dir, dirStamp(&st))
	return ok
}

// TestHardLinkRacyWindow: the directories read to find the credential a
// hard link opens follow the stamp cache's racy-window rule. One changed
// within the window is not remembered, so a credential file added or
// replaced in the same tick of the file system's clock, which its stamp
// may not show, is read at the next call; one older than the window is
// remembered and not read again while its stamp holds.
func TestHardLinkRacyWindow(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	proj := filepath.Join(home, "proj")
	ssh := filepath.Join(home, ".ssh")
	for _, d := range []string{ssh, proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key := filepath.Join(ssh, "id_rsa")
	if err := os.WriteFile(key, []byte("KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(proj, "notes.txt")
	if err := os.Link(key, link); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}
	env := pathrisk.Env{Home: home, Cwd: proj}
	tests := []struct {
		name       string
		window     time.Duration
		remembered bool
	}{
		{"changed within the window", time.Hour, false},
		{"older than the window", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer SetRacyWindow(tc.window)()
			credDirScans = newStampCache[credScan](4096)
			if got := hardLinkedCredential(link, env); got != key {
				t.Fatalf("hardLinkedCredential(%s) = %q, want %q", link, got, key)
			}
			for _, d := range []string{home, ssh} {
				if got := credRemembered(t, env, d); got != tc.remembered {
					t.Errorf("%s remembered = %v, want %v", d, got, tc.remembered)
				}
			}
		})
	}
}
