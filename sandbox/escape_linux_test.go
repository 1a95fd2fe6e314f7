package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/custom-agent/custom-agent/sandbox/enforce"
)

// canary is the content of every planted secret: it must never reach a
// confined process's output.
const canary = "CANARY-7f3a9c-SECRET"

// attackEnv names the attack the test binary runs when started inside the
// sandbox (see TestMain): system calls no shell can make.
const attackEnv = "SANDBOX_TEST_ATTACK"

func TestMain(m *testing.M) {
	if a := os.Getenv(attackEnv); a != "" {
		os.Exit(attack(a))
	}
	code := m.Run()
	aheadPool.Close()
	os.Exit(code)
}

// aheadEnv chooses how the escape tests' calls start (world.run):
// "all" through a helper started ahead, "none" each with its own helper,
// and by default every other one each way.
const aheadEnv = "SANDBOX_TEST_AHEAD"

var (
	aheadOnce  sync.Once
	aheadPool  *Pool
	aheadCalls atomic.Int64
)

// testPool returns the pool the next call is to take a helper from,
// waited for until it is full, or nil for a call that starts its own.
func testPool(t *testing.T) *Pool {
	t.Helper()
	mode := os.Getenv(aheadEnv)
	if mode == "none" || mode != "all" && aheadCalls.Add(1)%2 == 1 {
		return nil
	}
	aheadOnce.Do(func() { aheadPool = enforce.NewPool(1) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := aheadPool.WaitFull(ctx); err != nil {
		t.Fatal(err)
	}
	return aheadPool
}

// attack makes one system call a confined process must not get, prints
// its error, and exits 0 if it was refused, 1 if it succeeded.
func attack(name string) int {
	arg := os.Getenv("SANDBOX_TEST_ARG")
	var err error
	switch name {
	case "ptrace":
		pid, _ := strconv.Atoi(arg)
		err = unix.PtraceAttach(pid)
	case "process_vm_readv":
		pid, _ := strconv.Atoi(arg)
		buf := make([]byte, 8)
		_, err = unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: 8}}, []unix.RemoteIovec{{Base: 0x400000, Len: 8}}, 0)
	case "io_uring":
		var params [120]byte
		_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 8, uintptr(unsafe.Pointer(&params[0])), 0)
		err = errnoErr(e)
	case "bpf":
		_, _, e := unix.Syscall(unix.SYS_BPF, 0, 0, 0)
		err = errnoErr(e)
	case "keyctl":
		_, err = unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_USER_KEYRING, 0, 0, 0)
	case "unshare-user":
		err = unix.Unshare(unix.CLONE_NEWUSER)
	case "unshare-net":
		err = unix.Unshare(unix.CLONE_NEWNET)
	case "mount":
		err = unix.Mount("tmpfs", "/mnt", "tmpfs", 0, "")
	case "umount-mask":
		err = unix.Unmount(arg, unix.MNT_DETACH)
	case "tiocsti":
		c := byte('x')
		_, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		err = errnoErr(e)
	case "perf_event_open":
		_, _, e := unix.Syscall6(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0, 0)
		err = errnoErr(e)
	case "userfaultfd":
		_, _, e := unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0)
		err = errnoErr(e)
	case "setns":
		var f *os.File
		if f, err = os.Open("/proc/1/ns/net"); err == nil {
			err = unix.Setns(int(f.Fd()), 0)
		}
	case "tcp":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", arg, 2*time.Second); err == nil {
			c.Close()
		}
	case "tcp6":
		var c net.Conn
		if c, err = net.DialTimeout("tcp6", arg, 2*time.Second); err == nil {
			c.Close()
		}
	case "udp":
		var c net.Conn
		if c, err = net.Dial("udp", arg); err == nil {
			_, err = c.Write([]byte(canary))
			c.Close()
		}
	case "unix":
		var c net.Conn
		if c, err = net.DialTimeout("unix", arg, 2*time.Second); err == nil {
			_, err = c.Write([]byte("hello"))
			c.Close()
		}
	case "kill":
		pid, _ := strconv.Atoi(arg)
		err = unix.Kill(pid, syscall.SIGTERM)
	case "raw-socket":
		var fd int
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP); err == nil {
			unix.Close(fd)
		}
	case "packet-socket":
		var fd int
		if fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0); err == nil {
			unix.Close(fd)
		}
	case "chroot":
		err = unix.Chroot("/")
	case "setuid-file":
		err = unix.Chmod(arg, 0o4755)
	case "open-by-handle":
		_, _, err = unix.NameToHandleAt(unix.AT_FDCWD, "/", 0)
	default:
		f, ok := moreAttacks[name]
		if !ok {
			fmt.Println("unknown attack", name)
			return 2
		}
		err = f(arg)
	}
	if err == nil {
		fmt.Println("attack succeeded")
		return 1
	}
	fmt.Println("refused:", err)
	return 0
}

// moreAttacks are attacks the later review files add, by name.
var moreAttacks = map[string]func(arg string) error{}

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// world is a machine in miniature: a fake home with secrets, a project
// with secrets, protected paths, a nested repository and hard links.
type world struct {
	root, home, proj, cache string
	// dataDir is custom-agent's data directory ("" is the default one
	// in home).
	dataDir string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	requireSandbox(t)
	// Outside /tmp where it can be: a write outside the working
	// directory then meets the real, read-only file system.
	base := ""
	if c, err := os.UserCacheDir(); err == nil {
		if err := os.MkdirAll(c, 0o755); err == nil {
			base = c
		}
	}
	root, err := os.MkdirTemp(base, "custom-agent-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	w := &world{root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"), cache: filepath.Join(root, "home", ".cache", "go-build")}
	files := map[string]string{
		"home/.ssh/id_rsa":                       canary,
		"home/.ssh/config":                       "Host x\n",
		"home/.aws/credentials":                  canary,
		"home/.netrc":                            canary,
		"home/.npmrc":                            canary,
		"home/.git-credentials":                  canary,
		"home/.config/gh/hosts.yml":              canary,
		"home/.docker/config.json":               canary,
		"home/.kube/config":                      canary,
		"home/.gnupg/private-keys-v1.d/a.key":    canary,
		"home/.config/custom-agent/policy.json":  canary,
		"home/.local/share/custom-agent/data.db": canary,
		"home/.bashrc":                           "# rc\n",
		"home/.profile":                          "# profile\n",
		"home/.cache/go-build/README":            "cache\n",
		"proj/README.md":                         "readme\n",
		"proj/.env":                              canary,
		"proj/.env.local":                        canary,
		"proj/deep/er/.env.production":           canary,
		"proj/server.pem":                        canary,
		"proj/deploy.key":                        canary,
		"proj/.git/config":                       "[core]\n",
		"proj/.git/hooks/README":                 "hooks\n",
		"proj/.git/HEAD":                         "ref: refs/heads/main\n",
		"proj/vendor/lib/.git/config":            "[core]\n",
		"proj/vendor/lib/.git/hooks/README":      "hooks\n",
		"proj/.custom-agent/policy.json":         `{"version":1,"rules":[]}`,
		"proj/.vscode/settings.json":             "{}",
		"proj/.github/workflows/ci.yml":          "on: push\n",
		"proj/src/main.go":                       "package main\n",
	}
	for rel, body := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Symlink(filepath.Join(w.home, ".ssh", "id_rsa"), filepath.Join(w.proj, "key-link")))
	must(t, os.Symlink(".env", filepath.Join(w.proj, "env-link")))
	// Hard links made before the call: no path-based rule sees them.
	must(t, os.Link(filepath.Join(w.home, ".ssh", "id_rsa"), filepath.Join(w.proj, "notes.txt")))
	must(t, os.Link(filepath.Join(w.home, ".netrc"), filepath.Join(w.proj, "src", "data.txt")))
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// requireSandbox skips where the sandbox cannot run, except under CI=true,
// where it must.
func requireSandbox(t *testing.T) {
	t.Helper()
	if s := Probe(); !s.Available() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox must run under CI=true, but it is unavailable: %s", s.Unavailable)
		}
		t.Skipf("the sandbox is unavailable here (%s): needs Landlock and unprivileged user namespaces", s.Unavailable)
	}
}

type result struct {
	out  string // stdout and stderr
	code int
	done error // Confined.Done's error other than a setup failure
}

// run runs argv in the world's project under kind.
func (w *world) run(t *testing.T, kind Kind, network bool, extraEnv []string, argv ...string) result {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH") + ":" + filepath.Dir(self)
	data := w.dataDir
	if data == "" {
		data = filepath.Join(w.home, ".local", "share", "custom-agent")
	}
	pl := NewPlanner(Env{Home: w.home, DataDir: data, Caches: []string{w.cache}, Path: path})
	p, err := pl.Plan(Workspace, false, w.proj)
	if err != nil {
		t.Fatal(err)
	}
	p = p.As(kind, network)
	prog := argv[0]
	if !filepath.IsAbs(prog) {
		if prog, err = exec.LookPath(prog); err != nil {
			t.Fatal(err)
		}
	}
	// The output goes to a file (outside the sandbox's view: the test's
	// own temporary directory is not the project), so that a helper
	// started ahead can take the call too.
	out, err := os.CreateTemp("", "sandbox-test-out-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd := &exec.Cmd{Path: prog, Args: argv, Dir: w.proj, Stdout: out, Stderr: out,
		Env:         append([]string{"PATH=" + path, "HOME=" + w.home, "LC_ALL=C"}, extraEnv...),
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	pool := testPool(t)
	c, err := ConfineWith(pool, p, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if pool != nil && !c.Started() {
		t.Fatal("a helper started ahead was waiting, but the call did not take it")
	}
	runErr := error(nil)
	if !c.Started() {
		runErr = cmd.Start()
	}
	if runErr == nil {
		runErr = cmd.Wait()
	}
	doneErr := c.Done()
	var buf bytes.Buffer
	if _, err := out.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := buf.ReadFrom(out); err != nil {
		t.Fatal(err)
	}
	if errors.Is(doneErr, ErrSetup) {
		t.Fatalf("sandbox setup: %v", doneErr)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		code = ee.ExitCode()
	} else if runErr != nil {
		t.Fatal(runErr)
	}
	return result{out: buf.String(), code: code, done: doneErr}
}

func (w *world) sh(t *testing.T, kind Kind, script string) result {
	t.Helper()
	return w.run(t, kind, false, nil, "bash", "-c", script)
}

func (w *world) attack(t *testing.T, kind Kind, network bool, name, arg string) result {
	t.Helper()
	self, _ := os.Executable()
	return w.run(t, kind, network, []string{attackEnv + "=" + name, "SANDBOX_TEST_ARG=" + arg}, self)
}
