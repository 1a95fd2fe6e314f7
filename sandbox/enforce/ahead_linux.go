package enforce

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Helpers started ahead (docs/sandbox.md, "Helpers started ahead"): the
// fresh helper a call would start, with the same namespaces and the same
// re-executed binary, started before the call comes. It waits, holding
// nothing but its end of a socket pair only the parent holds the other end
// of, for one spec and the call's stdio; then it does exactly what a
// helper started for the call does.

// aheadArg is argv[1] of a helper started ahead.
const aheadArg = "ahead"

// aheadFD is a waiting helper's end of its socket pair.
const aheadFD = 3

// aheadReady is the byte a helper started ahead writes once it waits.
const aheadReady = 'R'

// maxSpec bounds the spec a waiting helper reads.
const maxSpec = 64 << 20

// aheadMain runs in a helper started ahead: it waits for its one spec,
// then confines itself and runs the command as helperMain does.
func aheadMain() int {
	caught := catchSignals()
	// It waits with nothing but stdio (/dev/null until the call) and the
	// socket: descriptors inherited without close-on-exec (an fd the
	// agent's own parent left open) are closed, not kept while it waits;
	// the Go runtime's own are close-on-exec. Not dumpable, as the
	// confined helper will be.
	if err := closeInherited(aheadFD + 1); err != nil {
		return exitSetup
	}
	if err := unix.CloseRange(aheadFD+1, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return exitSetup
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return exitSetup
	}
	// The parent's death closes its end: the write fails, or the read
	// below ends, and the helper exits. (PR_SET_PDEATHSIG is set at the
	// clone, but getppid cannot tell the helper whether the parent died
	// before: in a new PID namespace it is 0 either way.)
	if _, err := unix.Write(aheadFD, []byte{aheadReady}); err != nil {
		return exitSetup
	}
	errOut := os.NewFile(aheadFD, "sandbox-errors")
	// Open until the helper exits: the status is reported on it too, and
	// the file's finalizer would close it.
	defer runtime.KeepAlive(errOut)
	fail := func(err error) int {
		fmt.Fprintf(errOut, "%v", err)
		return exitSetup
	}
	s, stdio, err := receiveSpec(aheadFD)
	if err != nil {
		// The parent is gone (nothing reads this), or sent what it
		// never sends.
		return fail(fmt.Errorf("reading the sandbox spec: %w", err))
	}
	// The spec is read once: nothing more can be read from the socket,
	// which only reports a setup failure from now on.
	if err := unix.Shutdown(aheadFD, unix.SHUT_RD); err != nil {
		return fail(fmt.Errorf("closing the spec: %w", err))
	}
	for i, fd := range stdio {
		if err := unix.Dup3(fd, i, 0); err != nil {
			return fail(fmt.Errorf("taking the call's stdio: %w", err))
		}
		unix.Close(fd)
	}
	return confineAndRun(&s, caught, fail, aheadFD)
}

// closeInherited closes the descriptors from first on that are not
// close-on-exec: none of them was opened by this process (Go opens every
// descriptor close-on-exec), so each came across the exec.
func closeInherited(first int) error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < first {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			if err := unix.Close(fd); err != nil {
				return err
			}
		}
	}
	return nil
}

// receiveSpec reads the call from fd: an 8-byte length with the command's
// three stdio descriptors, then the spec.
func receiveSpec(fd int) (spec, [3]int, error) {
	var s spec
	var stdio [3]int
	hdr := make([]byte, 8)
	oob := make([]byte, unix.CmsgSpace(4*len(stdio)))
	n, oobn, flags, _, err := unix.Recvmsg(fd, hdr, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return s, stdio, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return s, stdio, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			return s, stdio, err
		}
		fds = append(fds, got...)
	}
	if flags&unix.MSG_CTRUNC != 0 || len(fds) != len(stdio) {
		for _, f := range fds {
			unix.Close(f)
		}
		return s, stdio, fmt.Errorf("want %d descriptors, got %d", len(stdio), len(fds))
	}
	copy(stdio[:], fds)
	if err := readFull(fd, hdr[n:]); err != nil {
		return s, stdio, err
	}
	size := binary.LittleEndian.Uint64(hdr)
	if size > maxSpec {
		return s, stdio, fmt.Errorf("a spec of %d bytes", size)
	}
	body := make([]byte, size)
	if err := readFull(fd, body); err != nil {
		return s, stdio, err
	}
	return s, stdio, json.Unmarshal(body, &s)
}

// readFull reads len(b) bytes from fd.
func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
}

// Pool holds helpers started ahead, size of each kind (with and without a
// network namespace). Each is used once; the pool starts another in the
// background when one is taken. A nil *Pool starts every helper for its
// call. Close it when the process or session ends.
type Pool struct {
	size int

	mu      sync.Mutex
	ready   map[bool][]*ahead // by network
	filling map[bool]int
	// starting are the helpers started but not yet waiting: Close
	// kills them too, which ends their start.
	starting map[*os.Process]bool
	closed   bool
	changed  chan struct{} // closed and replaced at every change
	refills  sync.WaitGroup

	// host is this process's mount table (mountTable), read again
	// when mountsFD, open on /proc/self/mountinfo, reports a change;
	// mountsMu guards both, and mountsClosed, set by Close.
	mountsMu     sync.Mutex
	mountsFD     int // -1 when not open
	host         []string
	mountsClosed bool
}

// ahead is one waiting helper.
type ahead struct {
	cmd  *exec.Cmd
	sock *os.File // the parent's end, blocking
	// limits are this process's resource limits when it started.
	limits [nLimits]unix.Rlimit
}

// NewPool returns a pool of size helpers of each kind, and starts them in
// the background.
func NewPool(size int) *Pool {
	pl := &Pool{size: size, ready: map[bool][]*ahead{}, filling: map[bool]int{}, starting: map[*os.Process]bool{}, changed: make(chan struct{}), mountsFD: -1}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for _, network := range []bool{false, true} {
		pl.refillLocked(network)
	}
	return pl
}

// refillLocked starts the helpers the kind lacks.
func (pl *Pool) refillLocked(network bool) {
	for !pl.closed && len(pl.ready[network])+pl.filling[network] < pl.size {
		pl.filling[network]++
		pl.refills.Go(func() {
			h, err := pl.startAhead(network)
			pl.mu.Lock()
			defer pl.mu.Unlock()
			pl.filling[network]--
			switch {
			case err != nil:
				// Started again at the next take; until then calls
				// start their own.
			case pl.closed:
				h.kill()
			default:
				pl.ready[network] = append(pl.ready[network], h)
			}
			pl.changedLocked()
		})
	}
}

func (pl *Pool) changedLocked() {
	close(pl.changed)
	pl.changed = make(chan struct{})
}

// Ready returns how many helpers of the kind wait.
func (pl *Pool) Ready(network bool) int {
	if pl == nil {
		return 0
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return len(pl.ready[network])
}

// Pids returns the process ids of the waiting helpers.
func (pl *Pool) Pids() []int {
	if pl == nil {
		return nil
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	var out []int
	for _, hs := range pl.ready {
		for _, h := range hs {
			out = append(out, h.cmd.Process.Pid)
		}
	}
	return out
}

// WaitFull waits until every kind has its helpers, no start of one is
// under way, or ctx ends.
func (pl *Pool) WaitFull(ctx context.Context) error {
	if pl == nil {
		return nil
	}
	for {
		pl.mu.Lock()
		full := pl.filling[false] == 0 && pl.filling[true] == 0
		ch := pl.changed
		pl.mu.Unlock()
		if full {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close kills the waiting helpers and those being started, and reaps
// them. Helpers already handed a call are the caller's.
func (pl *Pool) Close() {
	if pl == nil {
		return
	}
	pl.mu.Lock()
	pl.closed = true
	var hs []*ahead
	for _, k := range pl.ready {
		hs = append(hs, k...)
	}
	pl.ready = map[bool][]*ahead{}
	for p := range pl.starting {
		_ = p.Kill()
	}
	pl.changedLocked()
	pl.mu.Unlock()
	for _, h := range hs {
		h.kill()
	}
	pl.refills.Wait()
	pl.mountsMu.Lock()
	defer pl.mountsMu.Unlock()
	pl.mountsClosed = true
	if pl.mountsFD >= 0 {
		unix.Close(pl.mountsFD)
		pl.mountsFD, pl.host = -1, nil
	}
}

// hostMounts returns this process's mount table, or nil when it cannot be
// read. It is read again only when the mount namespace changed since: the
// kernel reports every mount, unmount and remount in it (propagated ones
// included) to a poll of an open mountinfo as POLLPRI, once per poll
// (proc(5)). The poll comes before the read, so a change during the read
// is reported at the next call. The descriptor is a raw one, not an
// os.File: Go's network poller would take it (mountinfo can be polled),
// and its own polls would take the change before this one.
func (pl *Pool) hostMounts() []string {
	pl.mountsMu.Lock()
	defer pl.mountsMu.Unlock()
	if pl.mountsFD < 0 && !pl.mountsClosed {
		fd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil
		}
		pl.mountsFD, pl.host = fd, nil
	}
	if pl.mountsFD >= 0 && pl.host != nil {
		fds := []unix.PollFd{{Fd: int32(pl.mountsFD), Events: unix.POLLPRI}}
		if n, err := unix.Poll(fds, 0); err == nil && n == 0 {
			return pl.host
		}
	}
	host, err := mountTable("/proc/self/mountinfo")
	if err != nil {
		pl.host = nil
		return nil
	}
	if pl.mountsFD >= 0 {
		pl.host = host
	}
	return host
}

// take returns a waiting helper of the kind, or nil. The pool starts
// another when refill is called: once the call has ended, so that the
// start does not compete with the call's own for the processors.
func (pl *Pool) take(network bool) *ahead {
	if pl == nil {
		return nil
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	var h *ahead
	if hs := pl.ready[network]; len(hs) > 0 {
		h, pl.ready[network] = hs[0], hs[1:]
	}
	return h
}

// refill starts the helpers the kind lacks, in the background.
func (pl *Pool) refill(network bool) {
	if pl == nil {
		return
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.refillLocked(network)
}

// startAhead starts a helper of the kind and waits until it waits (or
// Close killed it).
func (pl *Pool) startAhead(network bool) (*ahead, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	sock, child := os.NewFile(uintptr(fds[0]), "sandbox-helper"), os.NewFile(uintptr(fds[1]), "sandbox-helper")
	cmd := &exec.Cmd{
		Path: "/proc/self/exe", Args: []string{helperName, aheadArg}, Env: []string{},
		// It holds no directory of the agent's.
		Dir:        "/",
		ExtraFiles: []*os.File{child},
		// The group the caller's process would have had (Setpgid, the
		// only start attribute a call may ask for here).
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	inNamespaces(cmd.SysProcAttr, network)
	lims, err := limits()
	if err == nil {
		err = cmd.Start()
	}
	child.Close()
	if err != nil {
		sock.Close()
		return nil, err
	}
	h := &ahead{cmd: cmd, sock: sock, limits: lims}
	pl.mu.Lock()
	if pl.closed {
		_ = cmd.Process.Kill()
	}
	pl.starting[cmd.Process] = true
	pl.mu.Unlock()
	var b [1]byte
	n, err := sock.Read(b[:])
	pl.mu.Lock()
	delete(pl.starting, cmd.Process)
	pl.mu.Unlock()
	if n != 1 || b[0] != aheadReady {
		h.kill()
		return nil, fmt.Errorf("the helper started ahead did not wait: %v", err)
	}
	return h, nil
}

// kill ends a helper that was never handed a call.
func (h *ahead) kill() {
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
	h.sock.Close()
}

// sees reports whether the waiting helper's mount namespace, copied when
// it started, shows the profile's working and writable directories as
// this process does (the same device and inode): a file system mounted
// since would otherwise be the empty directory beneath it there.
func (h *ahead) sees(p Profile) bool {
	root := "/proc/" + strconv.Itoa(h.cmd.Process.Pid) + "/root"
	for _, d := range append([]string{p.Cwd}, p.Writable...) {
		var here, there unix.Stat_t
		if unix.Stat(d, &here) != nil {
			continue // the helper reports it, as one started for the call
		}
		if unix.Stat(root+d, &there) != nil || here.Dev != there.Dev || here.Ino != there.Ino {
			return false
		}
	}
	return true
}

// sameMounts reports whether the waiting helper's mount table is here,
// this process's (hostMounts): every mount, with its file system, source, root, mount point
// and options, as a helper started now would copy. A file system mounted,
// unmounted or remounted (read-only) since the helper started differs,
// wherever it is; so does a helper that is gone. Mount ids and
// propagation fields are left out: a copy has its own.
func (h *ahead) sameMounts(here []string) bool {
	there, err := mountTable("/proc/" + strconv.Itoa(h.cmd.Process.Pid) + "/mountinfo")
	return err == nil && here != nil && slices.Equal(here, there)
}

// mountTable reads a mountinfo file (proc(5)) and returns per mount its
// device, root, mount point, per-mount options, file system type, source
// and super options, sorted.
func mountTable(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		// id parent major:minor root mountpoint options [optional...] - type source superoptions
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 6 || len(f) != sep+4 {
			return nil, fmt.Errorf("%s: a line of %d fields: %q", path, len(f), line)
		}
		out = append(out, strings.Join([]string{f[2], f[3], f[4], f[5], f[sep+1], f[sep+2], f[sep+3]}, " "))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no mounts", path)
	}
	slices.Sort(out)
	return out, nil
}

// handable reports whether cmd's start can be handed to a helper started
// ahead: stdio that are files or nil (/dev/null), no other descriptor, no
// start attribute but its own process group, no context of exec's.
func handable(cmd *exec.Cmd) bool {
	for _, f := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if _, ok := f.(*os.File); f != nil && !ok {
			return false
		}
	}
	return cmd.Process == nil && len(cmd.ExtraFiles) == 0 && cmd.Cancel == nil && cmd.WaitDelay == 0 &&
		cmd.SysProcAttr != nil && reflect.DeepEqual(*cmd.SysProcAttr, syscall.SysProcAttr{Setpgid: true})
}

// hand gives h the call: its stdio and spec. cmd is then started: its
// Process is the helper, which confines itself and runs the command.
func (h *ahead) hand(s spec, cmd *exec.Cmd) (*Confined, error) {
	body, err := json.Marshal(s)
	if err != nil {
		h.kill()
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	var stdio [3]int
	var opened []*os.File
	defer func() {
		for _, f := range opened {
			f.Close()
		}
	}()
	for i, f := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		file, _ := f.(*os.File)
		if file == nil {
			mode := os.O_WRONLY
			if i == 0 {
				mode = os.O_RDONLY
			}
			if file, err = os.OpenFile(os.DevNull, mode, 0); err != nil {
				h.kill()
				return nil, fmt.Errorf("%w: %w", ErrSetup, err)
			}
			opened = append(opened, file)
		}
		stdio[i] = int(file.Fd())
	}
	hdr := binary.LittleEndian.AppendUint64(nil, uint64(len(body)))
	raw, err := h.sock.SyscallConn()
	if err != nil {
		h.kill()
		return nil, err
	}
	var sendErr error
	if err := raw.Write(func(fd uintptr) bool {
		sendErr = unix.Sendmsg(int(fd), hdr, unix.UnixRights(stdio[:]...), nil, unix.MSG_NOSIGNAL)
		return true
	}); err != nil || sendErr != nil {
		// It died waiting: the caller starts one for the call.
		h.kill()
		return nil, errors.Join(err, sendErr)
	}
	runtime.KeepAlive(cmd)
	cmd.Process = h.cmd.Process

	var wrote sync.WaitGroup
	wrote.Go(func() { _, _ = h.sock.Write(body) })
	c := &Confined{started: true, reported: make(chan struct{})}
	var report bytes.Buffer
	var read sync.WaitGroup
	read.Go(func() { c.readReport(h.sock, &report) })
	c.done = func() error {
		wrote.Wait()
		read.Wait()
		h.sock.Close()
		if msg := strings.TrimSpace(report.String()); msg != "" {
			return fmt.Errorf("%w: %s", ErrSetup, msg)
		}
		return nil
	}
	return c, nil
}
