package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The checks after a workspace call run on the host, unconfined: what the
// command left in a git directory must never make them read, move or
// remove anything outside it, print what they read, or wait. From the
// third sandbox review (R1, R2, R3, R4, R7).

// snapshotTree maps every entry beneath dir to its content ("dir" for a
// directory), to tell afterwards that nothing there moved or changed.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			out[rel] = "dir"
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	}))
	return out
}

func TestLinkAsModulesOrWorktreesMovesNothing(t *testing.T) {
	l := newGitLab(t)
	for _, sub := range []string{"modules", "worktrees"} {
		t.Run(sub, func(t *testing.T) {
			// The home's own secrets, and a victim with what the check
			// used to take for git directories: files, a directory
			// with a config, a subdirectory.
			victim := filepath.Join(l.w.root, "victim-"+sub)
			for rel, body := range map[string]string{"notes.txt": "notes\n", "kube/config": "apiVersion: " + canary + "\n", "deep/a/b": "b\n"} {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(victim, rel)), 0o755))
				must(t, os.WriteFile(filepath.Join(victim, rel), []byte(body), 0o644))
			}
			homeBefore, victimBefore := snapshotTree(t, l.w.home), snapshotTree(t, victim)
			for i, target := range []string{l.w.home, victim} {
				dir := l.repo(t, sub+strings.Repeat("x", i))
				_, err := l.run(t, dir, `ln -s `+target+` .git/`+sub)
				if err == nil || !strings.Contains(err.Error(), "a link, which points git at another directory") {
					t.Errorf("Done = %v; want the link named and put aside", err)
				} else if strings.Contains(err.Error(), canary) {
					t.Errorf("the note holds what the check read outside the project: %v", err)
				}
				if fi, err := os.Lstat(filepath.Join(dir, ".git", sub)); err == nil {
					t.Errorf(".git/%s is still there (%v) after the call", sub, fi.Mode())
				}
				// What was put aside is the link itself.
				asides, _ := filepath.Glob(filepath.Join(dir, ".git", "put-aside-by-custom-agent-*", sub))
				if len(asides) != 1 {
					t.Fatalf("put aside %q; want the one link", asides)
				}
				if fi, err := os.Lstat(asides[0]); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("%s is not the link that was put aside: %v %v", asides[0], fi, err)
				}
			}
			if now := snapshotTree(t, l.w.home); !mapsEqual(now, homeBefore) {
				t.Errorf("the home changed:\nbefore %v\nafter  %v", homeBefore, now)
			}
			if now := snapshotTree(t, victim); !mapsEqual(now, victimBefore) {
				t.Errorf("the directory the link named changed:\nbefore %v\nafter  %v", victimBefore, now)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestRefLinkedToASecretIsNotRead(t *testing.T) {
	l := newGitLab(t)
	key := filepath.Join(l.w.home, ".ssh", "id_rsa")
	dir := l.repo(t, "reflink")
	_, err := l.run(t, dir, `ln -s `+key+` .git/refs/heads/zz`)
	if err == nil || !strings.Contains(err.Error(), `refs/heads/zz`) {
		t.Fatalf("Done = %v; want the new link among the refs undone", err)
	}
	if strings.Contains(err.Error(), canary) {
		t.Errorf("the note the model reads holds the file the ref links to:\n%v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git", "refs", "heads", "zz")); err == nil {
		t.Error("the link among the refs is still there")
	}
	if b, err := os.ReadFile(key); err != nil || string(b) != canary {
		t.Errorf("the key changed: %q %v", b, err)
	}
}

// done waits for f, failing the test if it has not returned in a minute:
// the checks must never wait on a pipe, however slow the machine.
func done(t *testing.T, what string, f func(), unblock func()) {
	t.Helper()
	ch := make(chan struct{})
	go func() { f(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Errorf("%s has not returned after a minute: it waits on a pipe", what)
		unblock()
		<-ch
	}
}

func TestRefLinkedToAPipeDoesNotWait(t *testing.T) {
	l := newGitLab(t)
	dir := l.repo(t, "reffifo")
	fifo := filepath.Join(dir, "ff")
	var err error
	done(t, "the check after the call", func() {
		_, err = l.run(t, dir, `mkfifo `+fifo+` && ln -s `+fifo+` .git/refs/heads/yy`)
	}, func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	})
	if err == nil || !strings.Contains(err.Error(), "refs/heads/yy") {
		t.Errorf("Done = %v; want the new link among the refs undone", err)
	}
}

func TestPipeAsHeadOfANewRepositoryIsPutAside(t *testing.T) {
	l := newGitLab(t)
	dir := l.repo(t, "headfifo")
	head := filepath.Join(dir, "sub", ".git", "HEAD")
	_, err := l.run(t, dir, `git init -q sub && rm sub/.git/HEAD && mkfifo sub/.git/HEAD`)
	if err == nil || !strings.Contains(err.Error(), "its HEAD is not a plain file") {
		t.Errorf("Done = %v; want the new repository put aside for its HEAD", err)
	}
	if _, err := os.Lstat(head); err == nil {
		t.Error("the new repository with a pipe as HEAD is still there")
	}
	// Even with one there (made outside a call), the next plan neither
	// waits nor fails.
	must(t, os.MkdirAll(filepath.Dir(head), 0o755))
	_ = os.Remove(head)
	must(t, syscall.Mkfifo(head, 0o644))
	for _, d := range []string{"objects", "refs"} {
		must(t, os.MkdirAll(filepath.Join(dir, "sub", ".git", d), 0o755))
	}
	var perr error
	done(t, "the plan", func() { _, perr = l.pl.Plan(Workspace, false, dir) }, func() {
		if f, err := os.OpenFile(head, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	if perr != nil {
		t.Errorf("plan: %v", perr)
	}
}
