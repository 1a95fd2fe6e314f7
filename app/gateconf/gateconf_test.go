package gateconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/permission"
)

func TestBuiltinRulesOff(t *testing.T) {
	tests := []struct {
		value   string
		off     bool
		wantErr bool
	}{
		{"", false, false}, {"on", false, false}, {" ON ", false, false}, {"1", false, false}, {"true", false, false}, {"yes", false, false},
		{"off", true, false}, {"Off", true, false}, {"0", true, false}, {"false", true, false}, {"no", true, false},
		{"maybe", false, true}, {"of", false, true},
	}
	for _, tc := range tests {
		off, err := BuiltinRulesOff(func(k string) string {
			if k == BuiltinRulesEnv {
				return tc.value
			}
			return ""
		})
		if off != tc.off || (err != nil) != tc.wantErr {
			t.Errorf("%s=%q: off %v, err %v; want off %v, error %v", BuiltinRulesEnv, tc.value, off, err, tc.off, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "want on or off") {
			t.Errorf("%q: the error does not say what is wanted: %v", tc.value, err)
		}
	}
}

func TestModeOf(t *testing.T) {
	tests := []struct {
		flag, conf string
		want       permission.Mode
		wantErr    bool
	}{
		{"", "", permission.ModeDefault, false},
		{"default", "", permission.ModeDefault, false},
		{"plan", "", permission.ModePlan, false},
		{"default", "plan", permission.ModePlan, false}, // the merged configuration holds --mode when it was given
		{"plan", "accept-edits", permission.ModeAcceptEdits, false},
		{"sideways", "", "", true},
		{"default", "sideways", "", true},
	}
	for _, tc := range tests {
		m, err := ModeOf(tc.flag, tc.conf)
		if m != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ModeOf(%q, %q) = %q, %v; want %q, error %v", tc.flag, tc.conf, m, err, tc.want, tc.wantErr)
		}
	}
}

// TestLoadConfig: the files are found from cwd (the project's beside its
// policy, the user's under configHome), merged, and a file that does not
// load is an error naming it.
func TestLoadConfig(t *testing.T) {
	base := t.TempDir()
	configHome, proj := filepath.Join(base, "config"), filepath.Join(base, "proj")
	sub := filepath.Join(proj, "sub")
	for _, d := range []string{filepath.Join(configHome, "custom-agent"), filepath.Join(proj, ".git"), filepath.Join(proj, ".custom-agent"), sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	user := filepath.Join(configHome, "custom-agent", "config.json")
	if err := os.WriteFile(user, []byte(`{"version": 1, "mode": "plan"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	files, err := FindConfig(sub, configHome, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if files.User != user || files.Project != filepath.Join(proj, ".custom-agent", "config.json") || files.ProjectRoot != proj {
		t.Errorf("FindConfig(%s) = %+v", sub, files)
	}
	c, err := LoadConfig(sub, configHome, getenv, config.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != "plan" {
		t.Errorf("the user file's mode: %q", c.Mode)
	}
	if c, err = LoadConfig(sub, configHome, getenv, config.Flags{Mode: "default"}); err != nil || c.Mode != "default" {
		t.Errorf("--mode default over the file's plan: %v, %v", c, err)
	}
	if err := os.WriteFile(user, []byte(`{"version": 1, "modee": "plan"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(sub, configHome, getenv, config.Flags{}); err == nil || !strings.Contains(err.Error(), user+":1:") {
		t.Errorf("a file that does not load: %v", err)
	}
}
