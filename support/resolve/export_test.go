package resolve

import (
	"path/filepath"
	"time"
)

// PathUncached is Path as it was before Resolver: filepath.EvalSymlinks of
// the whole prefix at every step, nothing remembered. The tests hold a
// Resolver's answers against it.
func PathUncached(p string) string { return walk(p, filepath.EvalSymlinks) }

// ReadIndexNames is readIndexNames, for the tests.
var ReadIndexNames = readIndexNames

// GitConfigList parses configuration text as git config --list -z prints
// it: "name\nvalue\x00" for each variable, "name\x00" for one with no
// value, name being section[.subsection].key.
func GitConfigList(b []byte) (string, error) {
	var out []byte
	err := parseGitConfig(b, func(v gitConfigVar) {
		if v.section != "" {
			out = append(out, v.section...)
			if v.subsection != "" {
				out = append(out, '.')
				out = append(out, v.subsection...)
			}
			out = append(out, '.')
		}
		out = append(out, v.key...)
		if v.hasValue {
			out = append(out, '\n')
			out = append(out, v.value...)
		}
		out = append(out, 0)
	})
	return string(out), err
}

// SetRacyWindow sets how recently changed a directory may be and still be
// remembered as holding no link, and returns a function putting it back.
func SetRacyWindow(d time.Duration) func() {
	old := racyWindow
	racyWindow = d
	return func() { racyWindow = old }
}
