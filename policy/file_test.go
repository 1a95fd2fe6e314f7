package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

func TestParse(t *testing.T) {
	t.Parallel()
	rules, err := policy.Parse("p.json", []byte(`{"version":1,"rules":[
		{"id":"tests","tool":"shell","command":"npm test","decision":"allow"},
		{"tool":"read_file","path":"~/.aws/**","decision":"deny"}]}`), permission.LevelProject)
	if err != nil {
		t.Fatal(err)
	}
	want := []permission.Rule{
		{ID: "tests", Level: permission.LevelProject, Source: "p.json", Tool: "shell", Command: "npm test", Decision: permission.Allow},
		{ID: "p.json#2", Level: permission.LevelProject, Source: "p.json", Tool: "read_file", Path: "~/.aws/**", Decision: permission.Deny},
	}
	if diff := gocmp.Diff(want, rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, has string }{
		{"syntax error with line", "{\"version\":1,\n\"rules\":[,]}", "p.json:2:"},
		{"unknown field", `{"version":1,"rulez":[]}`, "unknown field"},
		{"wrong version", `{"version":2,"rules":[]}`, "version 2"},
		{"missing version", `{"rules":[]}`, "version 0"},
		{"bad rule", `{"version":1,"rules":[{"id":"x","tool":"shell","decision":"sometimes"}]}`, `rule "x": decision`},
		{"trailing data", `{"version":1,"rules":[]} {}`, "trailing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := policy.Parse("p.json", []byte(tc.src), permission.LevelUser)
			var pe *policy.Error
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.has) {
				t.Errorf("Parse = %v, want a *policy.Error mentioning %q", err, tc.has)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(p, []byte(`{"version":1,"rules":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if rules, err := policy.LoadFile(p, permission.LevelUser); err != nil || len(rules) != 0 {
		t.Errorf("LoadFile = %v, %v", rules, err)
	}
	if _, err := policy.LoadFile(p+".missing", permission.LevelUser); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
