package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCustomDataDirHidden (third serve review, left-over): a data
// directory given by --data-dir or $CUSTOM_AGENT_DATA_DIR, outside home
// or inside the working directory (serve --cwd $HOME), is hidden like the
// default one: serve's script token there cannot be read, nor found by a
// search of the project.
func TestCustomDataDirHidden(t *testing.T) {
	for _, where := range []string{"outside home", "inside the project"} {
		t.Run(where, func(t *testing.T) {
			w := newWorld(t)
			w.dataDir = filepath.Join(w.root, "srv", "agent-data")
			if where == "inside the project" {
				w.dataDir = filepath.Join(w.proj, "agent-data")
			}
			must(t, os.MkdirAll(w.dataDir, 0o700))
			must(t, os.WriteFile(filepath.Join(w.dataDir, "serve-1234.token"), []byte(canary), 0o600))
			r := w.sh(t, ReadOnly, "cat "+shellQuote(filepath.Join(w.dataDir, "serve-1234.token")))
			check(t, escape{want: denied}, r)
			r = w.sh(t, Workspace, "grep -rs CANARY "+shellQuote(filepath.Dir(w.dataDir))+" | grep -v '^Binary'; true")
			if strings.Contains(r.out, canary) {
				t.Fatalf("the canary reached the output:\n%s", r.out)
			}
		})
	}
}
