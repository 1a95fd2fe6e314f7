package checkcmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/datadir"
)

// TestCheckerKnowsTheDataDir: check and the hook gate give the engine the
// data directory (--data-dir, else $CUSTOM_AGENT_DATA_DIR), so a read of
// serve's token there is denied as custom-agent's own data.
func TestCheckerKnowsTheDataDir(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	info, _ := permission.Builtin("read_file")
	for name, o := range map[string]Options{
		"flag": {Cwd: cwd, DataDir: data, Getenv: func(string) string { return "" }},
		"env": {Cwd: cwd, Getenv: func(k string) string {
			if k == datadir.EnvVar {
				return data
			}
			return ""
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := NewChecker(o)
			if err != nil {
				t.Fatal(err)
			}
			d := c.Decide(c.RequestFor(info, map[string]any{"path": filepath.Join(data, "serve-1234.token")}, "", permission.ModeDefault))
			if d.Decision != permission.Deny || !strings.Contains(d.Reason, "custom-agent's own data") {
				t.Fatalf("decision = %s (%s), want deny as custom-agent's own data", d.Decision, d.Reason)
			}
		})
	}
}
