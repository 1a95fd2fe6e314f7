package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
)

// Web review 4, finding 4: the walk for the profiles of browsers no table
// names missed a symlinked ~/.config, a profile seven levels deep, and
// every profile once a workspace process had written 30,001 files in a
// working directory in the home's application data; and it did not know
// the directories where pages keep their data.

func writeFiles(t *testing.T, base string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(base, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(canary), 0o600))
	}
}

func wantReadable(t *testing.T, w *world, kind Kind, path string) {
	t.Helper()
	r := w.sh(t, kind, "cat "+shellQuote(path))
	if r.code != 0 || !strings.Contains(r.out, "plain notes") {
		t.Fatalf("%s: exit %d, want it read:\n%s", path, r.code, r.out)
	}
}

// (a) ~/.config is a link into a dotfiles repository.
func TestBrowserWalkSymlinkedConfig(t *testing.T) {
	w := newWorld(t)
	dots := filepath.Join(w.home, "dotfiles", "config")
	must(t, os.MkdirAll(filepath.Dir(dots), 0o755))
	must(t, os.Rename(filepath.Join(w.home, ".config"), dots))
	must(t, os.Symlink("dotfiles/config", filepath.Join(w.home, ".config")))
	profile := []string{
		"newbrowser/Default/History",
		"newbrowser/Default/Cookies",
		"newbrowser/Default/Session Storage/000003.log",
	}
	writeFiles(t, dots, profile...)
	must(t, os.MkdirAll(filepath.Join(dots, "someapp"), 0o755))
	must(t, os.WriteFile(filepath.Join(dots, "someapp", "settings.json"), []byte("plain notes\n"), 0o600))
	for _, f := range profile {
		for _, via := range []string{"~/.config/", "~/dotfiles/config/"} {
			t.Run(via+f, func(t *testing.T) {
				check(t, escape{want: denied}, w.sh(t, ReadOnly, "cat "+via+shellQuote(f)))
			})
		}
	}
	t.Run("a search finds none", func(t *testing.T) {
		r := w.sh(t, ReadOnly, "grep -rs CANARY ~/.config/ ~/dotfiles/ | grep -v '^Binary'; true")
		if strings.Contains(r.out, canary) {
			t.Fatalf("the canary reached the output:\n%s", r.out)
		}
	})
	t.Run("the rest stays readable", func(t *testing.T) {
		wantReadable(t, w, ReadOnly, filepath.Join(w.home, ".config", "someapp", "settings.json"))
	})
	// The working directory is the dotfiles repository: the walk leaves
	// it to walkProject, which judges its files by the path through the
	// link.
	w.proj = filepath.Join(w.home, "dotfiles")
	for _, kind := range []Kind{ReadOnly, Workspace} {
		t.Run(fmt.Sprintf("from the dotfiles repository, %s", kind), func(t *testing.T) {
			for _, f := range profile {
				check(t, escape{want: denied}, w.sh(t, kind, "cat config/"+shellQuote(f)))
			}
			wantReadable(t, w, kind, "config/someapp/settings.json")
		})
	}
}

// (b) Profiles deeper than six levels beneath the home.
func TestBrowserWalkDeepProfiles(t *testing.T) {
	w := newWorld(t)
	files := []string{
		".local/share/vendor/app/User Data/Default/History",
		".local/share/vendor/app/User Data/Default/Cookies",
		".var/app/org.new.Browser/config/newbrowser/Default/History",
		"snap/newbrowser/current/.config/newbrowser/Default/Top Sites",
		".config/vendor/app/channel/User Data/Default/History",
	}
	writeFiles(t, w.home, files...)
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			check(t, escape{want: denied}, w.sh(t, ReadOnly, "cat ~/"+shellQuote(f)))
		})
	}
}

// (c) The process's own files in a working directory in the home's
// application data do not spend the walk's budget.
func TestBrowserWalkBudgetNotSpentByTheWorkspace(t *testing.T) {
	w := newWorld(t)
	writeFiles(t, w.home, ".zbrowser/Default/History")
	w.proj = filepath.Join(w.home, ".dotfiles")
	must(t, os.MkdirAll(w.proj, 0o755))
	check(t, escape{want: denied}, w.sh(t, ReadOnly, "cat ~/.zbrowser/Default/History"))
	r := w.sh(t, Workspace, fmt.Sprintf("seq 1 %d | xargs touch && ls | wc -l", browserWalkBudget+1))
	if !strings.Contains(r.out, fmt.Sprint(browserWalkBudget+1)) {
		t.Fatalf("the files were not written (exit %d):\n%s", r.code, r.out)
	}
	check(t, escape{want: denied}, w.sh(t, ReadOnly, "cat ~/.zbrowser/Default/History"))
	check(t, escape{want: denied}, w.sh(t, Workspace, "cat ~/.zbrowser/Default/History"))
}

// (c) When the home's own application data is larger than the budget,
// what the walk did not read is hidden, not left readable; the working
// directory stays usable even when it lies there.
func TestBrowserWalkBudgetFailsSafe(t *testing.T) {
	w := newWorld(t)
	// Read at the third level, before anything deeper.
	big := filepath.Join(w.home, ".big", "many")
	must(t, os.MkdirAll(big, 0o755))
	for i := range browserWalkBudget + 1 {
		f, err := os.Create(filepath.Join(big, fmt.Sprint(i)))
		must(t, err)
		f.Close()
	}
	writeFiles(t, w.home, ".zbrowser/a/b/Default/History", ".dotfiles/x/y/newbrowser/Default/History")
	w.proj = filepath.Join(w.home, ".dotfiles", "x", "y", "proj")
	must(t, os.MkdirAll(w.proj, 0o755))
	must(t, os.WriteFile(filepath.Join(w.proj, "notes.md"), []byte("plain notes\n"), 0o600))
	for _, f := range []string{".zbrowser/a/b/Default/History", ".dotfiles/x/y/newbrowser/Default/History"} {
		t.Run(f, func(t *testing.T) {
			check(t, escape{want: denied}, w.sh(t, ReadOnly, "cat ~/"+shellQuote(f)))
		})
	}
	t.Run("the working directory", func(t *testing.T) {
		wantReadable(t, w, Workspace, "notes.md")
		r := w.sh(t, Workspace, "echo made > made.txt && cat made.txt")
		if r.code != 0 || !strings.Contains(r.out, "made") {
			t.Fatalf("exit %d, want the write to work:\n%s", r.code, r.out)
		}
	})
}

// (d) Where pages keep their data: a profile that holds nothing else
// (an Electron application's Local Storage) is hidden too.
func TestBrowserWalkPageStorage(t *testing.T) {
	w := newWorld(t)
	files := []string{
		".config/someapp/Session Storage/000003.log",
		".config/chatapp/Local Storage/leveldb/000005.ldb",
		".config/newbrowser/Default/IndexedDB/https_x_0.indexeddb.leveldb/000003.log",
	}
	writeFiles(t, w.home, files...)
	must(t, os.WriteFile(filepath.Join(w.home, ".config", "chatapp", "settings.json"), []byte("plain notes\n"), 0o600))
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			check(t, escape{want: denied}, w.sh(t, ReadOnly, "cat ~/"+shellQuote(f)))
		})
	}
	t.Run("the application's other files", func(t *testing.T) {
		wantReadable(t, w, ReadOnly, filepath.Join(w.home, ".config", "chatapp", "settings.json"))
	})
}

// (a) A link of the application data inside the working directory (the
// walk leaves the working directory to walkProject) is still followed:
// ~/.local/share leads out of it, and ~/.config leads into the home's
// dotfiles when the working directory is the home.
func TestBrowserWalkLinksBelowTheWorkingDirectory(t *testing.T) {
	w := newWorld(t)
	share := filepath.Join(w.home, "data", "share")
	must(t, os.MkdirAll(share, 0o755))
	must(t, os.RemoveAll(filepath.Join(w.home, ".local", "share")))
	must(t, os.Symlink(share, filepath.Join(w.home, ".local", "share")))
	writeFiles(t, share, "newbrowser/Default/History", "chatapp/Local Storage/leveldb/000005.ldb")
	dots := filepath.Join(w.home, "dotfiles", "config")
	must(t, os.MkdirAll(filepath.Dir(dots), 0o755))
	must(t, os.Rename(filepath.Join(w.home, ".config"), dots))
	must(t, os.Symlink("dotfiles/config", filepath.Join(w.home, ".config")))
	writeFiles(t, dots, "newbrowser/Default/History")
	files := []string{
		"~/.local/share/newbrowser/Default/History", "~/data/share/newbrowser/Default/History",
		"~/data/share/chatapp/Local\\ Storage/leveldb/000005.ldb",
		"~/.config/newbrowser/Default/History", "~/dotfiles/config/newbrowser/Default/History",
	}
	for _, c := range []struct {
		cwd  string
		kind Kind
	}{{".local", Workspace}, {".local", ReadOnly}} {
		w.proj = filepath.Join(w.home, c.cwd)
		t.Run(fmt.Sprintf("cwd ~/%s, %s", c.cwd, c.kind), func(t *testing.T) {
			for _, f := range files {
				check(t, escape{want: denied}, w.sh(t, c.kind, "cat "+f))
			}
		})
	}

	// A read-only process may start in the home itself (the world's
	// runner plans a workspace first, which the home cannot be).
	t.Run("cwd ~, read-only plan", func(t *testing.T) {
		pl := NewPlanner(Env{Home: w.home, DataDir: filepath.Join(w.home, ".local", "share", "custom-agent")})
		p, err := pl.Plan(ReadOnly, false, w.home)
		must(t, err)
		for _, f := range []string{
			filepath.Join(share, "newbrowser/Default/History"),
			filepath.Join(share, "chatapp/Local Storage/leveldb/000005.ldb"),
			filepath.Join(dots, "newbrowser/Default/History"),
		} {
			covered := false
			for _, h := range p.Hidden {
				covered = covered || pathrisk.Within(f, h)
			}
			if !covered {
				t.Errorf("%s is not hidden; hidden: %q", f, p.Hidden)
			}
		}
	})
}

// A profile that holds the working directory is hidden but for the way
// there: the process still works in its directory.
func TestBrowserWalkProfileHoldsTheWorkingDirectory(t *testing.T) {
	w := newWorld(t)
	writeFiles(t, w.home, ".config/app/History", ".config/app/Sessions/Session_1", ".config/app/Default/Cookies")
	w.proj = filepath.Join(w.home, ".config", "app", "proj")
	must(t, os.MkdirAll(w.proj, 0o755))
	must(t, os.WriteFile(filepath.Join(w.proj, "notes.md"), []byte("plain notes\n"), 0o600))
	for _, f := range []string{".config/app/History", ".config/app/Sessions/Session_1", ".config/app/Default/Cookies"} {
		check(t, escape{want: denied}, w.sh(t, ReadOnly, "cat ~/"+shellQuote(f)))
	}
	wantReadable(t, w, ReadOnly, "notes.md")
	r := w.sh(t, Workspace, "echo made > made.txt && cat made.txt")
	if r.code != 0 || !strings.Contains(r.out, "made") {
		t.Fatalf("exit %d, want the write to work:\n%s", r.code, r.out)
	}
}
