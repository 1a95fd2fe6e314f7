package enforce

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// helperName is argv[0] of the helper: the binary re-executed as the parent
// of a confined process. Any binary that links this package can be it.
const helperName = "custom-agent-sandbox-helper"

// The helper's file descriptors: the spec comes on specFD, a setup failure
// goes back on errFD.
const (
	specFD = 3
	errFD  = 4
)

// exitSetup is the helper's status when it could not set the sandbox up;
// the reason is on errFD.
const exitSetup = 125

// spec is what the parent sends the helper.
type spec struct {
	Profile Profile  `json:"profile"`
	Path    string   `json:"path"` // absolute
	Args    []string `json:"args"`
	Env     []string `json:"env"`
	Dir     string   `json:"dir"`
	// Probe sets the sandbox up and exits 0 without running anything.
	Probe bool `json:"probe,omitempty"`
	// LandlockABI is the ABI the parent found; the helper enforces
	// exactly it.
	LandlockABI int `json:"landlockAbi"`
	// Seccomp is the filter the helper loads (seccompProgram of the
	// profile's network), assembled once in the parent.
	Seccomp []byte `json:"seccomp"`
	// Umask and Rlimits are custom-agent's at the call (inherit_linux.go).
	Umask   uint32   `json:"umask"`
	Rlimits []rlimit `json:"rlimits"`
}

func init() {
	if len(os.Args) == 0 || os.Args[0] != helperName {
		return
	}
	// Every step below (capabilities, no_new_privs, Landlock, seccomp)
	// binds the thread that takes it, and the process is started from
	// that thread: the main one, locked to this goroutine.
	runtime.LockOSThread()
	if len(os.Args) == 2 && os.Args[1] == aheadArg {
		os.Exit(aheadMain())
	}
	os.Exit(helperMain())
}

// helperMain runs in the helper: PID 1 of new user, mount, PID, IPC, UTS
// and (without network) network namespaces. It builds the file system
// view, confines itself, starts the process, and waits for it.
func helperMain() int {
	caught := catchSignals()
	errOut := os.NewFile(errFD, "sandbox-errors")
	// Open until the helper exits: the status is reported on it too, and
	// the file's finalizer would close it.
	defer runtime.KeepAlive(errOut)
	unix.CloseOnExec(errFD)
	fail := func(err error) int {
		fmt.Fprintf(errOut, "%v", err)
		return exitSetup
	}
	var s spec
	in := os.NewFile(specFD, "sandbox-spec")
	if err := json.NewDecoder(in).Decode(&s); err != nil {
		return fail(fmt.Errorf("reading the sandbox spec: %w", err))
	}
	in.Close()
	return confineAndRun(&s, caught, fail, errFD)
}

// catchSignals catches the signals the command may send the helper (kill
// -SEGV 1 must not be taken for a crash), termination signals to be passed
// on. Go enables each one in turn, which takes a while: it is done while
// the sandbox is built (or while a helper started ahead waits).
func catchSignals() <-chan chan os.Signal {
	caught := make(chan chan os.Signal, 1)
	go func() {
		sigs := make(chan os.Signal, 16)
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
			syscall.SIGSEGV, syscall.SIGABRT, syscall.SIGSYS, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL,
			syscall.SIGTRAP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGXCPU,
			syscall.SIGXFSZ, syscall.SIGPROF, syscall.SIGSTKFLT, syscall.SIGPWR, syscall.SIGPIPE)
		caught <- sigs
	}()
	return caught
}

// confineAndRun is the helper's work once it has its spec, the same for a
// helper started for the call and one started ahead: it builds the view,
// confines itself and runs the command. The command's status is reported
// on reportFD (the error pipe, or the socket of a helper started ahead)
// before the helper exits (report).
func confineAndRun(s *spec, caught <-chan chan os.Signal, fail func(error) int, reportFD int) int {
	// First, as a helper started for the call has them from its start.
	if err := applyInherited(s); err != nil {
		return fail(fmt.Errorf("umask and resource limits: %w", err))
	}
	// Descriptors inherited without close-on-exec (an fd the agent's own
	// parent left open on a directory) would reach past every mount.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail(fmt.Errorf("closing inherited descriptors: %w", err))
	}
	// Not dumpable: the process cannot trace the helper, read its memory
	// or open its descriptors through /proc/1.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("making the helper undumpable: %w", err))
	}
	if err := buildView(s); err != nil {
		return fail(err)
	}
	if err := os.Chdir(s.Dir); err != nil {
		return fail(fmt.Errorf("entering %s: %w", s.Dir, err))
	}
	if err := dropCapabilities(); err != nil {
		return fail(fmt.Errorf("dropping capabilities: %w", err))
	}
	// seccomp first: its TSYNC gives every thread no_new_privs, which
	// Landlock then needs on each.
	if err := loadSeccomp(s.Seccomp); err != nil {
		return fail(fmt.Errorf("seccomp: %w", err))
	}
	if err := restrictLandlock(s); err != nil {
		return fail(fmt.Errorf("landlock: %w", err))
	}
	if s.Probe {
		return 0
	}
	return startAndWait(s, caught, fail, reportFD)
}

// startAndWait starts the process in a session of its own (no controlling
// terminal: nothing it runs can open /dev/tty or push keys into it),
// forwards termination signals to it, reaps every orphan (the helper is
// PID 1), and returns its status as bash reports it. Once the process has
// exited, it kills and reaps what is left in its PID namespace, closes its
// stdio and reports the status on reportFD: the parent need not wait for
// the namespaces' teardown at the helper's exit.
func startAndWait(s *spec, caught <-chan chan os.Signal, fail func(error) int, reportFD int) int {
	sigs := <-caught
	pid, err := syscall.ForkExec(s.Path, s.Args, &syscall.ProcAttr{
		Dir:   s.Dir,
		Env:   s.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOENT) {
			// Not a setup failure: the program cannot be run here.
			fmt.Fprintf(os.Stderr, "%s: %v\n", s.Args[0], err)
			return 126 + boolInt(errors.Is(err, syscall.ENOENT))
		}
		return fail(fmt.Errorf("starting %s: %w", s.Path, err))
	}
	go func() {
		for sig := range sigs {
			switch sig {
			case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT:
				_ = syscall.Kill(pid, sig.(syscall.Signal))
			}
		}
	}()
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("waiting for %s: %w", s.Path, err))
		}
		if wpid != pid || !(ws.Exited() || ws.Signaled()) {
			continue // an orphan reparented to us
		}
		code := ws.ExitStatus()
		if ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		// kill(-1) is for PID 1 of a namespace of its own only: anywhere
		// else it would reach every process of the user.
		if os.Getpid() == 1 && emptyNamespace() {
			// Its stdio last: the parent reads the output to its end
			// once the report came.
			for fd := range 3 {
				unix.Close(fd)
			}
			report(reportFD, ws)
		}
		// Otherwise no report: the parent waits for the helper's exit,
		// whose namespace's end kills what is left.
		return code
	}
}

// reportKind is the first byte of a status report; the bytes of a setup
// failure (text) never start with it.
const reportKind = 0

// reportLen is a status report's length: its kind, then the wait status.
const reportLen = 5

// report writes the command's wait status to fd: a report (reportKind,
// then the status, little-endian). Only the helper writes to fd (the
// command never has it: it is close-on-exec, the socket has no name and
// the helper is not dumpable), and only once every other process of its
// PID namespace is gone. A failed write goes unreported: the parent then
// waits for the helper's exit.
func report(fd int, ws syscall.WaitStatus) {
	b := make([]byte, reportLen)
	b[0] = reportKind
	binary.LittleEndian.PutUint32(b[1:], uint32(ws))
	for {
		_, err := unix.Write(fd, b)
		if err != unix.EINTR {
			return
		}
	}
}

// maxKillRounds bounds the rounds of emptyNamespace: every round kills all
// there is, so a second is rare (a process the kernel had not yet counted).
const maxKillRounds = 100

// emptyNamespace kills every process of the helper's PID namespace but the
// helper and reaps them, until a kill(-1) finds none (ESRCH): none of them
// outlives the report. kill(-1) from PID 1 reaches every process of the
// namespace and of namespaces nested in it, and no process it kills can
// fork any more (the kernel orders the two). Every process of the
// namespace descends from the helper, and one whose parent died is the
// helper's child: when it has none left (ECHILD), none is left. A process
// the helper may not signal (kill(-1) does not say which) is looked for by
// its id before the helper waits (signalEach): the helper then does not
// report, and its exit (the kernel, which may) ends the rest. It reports
// false whenever it could not make sure.
func emptyNamespace() bool {
	for range maxKillRounds {
		switch err := syscall.Kill(-1, syscall.SIGKILL); err {
		case syscall.ESRCH:
			return true
		case nil:
		default:
			return false
		}
		if !signalEach() {
			return false
		}
		for {
			_, err := syscall.Wait4(-1, nil, 0, nil)
			if err == syscall.ECHILD {
				break
			}
			if err != nil && err != syscall.EINTR {
				return false
			}
		}
	}
	return false
}

// signalEach kills every process listed in /proc (the namespace's own)
// but the helper, one by one, and reports false when one of them may not
// be signalled: waiting for it would never end.
func signalEach() bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == 1 {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
			return false
		}
	}
	return true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// dropCapabilities leaves every thread of the helper, and what it starts,
// with no capability in the user namespace: the process is uid 0 there, but
// file permissions apply to it as to anyone (a mask of mode 000 is
// unreadable), and it cannot mount, unshare or gain any back.
func dropCapabilities() error {
	last := unix.CAP_LAST_CAP
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	// Capabilities are a thread's own. This thread, which starts the
	// process, loses its bounding set, ambient set and the root
	// exception for good; every other thread of the helper loses its
	// permitted and effective sets in one call on all threads (psx), and
	// cannot gain them back without an execve it never makes.
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient set: %w", err)
	}
	// SECBIT_NOROOT and friends, locked: uid 0 gains nothing at exec.
	const securebits = 0xEF // everything but SECBIT_KEEP_CAPS
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, securebits, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&data)
	return nil
}

// buildView makes the file system the process sees, in the helper's own
// mount namespace:
//   - the whole tree read-only;
//   - /tmp, /var/tmp, /dev/shm private and empty; /run and /var/run empty
//     (no host sockets: ssh-agent, docker, D-Bus);
//   - a /dev of its own (null, zero, full, random, urandom, tty, a new
//     devpts), and a /proc of the new PID namespace (no other process);
//   - the writable directories writable again, protected paths in them
//     read-only, and every hidden secret behind an empty mask of mode 000.
func buildView(s *spec) error {
	p := &s.Profile
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	// Clone what must survive the covering mounts before mounting them.
	type kept struct {
		path     string
		fd       int
		writable bool
	}
	var keep []kept
	clone := func(path string, writable bool) error {
		fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("cloning %s: %w", path, err)
		}
		keep = append(keep, kept{path, fd, writable})
		return nil
	}
	if err := clone(p.Cwd, false); err != nil {
		return err
	}
	for _, w := range p.Writable {
		if err := clone(w, true); err != nil {
			return err
		}
	}
	for _, k := range p.Keep {
		if err := clone(k, false); err != nil {
			return err
		}
	}
	if p.Network {
		if r, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && r != "/etc/resolv.conf" {
			if err := clone(filepath.Dir(r), false); err != nil {
				return err
			}
		}
	}
	devs := map[string]int{}
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		fd, err := unix.OpenTree(unix.AT_FDCWD, "/dev/"+d, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return fmt.Errorf("cloning /dev/%s: %w", d, err)
		}
		devs[d] = fd
	}

	// Everything read-only and without set-user-ID programs.
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}); err != nil {
		return fmt.Errorf("making the file system read-only: %w", err)
	}

	for _, c := range Covered {
		fi, err := os.Lstat(c)
		if err != nil || !fi.IsDir() {
			continue // absent, or /var/run as a link to /run
		}
		if err := unix.Mount("tmpfs", c, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("covering %s: %w", c, err)
		}
	}
	if err := buildDev(devs); err != nil {
		return err
	}

	// Put back what was kept, parents first.
	slices.SortFunc(keep, func(a, b kept) int { return len(a.path) - len(b.path) })
	for _, k := range keep {
		if err := os.MkdirAll(k.path, 0o755); err != nil && !errors.Is(err, syscall.EROFS) {
			return fmt.Errorf("making %s: %w", k.path, err)
		}
		if err := unix.MoveMount(k.fd, "", unix.AT_FDCWD, k.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mounting %s: %w", k.path, err)
		}
		// Mounts inside a kept tree come along: a read-only tree is
		// read-only to its last mount; a writable one is writable at its
		// top, its inner mounts as the host has them. No set-user-ID
		// anywhere.
		if err := unix.MountSetattr(unix.AT_FDCWD, k.path, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID}); err != nil {
			return fmt.Errorf("setting %s nosuid: %w", k.path, err)
		}
		attr, flags := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}, uint(unix.AT_RECURSIVE)
		if k.writable {
			attr, flags = &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}, 0
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, k.path, flags, attr); err != nil {
			return fmt.Errorf("setting %s %s: %w", k.path, map[bool]string{true: "writable", false: "read-only"}[k.writable], err)
		}
		unix.Close(k.fd)
	}

	if err := overlayCaches(p.Caches); err != nil {
		return err
	}
	// Pinned directories: writable binds of themselves, parents first,
	// which cannot be renamed or removed.
	for _, d := range p.Pinned {
		fd, err := unix.OpenTree(unix.AT_FDCWD, d, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) {
				continue
			}
			return fmt.Errorf("pinning %s: %w", d, err)
		}
		err = unix.MoveMount(fd, "", unix.AT_FDCWD, d, unix.MOVE_MOUNT_F_EMPTY_PATH)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("pinning %s: %w", d, err)
		}
	}
	// Protected paths: read-only binds of themselves.
	for _, q := range p.Protected {
		if err := bindReadOnly(q, q); err != nil {
			if errors.Is(err, syscall.ENOENT) {
				continue // gone since the plan: nothing left to protect
			}
			return fmt.Errorf("protecting %s: %w", q, err)
		}
	}
	if err := hide(p.Hidden); err != nil {
		return err
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	return nil
}

// overlayCaches mounts each cache as an overlay: the host's cache below,
// read-only, and a private tmpfs layer above that takes every write and is
// gone when the sandbox ends.
func overlayCaches(caches []string) error {
	if len(caches) == 0 {
		return nil
	}
	const layers = "/dev/.custom-agent-caches"
	if err := os.Mkdir(layers, 0o700); err != nil {
		return fmt.Errorf("making the cache layers: %w", err)
	}
	if err := unix.Mount("tmpfs", layers, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=700"); err != nil {
		return fmt.Errorf("mounting the cache layers: %w", err)
	}
	for i, c := range caches {
		if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
			continue // no cache yet: nothing to read, and nothing is kept
		}
		upper, work := fmt.Sprintf("%s/%d/upper", layers, i), fmt.Sprintf("%s/%d/work", layers, i)
		for _, d := range []string{upper, work} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("making %s: %w", d, err)
			}
		}
		opts := "lowerdir=" + escapeOverlay(c) + ",upperdir=" + upper + ",workdir=" + work + ",userxattr"
		if err := unix.Mount("overlay", c, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("mounting the cache %s as an overlay: %w", c, err)
		}
	}
	return nil
}

// escapeOverlay escapes the characters overlayfs reads in a layer path.
func escapeOverlay(p string) string {
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`).Replace(p)
}

// bindReadOnly mounts a read-only clone of src on dst.
func bindReadOnly(src, dst string) error {
	fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}); err != nil {
		return err
	}
	return unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
}

// buildDev mounts a /dev of the sandbox's own, with the host's harmless
// devices (cloned before) and a new devpts instance: the host's terminals
// (/dev/pts/N) are not in it.
func buildDev(devs map[string]int) error {
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755"); err != nil {
		return fmt.Errorf("mounting /dev: %w", err)
	}
	for name, fd := range devs {
		p := "/dev/" + name
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			return fmt.Errorf("making %s: %w", p, err)
		}
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mounting %s: %w", p, err)
		}
		unix.Close(fd)
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("making %s: %w", d, err)
		}
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620"); err == nil {
		_ = os.Symlink("pts/ptmx", "/dev/ptmx")
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mounting /dev/shm: %w", err)
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, "/dev/"+name); err != nil {
			return fmt.Errorf("making /dev/%s: %w", name, err)
		}
	}
	return nil
}

// hide puts an empty mask of mode 000 over each path: an empty read-only
// tmpfs over a directory, an empty file over a file. The process, which
// has no capability, can neither list nor open what is behind it.
func hide(paths []string) error {
	const mask = "/dev/.custom-agent-mask"
	if err := os.WriteFile(mask, nil, 0); err != nil {
		return fmt.Errorf("making the mask: %w", err)
	}
	defer os.Remove(mask)
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue // gone since the plan, or already behind a mask
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=000,size=4k")
		} else {
			err = bindReadOnly(mask, p)
		}
		if err != nil {
			return fmt.Errorf("hiding %s: %w", p, err)
		}
	}
	return nil
}
