package pathrisk

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestInDataDir: the data directories a tree walk must not enter, the ones
// Classify judges credential as custom-agent's own data.
func TestInDataDir(t *testing.T) {
	t.Parallel()
	env := Env{Cwd: "/w", Home: "/home/u", DataDir: "/w/cadata"}
	for _, tc := range []struct {
		p    string
		env  Env
		want bool
	}{
		{"/w/cadata", env, true},
		{"/w/cadata/sha256/ab", env, true},
		{"/w/CAData", env, true}, // any letter case, as Classify
		{"/w/cadata2", env, false},
		{"/w", env, false},
		{"/home/u/.local/share/custom-agent", env, true}, // the default, always
		{"/home/u/.local/share/custom-agent/artifacts", env, true},
		{"/home/other/.local/share/custom-agent", env, true},
		{"/root/.local/share/custom-agent", env, true},
		{"/home/u/.local/share", env, false},
		{"/w/.local/share/custom-agent", env, false}, // not a home
		{"/w/cadata", Env{Cwd: "/w", Home: "/home/u"}, false},
		{"/w/cadata", Env{Cwd: "/w", DataDir: "/"}, false},
	} {
		if got := InDataDir(tc.p, tc.env); got != tc.want {
			t.Errorf("InDataDir(%q, DataDir %q) = %v, want %v", tc.p, tc.env.DataDir, got, tc.want)
		}
		if tc.want {
			if l, _ := Classify(PathFacts{Raw: tc.p + "/x"}, tc.env); l != risk.Credential {
				t.Errorf("Classify(%q) = %v, but InDataDir says it is in a data directory", tc.p+"/x", l)
			}
		}
	}
}
