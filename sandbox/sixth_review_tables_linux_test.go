package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sixth attacker review's findings on the tables and the filter, each
// a test: run-code configuration a workspace command made where none was
// (finding 7), a set-user-ID file made by open or mknod rather than chmod
// (finding 8), and histories and other agents' transcripts a read could
// reach (finding 9).

func init() {
	// The attacks of finding 8: each asks for a set-user-ID and
	// set-group-ID file (mode 06755), with the umask cleared so that the
	// kernel keeps the bits it was asked for.
	const setID = 0o6755
	moreAttacks["open-setuid"] = func(arg string) error {
		unix.Umask(0)
		p, err := unix.BytePtrFromString(arg)
		if err != nil {
			return err
		}
		fd, _, e := unix.Syscall(unix.SYS_OPEN, uintptr(unsafe.Pointer(p)), unix.O_CREAT|unix.O_WRONLY, setID)
		return closeOr(int(fd), e)
	}
	moreAttacks["openat-setuid"] = func(arg string) error {
		unix.Umask(0)
		fd, err := unix.Openat(unix.AT_FDCWD, arg, unix.O_CREAT|unix.O_WRONLY, setID)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	moreAttacks["creat-setuid"] = func(arg string) error {
		unix.Umask(0)
		p, err := unix.BytePtrFromString(arg)
		if err != nil {
			return err
		}
		fd, _, e := unix.Syscall(unix.SYS_CREAT, uintptr(unsafe.Pointer(p)), setID, 0)
		return closeOr(int(fd), e)
	}
	moreAttacks["mknod-setuid"] = func(arg string) error {
		unix.Umask(0)
		p, err := unix.BytePtrFromString(arg)
		if err != nil {
			return err
		}
		_, _, e := unix.Syscall(unix.SYS_MKNOD, uintptr(unsafe.Pointer(p)), unix.S_IFREG|setID, 0)
		return errnoErr(e)
	}
	moreAttacks["mknodat-setuid"] = func(arg string) error {
		unix.Umask(0)
		return unix.Mknodat(unix.AT_FDCWD, arg, unix.S_IFREG|setID, 0)
	}
	moreAttacks["tmpfile-setuid"] = func(arg string) error {
		// An unnamed file made with the bits, then given a name.
		unix.Umask(0)
		fd, err := unix.Openat(unix.AT_FDCWD, filepath.Dir(arg), unix.O_TMPFILE|unix.O_WRONLY, setID)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+itoa(fd), unix.AT_FDCWD, arg, unix.AT_SYMLINK_FOLLOW)
	}
	moreAttacks["openat2-setuid"] = func(arg string) error {
		unix.Umask(0)
		fd, err := unix.Openat2(unix.AT_FDCWD, arg, &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY, Mode: setID})
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
}

func closeOr(fd int, e unix.Errno) error {
	if e != 0 {
		return e
	}
	unix.Close(fd)
	return nil
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}

// TestSixthReviewRunConfigMade (finding 7): a workspace command that makes
// configuration a tool runs code from (.npmrc's node-options, a
// kubeconfig's exec plugin, an editor workspace's tasks), at the top of
// the project or in a directory of it where a tool run there reads it,
// has it removed when it ends, and the call says so.
func TestSixthReviewRunConfigMade(t *testing.T) {
	w := newWorld(t)
	must(t, os.MkdirAll(filepath.Join(w.proj, "deep", ".github", "ISSUE_TEMPLATE"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.proj, "deep", ".github", "ISSUE_TEMPLATE", "bug.md"), []byte("bug\n"), 0o644))
	for _, c := range []struct{ name, script, path string }{
		{"npmrc with node-options", "mkdir -p lib && echo 'require(\"fs\")' > lib/setup.js && echo \"node-options=--require=$PWD/lib/setup.js\" > .npmrc", ".npmrc"},
		{"npmrc in letter case", "echo 'node-options=--require=./x.js' > .NPMRC", ".NPMRC"},
		{"code-workspace", "echo '{\"tasks\":{}}' > proj.code-workspace", "proj.code-workspace"},
		{"kubeconfig with an exec plugin", "printf 'users:\\n- user:\\n    exec:\\n      command: ./x\\n' > kubeconfig", "kubeconfig"},
		{"pypirc", "printf '[pypi]\\nrepository = http://evil.invalid\\n' > .pypirc", ".pypirc"},
		{"npmrc in a directory", "echo 'node-options=--require=./x.js' > src/.npmrc", "src/.npmrc"},
		{"yarnrc in a directory", "echo 'yarn-path \"./x.js\"' > src/.yarnrc", "src/.yarnrc"},
		{"irbrc in a directory", "echo 'system(\"id\")' > src/.irbrc", "src/.irbrc"},
		{"bunfig in a directory", "echo 'preload = [\"./x.ts\"]' > src/bunfig.toml", "src/bunfig.toml"},
		{"code-workspace in a directory", "echo '{}' > deep/er/x.code-workspace", "deep/er/x.code-workspace"},
		{"eslint config in a directory", "echo 'module.exports = {}' > src/eslint.config.js", "src/eslint.config.js"},
		{"conftest in a directory", "echo 'import os' > deep/conftest.py", "deep/conftest.py"},
		// Paths of several components a tool reads from where it runs
		// (cargo from the directory and its parents).
		{"cargo config in a directory", "mkdir -p src/.cargo && printf '[build]\\nrustc-wrapper = \"./x\"\\n' > src/.cargo/config.toml", "src/.cargo/config.toml"},
		{"workflow in an existing .github of a directory", "mkdir -p deep/.github/workflows && echo 'on: push' > deep/.github/workflows/ci.yml", "deep/.github/workflows"},
		{"a link where .mvn goes", "mkdir -p evil && echo '-Dx=y' > evil/jvm.config && ln -s ../evil src/.mvn", "src/.mvn"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := w.sh(t, Workspace, c.script)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s", r.code, r.out)
			}
			if !errors.Is(r.done, ErrProtectedCreated) || !strings.Contains(r.done.Error(), filepath.Base(c.path)) {
				t.Errorf("Done = %v; want ErrProtectedCreated naming %s", r.done, c.path)
			}
			absent("proj/"+c.path)(t, w)
		})
	}
	unchanged("proj/deep/.github/ISSUE_TEMPLATE/bug.md", "bug\n")(t, w)
	unchanged("proj/evil/jvm.config", "-Dx=y\n")(t, w)
	t.Run("look-alikes are kept", func(t *testing.T) {
		// Names that only resemble run-code configuration, and
		// PyTorch weights (.pth, inert outside a site directory), and the
		// manifests a scaffolding step makes, stay.
		// Dependency trees stay writable: installing into one is
		// allowed, and its packages carry such files.
		must(t, os.MkdirAll(filepath.Join(w.proj, "node_modules", "pkg"), 0o755))
		must(t, os.MkdirAll(filepath.Join(w.proj, ".venv", "lib"), 0o755))
		made := []string{"npmrc.txt", "src/yarnrc.go", "model.pth", "src/kubeconfig.go", "notes.code-workspace.md", "src/tsconfig.go", "src/conftest_test.go",
			"node_modules/pkg/.npmrc", ".venv/conftest.py", "deep/.github/FUNDING.yml", "src/package.json", "deep/pyproject.toml"}
		script := ""
		for _, m := range made {
			script += "echo x > " + m + " && "
		}
		r := w.sh(t, Workspace, script+"mkdir -p newpkg src/.cargo/registry && echo x > newpkg/.npmrc.example && echo x > src/.cargo/registry/index")
		if r.code != 0 || r.done != nil {
			t.Fatalf("exit %d, Done = %v:\n%s", r.code, r.done, r.out)
		}
		for _, m := range append(made, "newpkg/.npmrc.example", "src/.cargo/registry/index") {
			unchanged("proj/"+m, "x\n")(t, w)
		}
	})
	t.Run("an existing npmrc stays hidden and read-only", func(t *testing.T) {
		must(t, os.WriteFile(filepath.Join(w.proj, "src", ".npmrc"), []byte(canary), 0o600))
		defer os.Remove(filepath.Join(w.proj, "src", ".npmrc"))
		r := w.sh(t, Workspace, "cat src/.npmrc; echo 'node-options=x' >> src/.npmrc")
		check(t, escape{want: denied}, r)
		unchanged("proj/src/.npmrc", canary)(t, w)
	})
}

// TestSixthReviewSetIDFileMade (finding 8): a file cannot be made with the
// set-user-ID or set-group-ID bit by open, openat, creat, mknod, mknodat or
// O_TMPFILE; openat2, whose mode the filter cannot read, fails with ENOSYS
// (the C library and Go fall back to openat).
func TestSixthReviewSetIDFileMade(t *testing.T) {
	w := newWorld(t)
	eperm := []string{"operation not permitted"}
	cases := []escape{
		{name: "openat", attack: "openat-setuid", want: eperm},
		{name: "mknodat", attack: "mknodat-setuid", want: eperm},
		{name: "O_TMPFILE and linkat", attack: "tmpfile-setuid", want: eperm},
		{name: "openat2", attack: "openat2-setuid", want: []string{"function not implemented"}},
	}
	if runtime.GOARCH == "amd64" {
		cases = append(cases,
			escape{name: "open", attack: "open-setuid", want: eperm},
			escape{name: "creat", attack: "creat-setuid", want: eperm},
			escape{name: "mknod", attack: "mknod-setuid", want: eperm})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := filepath.Join(w.proj, "setid-"+c.attack)
			r := w.attack(t, Workspace, false, c.attack, target)
			if r.code != 0 {
				t.Errorf("exit %d:\n%s", r.code, r.out)
			}
			check(t, c, r)
			if fi, err := os.Lstat(target); err == nil {
				if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
					t.Errorf("%s is %v on the host", target, fi.Mode())
				}
				os.Remove(target)
			}
		})
	}
	t.Run("a plain file is still made", func(t *testing.T) {
		r := w.sh(t, Workspace, "umask 0 && echo x > plain.sh && chmod 755 plain.sh && mknod fifo p && ls -l plain.sh")
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s", r.code, r.out)
		}
		unchanged("proj/plain.sh", "x\n")(t, w)
	})
}

// TestSixthReviewHistoriesHidden (finding 9): shell and REPL histories,
// editor state and other agents' transcripts (which hold the output of an
// earlier `cat .env`) are hidden like the other secrets of a home.
func TestSixthReviewHistoriesHidden(t *testing.T) {
	w := newWorld(t)
	files := []string{
		".zhistory", ".histfile", ".sh_history", ".config/zsh/.zsh_history", ".local/share/zsh/history",
		".ipython/profile_default/history.sqlite", ".ipython/profile_work/history.sqlite", ".sqlite_history",
		".rediscli_history", ".viminfo", ".lesshst", ".python_history", ".node_repl_history", ".psql_history",
		".mysql_history", ".claude/projects/-work-proj/0b1c.jsonl", ".claude/history.jsonl",
		".codex/sessions/2026/11/30/rollout-1.jsonl", ".codex/history.jsonl", ".gemini/tmp/ab12/logs.json",
		".config/Code/User/globalStorage/state.vscdb", ".irb_history", ".local/state/nvim/shada/main.shada",
	}
	for _, f := range files {
		p := filepath.Join(w.home, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(canary), 0o600))
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			r := w.sh(t, ReadOnly, "cat ~/"+f)
			check(t, escape{want: denied}, r)
		})
	}
	t.Run("a search of the home finds none", func(t *testing.T) {
		r := w.sh(t, ReadOnly, "grep -rs CANARY ~ | grep -v '^Binary'; true")
		if strings.Contains(r.out, canary) {
			t.Fatalf("the canary reached the output:\n%s", r.out)
		}
	})
}
