package datadir

import (
	"errors"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	tests := []struct {
		name string
		flag string
		env  map[string]string
		home func() (string, error)
		want string
		err  bool
	}{
		{"flag wins", "/x/data", map[string]string{EnvVar: "/env", "XDG_DATA_HOME": "/xdg"}, home, "/x/data", false},
		{"env beats xdg", "", map[string]string{EnvVar: "/env", "XDG_DATA_HOME": "/xdg"}, home, "/env", false},
		{"xdg", "", map[string]string{"XDG_DATA_HOME": "/xdg"}, home, "/xdg/custom-agent", false},
		{"relative xdg ignored", "", map[string]string{"XDG_DATA_HOME": "rel"}, home, "/home/u/.local/share/custom-agent", false},
		{"default", "", nil, home, "/home/u/.local/share/custom-agent", false},
		{"cleaned", "/x//data/../d", nil, home, "/x/d", false},
		{"no home", "", nil, noHome, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Resolve(tc.flag, func(k string) string { return tc.env[k] }, tc.home)
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("Resolve = %q, %v; want %q (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}
