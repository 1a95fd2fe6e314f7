package enforce

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGuardLinksAfterTheCall: removeGuarded on a tree as a call left it.
// A link where a guarded directory or a kept entry was is removed as a
// link (what is behind it, inside the tree or out, stays), and a link
// kept since the plan, to the same target, stays.
func TestGuardLinksAfterTheCall(t *testing.T) {
	do := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mkdir := func(dir, rel string) { do(os.MkdirAll(filepath.Join(dir, rel), 0o755)) }
	write := func(dir, rel string) { do(os.WriteFile(filepath.Join(dir, rel), []byte("x\n"), 0o644)) }
	link := func(dir, target, rel string) { do(os.Symlink(target, filepath.Join(dir, rel))) }
	rename := func(dir, from, to string) { do(os.Rename(filepath.Join(dir, from), filepath.Join(dir, to))) }
	remove := func(dir, rel string) { do(os.RemoveAll(filepath.Join(dir, rel))) }
	guarded := func(n string) bool { return strings.EqualFold(n, "conftest.py") || strings.EqualFold(n, ".npmrc") }
	cases := []struct {
		name    string
		before  func(cwd, out string) // the tree at plan time
		links   map[string]string     // GuardLinks, relative
		call    func(cwd, out string) // what the command did
		removed []string              // named in the note, in order
		kept    []string              // still there, relative to cwd ("../out/…": outside)
	}{
		{
			name:   "a guarded directory replaced by a link to its new name",
			before: func(cwd, _ string) { mkdir(cwd, "tests") },
			call: func(cwd, _ string) {
				rename(cwd, "tests", "tests.d")
				link(cwd, "tests.d", "tests")
				write(cwd, "tests.d/conftest.py")
			},
			removed: []string{"tests"},
			kept:    []string{"tests.d/conftest.py"},
		},
		{
			name:   "a guarded directory replaced by a link out of the tree",
			before: func(cwd, _ string) { mkdir(cwd, "web") },
			call: func(cwd, out string) {
				remove(cwd, "web")
				link(cwd, out, "web")
			},
			removed: []string{"web"},
			kept:    []string{"../out/.npmrc"},
		},
		{
			name:   "a kept .cargo replaced by a link",
			before: func(cwd, _ string) { mkdir(cwd, "sub/.cargo") },
			call: func(cwd, _ string) {
				rename(cwd, "sub/.cargo", "sub/c")
				link(cwd, "c", "sub/.cargo")
				write(cwd, "sub/c/config.toml")
			},
			removed: []string{"sub/.cargo"},
		},
		{
			name: "a kept link to the same target",
			before: func(cwd, _ string) {
				mkdir(cwd, "sub/c")
				link(cwd, "c", "sub/.cargo")
			},
			links: map[string]string{"sub/.cargo": "c"},
			call:  func(string, string) {},
			kept:  []string{"sub/.cargo", "sub/c"},
		},
		{
			name: "a kept link retargeted",
			before: func(cwd, _ string) {
				mkdir(cwd, "sub/c")
				link(cwd, "c", "sub/.cargo")
			},
			links: map[string]string{"sub/.cargo": "c"},
			call: func(cwd, _ string) {
				remove(cwd, "sub/.cargo")
				mkdir(cwd, "sub/d")
				link(cwd, "d", "sub/.cargo")
				write(cwd, "sub/d/config.toml")
			},
			removed: []string{"sub/.cargo"},
			kept:    []string{"sub/d/config.toml"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			cwd, out := filepath.Join(base, "cwd"), filepath.Join(base, "out")
			mkdir(base, "cwd")
			mkdir(base, "out")
			write(out, ".npmrc")
			tc.before(cwd, out)
			p := Profile{Cwd: cwd, GuardPaths: []string{".cargo/config.toml"}}
			_ = filepath.WalkDir(cwd, func(path string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					p.GuardDirs = append(p.GuardDirs, path)
				}
				if err == nil && (guarded(d.Name()) || d.Name() == ".cargo") {
					p.GuardKeep = append(p.GuardKeep, path)
				}
				return nil
			})
			for l, target := range tc.links {
				if p.GuardLinks == nil {
					p.GuardLinks = map[string]string{}
				}
				p.GuardLinks[filepath.Join(cwd, l)] = target
			}
			tc.call(cwd, out)
			err := removeGuarded(p, guarded)
			want := ""
			if len(tc.removed) > 0 {
				quoted := make([]string, len(tc.removed))
				for i, r := range tc.removed {
					quoted[i] = strconv.Quote(r)
				}
				want = "removed " + strings.Join(quoted, ", ") + " ("
			}
			if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
				t.Errorf("removeGuarded = %v, want a note %q", err, want)
			}
			for _, q := range tc.removed {
				if _, err := os.Lstat(filepath.Join(cwd, q)); err == nil {
					t.Errorf("%s is still there", q)
				}
			}
			for _, q := range tc.kept {
				if _, err := os.Lstat(filepath.Join(cwd, q)); err != nil {
					t.Errorf("%s is gone: %v", q, err)
				}
			}
		})
	}
}
