package enforce

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Tests of the removals after a call when the command made a directory
// read-only (sbx-review-3, R8): root ignores directory modes, so as root
// these tests run themselves again as uid 65534 (asNobody).

// nobodyDirEnv names, in a test run again as uid 65534, the directory the
// root run prepared for it.
const nobodyDirEnv = "ENFORCE_TEST_NOBODY_DIR"

// asNobody reports whether the caller is to run its test here: when it
// runs as root, it runs the test again as uid 65534 in a copy of the test
// binary (setup prepares, as root, the directory the run is given:
// nobodyDir), checks that it passed, and returns false. As any other
// user the test runs here.
func asNobody(t *testing.T, setup func(dir string)) bool {
	t.Helper()
	if os.Getuid() != 0 {
		return true
	}
	if os.Getenv(nobodyDirEnv) != "" {
		t.Fatal("still root in the run as uid 65534")
	}
	dir, err := os.MkdirTemp("", "enforce-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "enforce.test")
	copyFile(t, os.Args[0], bin)
	if setup != nil {
		setup(dir)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, nobodyDirEnv + "=" + dir, "CI=" + os.Getenv("CI")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil && strings.Contains(string(out), "--- PASS: "+t.Name()):
	case err == nil && strings.Contains(string(out), "--- SKIP: "+t.Name()) && os.Getenv("CI") != "true":
		t.Skipf("skipped as uid 65534:\n%s", out)
	default:
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	return false
}

// nobodyDir is the directory the root run prepared (asNobody).
func nobodyDir() string { return os.Getenv(nobodyDirEnv) }

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	must(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	must(t, err)
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	must(t, out.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// writeTree makes the files of tree (relative to dir; a name ending in /
// is a directory) and then gives each directory of ro mode 0555, as a
// command does before it exits; a cleanup makes them writable again.
func writeTree(t *testing.T, dir string, tree, ro []string) {
	t.Helper()
	for _, f := range tree {
		p := filepath.Join(dir, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if strings.HasSuffix(f, "/") {
			must(t, os.MkdirAll(p, 0o755))
		} else {
			must(t, os.WriteFile(p, []byte("planted\n"), 0o644))
		}
	}
	for _, d := range ro {
		must(t, os.Chmod(filepath.Join(dir, d), 0o555))
	}
	t.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
	})
}

// TestRemovalReadOnlyParent: what a command made at a protected path is
// removed though it made the directory holding it read-only (the
// working directory itself included), and that directory gets its mode
// back.
func TestRemovalReadOnlyParent(t *testing.T) {
	if !asNobody(t, nil) {
		return
	}
	tests := []struct {
		name   string
		tree   []string // made by "the command"
		ro     []string // then made 0555
		absent []string // Profile.Absent
		guard  []string // Profile.GuardDirs (conftest.py and .cargo/config.toml are guarded)
		keep   []string // Profile.GuardKeep
		gone   []string
	}{
		{name: "a file in the working directory", tree: []string{".envrc"}, ro: []string{"."}, absent: []string{".envrc"}, gone: []string{".envrc"}},
		{name: "a directory in the working directory", tree: []string{".vscode/tasks.json", ".vscode/sub/x"}, ro: []string{".vscode/sub", "."}, absent: []string{".vscode"}, gone: []string{".vscode"}},
		{name: "a directory in .git", tree: []string{".git/config", ".git/rebase-merge/git-rebase-todo"}, ro: []string{".git", "."}, absent: []string{".git/rebase-merge"}, gone: []string{".git/rebase-merge"}},
		{name: "a path below a new directory", tree: []string{".claude/settings.json"}, ro: []string{".claude"}, absent: []string{".claude/settings.json"}, gone: []string{".claude/settings.json"}},
		{name: "a guarded name", tree: []string{"sub/a.py", "sub/conftest.py"}, ro: []string{"sub"}, guard: []string{"sub"}, gone: []string{"sub/conftest.py"}},
		{name: "a guarded path", tree: []string{"sub/.cargo/config.toml"}, ro: []string{"sub/.cargo", "sub"}, guard: []string{"sub"}, gone: []string{"sub/.cargo/config.toml"}},
		{name: "a guarded path in a guarded directory kept", tree: []string{"sub/.cargo/other", "sub/.cargo/config.toml"}, ro: []string{"sub/.cargo"}, guard: []string{"sub"}, keep: []string{"sub/.cargo"}, gone: []string{"sub/.cargo/config.toml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tc.tree, tc.ro)
			p := Profile{Kind: Workspace, Cwd: dir}
			for _, k := range tc.keep {
				p.GuardKeep = append(p.GuardKeep, filepath.Join(dir, k))
			}
			for _, a := range tc.absent {
				p.Absent = append(p.Absent, filepath.Join(dir, a))
			}
			for _, g := range tc.guard {
				p.GuardDirs = append(p.GuardDirs, filepath.Join(dir, g))
			}
			p.GuardPaths = []string{".cargo/config.toml"}
			guarded := func(name string) bool { return name == "conftest.py" }
			err := afterCall(&p, guarded, nil)
			var note interface{ Note() string }
			if !errors.Is(err, ErrProtectedCreated) || !errors.As(err, &note) || strings.Contains(err.Error(), "NOT") {
				t.Errorf("after the call: %v; want a note that it was removed", err)
			}
			for _, g := range tc.gone {
				if _, err := os.Lstat(filepath.Join(dir, g)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s is still there (%v)", g, err)
				}
			}
			for _, d := range tc.ro {
				fi, err := os.Lstat(filepath.Join(dir, d))
				if err == nil && fi.Mode().Perm() != 0o555 {
					t.Errorf("%s has mode %v; want its own, 0555, back", d, fi.Mode().Perm())
				}
			}
		})
	}
}

// TestRemovalFailureFailsTheCall: a protected path that still cannot be
// removed (its directory is another user's) makes the result of the call
// an error, not a note that it was removed, and the directory is left as
// it was.
func TestRemovalFailureFailsTheCall(t *testing.T) {
	if !asNobody(t, func(dir string) {
		// root's directory, read-only to others, with what "the
		// command" planted in it.
		must(t, os.Mkdir(filepath.Join(dir, "proj"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "proj", ".envrc"), []byte("planted\n"), 0o644))
		must(t, os.Mkdir(filepath.Join(dir, "proj", ".vscode"), 0o755))
		must(t, os.Chmod(filepath.Join(dir, "proj"), 0o555))
	}) {
		return
	}
	dir := filepath.Join(nobodyDir(), "proj")
	p := Profile{Kind: Workspace, Cwd: dir, Absent: []string{filepath.Join(dir, ".envrc"), filepath.Join(dir, ".vscode")}}
	err := afterCall(&p, nil, nil)
	var note interface{ Note() string }
	if !errors.Is(err, ErrProtectedKept) || errors.Is(err, ErrProtectedCreated) || errors.As(err, &note) {
		t.Fatalf("after the call: %v; want an error that is not a note", err)
	}
	for _, want := range []string{"NOT removed", ".envrc", ".vscode", "permission denied"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %q: %v", want, err)
		}
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("the directory: %v, %v; want it as it was, 0555", fi.Mode(), err)
	}
}

// TestDoneFailsWhenNotFixed: a check of the caller's (ConfineThen's
// after) that could not fix something makes Done's result an error of
// the call, not a note on it; one that fixed it all makes a note.
func TestDoneFailsWhenNotFixed(t *testing.T) {
	needSandbox(t)
	tests := []struct {
		name        string
		notes, errs []string
		kept        bool
	}{
		{name: "fixed", notes: []string{"put the refs back"}},
		{name: "not fixed", notes: []string{"put the refs back"}, errs: []string{"refs/heads/x: permission denied"}, kept: true},
		{name: "only not fixed", errs: []string{"refs/heads/x: permission denied"}, kept: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			must(t, err)
			defer null.Close()
			cmd := shCmd(dir, "true", null)
			c, err := ConfineThen(Profile{Kind: Workspace, Cwd: dir, Writable: []string{dir}}, cmd, nil, func() ([]string, []string) { return tc.notes, tc.errs })
			must(t, err)
			if !c.Started() {
				must(t, cmd.Start())
			}
			_ = cmd.Wait()
			err = c.Done()
			var note interface{ Note() string }
			isNote := errors.As(err, &note)
			switch {
			case tc.kept && (isNote || !errors.Is(err, ErrProtectedKept) || errors.Is(err, ErrProtectedCreated)):
				t.Errorf("Done = %v (a note: %v); want an error of the call", err, isNote)
			case tc.kept && !strings.Contains(err.Error(), "NOT fixed: refs/heads/x: permission denied"):
				t.Errorf("Done = %v; want what was not fixed named", err)
			case !tc.kept && (!isNote || !errors.Is(err, ErrProtectedCreated)):
				t.Errorf("Done = %v; want a note", err)
			}
		})
	}
}
