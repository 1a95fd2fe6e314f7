package enforce

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// confine rewrites cmd to start the helper (this very binary, re-executed
// as helperName) in new namespaces, with the spec on a pipe; or, when pl
// has a helper of the kind waiting and cmd can be handed to it, hands it
// the spec and cmd's stdio, which starts cmd.
func confine(pl *Pool, p Profile, cmd *exec.Cmd, probe bool) (*Confined, error) {
	if cmd.Path == "" || cmd.Path[0] != '/' {
		return nil, fmt.Errorf("%w: the program path %q is not absolute", ErrSetup, cmd.Path)
	}
	dir := cmd.Dir
	if dir == "" {
		dir = p.Cwd
	}
	env := cmd.Env
	if env == nil {
		env = []string{}
	}
	// The helper builds mounts; what is checked after the call stays
	// here (a large tree has many guarded directories, and a working
	// directory some 170 absent protected paths, which the helper would
	// only decode). Fields are cleared by name, so that one added later
	// reaches the helper unless it is known to be the parent's alone.
	p.GuardDirs, p.GuardPaths, p.GuardKeep, p.GuardLinks = nil, nil, nil, nil
	p.Absent, p.AbsentKeep = nil, nil
	p.GitDirs, p.GitHeads, p.GitSubs, p.GitIndexes = nil, nil, nil, nil
	filter, err := seccompProgram(p.Network)
	if err != nil {
		return nil, fmt.Errorf("%w: seccomp: %w", ErrSetup, err)
	}
	mask, err := umask()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	lims, err := limits()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	s := spec{Profile: p, Path: cmd.Path, Args: cmd.Args, Env: env, Dir: dir, Probe: probe, LandlockABI: landlockABI(), Seccomp: filter,
		Umask: mask, Rlimits: specLimits(lims)}
	if !probe && handable(cmd) {
		if h := pl.take(p.Network); h != nil && (!h.sameMounts(pl.hostMounts()) || !h.sees(p) || !limitsOK(h.limits, lims)) {
			// Its mounts are not the ones a helper started now
			// would have (one mounted, unmounted or made read-only
			// since), or it could not take the call's limits.
			h.kill()
		} else if h != nil {
			if c, err := h.hand(s, cmd); err == nil {
				done := c.done
				c.done = func() error {
					defer pl.refill(p.Network)
					return done()
				}
				return c, nil
			}
			// It was gone: one is started for the call, as without
			// a pool.
		}
	}
	// The pool's kind is refilled once this call has ended (a call that
	// found none waiting, or could not be handed to one, included).
	c, err := startHelper(s, cmd)
	if err == nil && pl != nil && !probe {
		done := c.done
		c.done = func() error {
			defer pl.refill(p.Network)
			return done()
		}
	}
	return c, err
}

// startHelper rewrites cmd to start the helper with s.
func startHelper(s spec, cmd *exec.Cmd) (*Confined, error) {
	p := s.Profile
	body, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	var wrote sync.WaitGroup
	wrote.Go(func() {
		_, _ = specW.Write(body)
		specW.Close()
	})
	c := &Confined{reported: make(chan struct{})}
	var report bytes.Buffer
	var read sync.WaitGroup
	read.Go(func() { c.readReport(errR, &report) })

	cmd.Path = "/proc/self/exe"
	cmd.Args = []string{helperName}
	cmd.Env = []string{}
	// The helper's files: 0-2 as given, then the spec and the error pipe.
	cmd.ExtraFiles = []*os.File{specR, errW}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	inNamespaces(cmd.SysProcAttr, p.Network)

	c.done = func() error {
		specR.Close()
		errW.Close()
		wrote.Wait()
		read.Wait()
		errR.Close()
		if msg := strings.TrimSpace(report.String()); msg != "" {
			return fmt.Errorf("%w: %s", ErrSetup, msg)
		}
		return nil
	}
	return c, nil
}

// readReport reads what the helper writes on r: its report of the
// command's status (report), which closes c.reported, or else the text of
// its setup failure, into text, up to r's end. Nothing is read after a
// report: the helper writes nothing more, and the caller does not wait for
// its exit.
func (c *Confined) readReport(r io.Reader, text *bytes.Buffer) {
	b := make([]byte, reportLen)
	n, err := io.ReadFull(r, b)
	if err == nil && b[0] == reportKind {
		ws := syscall.WaitStatus(binary.LittleEndian.Uint32(b[1:]))
		if ws.Exited() || ws.Signaled() {
			c.status, c.code = uint32(ws), ws.ExitStatus()
			if ws.Signaled() {
				c.code = 128 + int(ws.Signal())
			}
			close(c.reported)
			return
		}
	}
	text.Write(b[:n])
	_, _ = io.Copy(text, io.LimitReader(r, 64<<10))
}

// Status returns the reported wait status of the command, only once
// Reported is closed.
func (c *Confined) Status() syscall.WaitStatus { return syscall.WaitStatus(c.status) }

// inNamespaces sets sys to start the helper in new user, mount, PID, IPC,
// UTS and (without the network) network namespaces, as uid and gid 0 mapped
// to the caller's, killed if the caller dies.
func inNamespaces(sys *syscall.SysProcAttr, network bool) {
	sys.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	if !network {
		sys.Cloneflags |= syscall.CLONE_NEWNET
	}
	sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	sys.GidMappingsEnableSetgroups = false
	sys.Pdeathsig = syscall.SIGKILL
}

var (
	probeOnce sync.Once
	probed    Support
)

// Probe reports what this machine supports. It sets a read-only sandbox up
// once, for real, in a throw-away directory (the first call costs one
// helper start; later calls return the same answer).
func Probe() Support {
	probeOnce.Do(func() { probed = probe() })
	return probed
}

func probe() Support {
	s := Support{LandlockABI: landlockABI()}
	if s.LandlockABI < 1 {
		s.Unavailable = "the kernel has no Landlock"
		return s
	}
	dir, err := os.MkdirTemp("", "custom-agent-sandbox-probe-")
	if err != nil {
		s.Unavailable = "no temporary directory for the probe: " + err.Error()
		return s
	}
	defer os.Remove(dir)
	cmd := exec.Command("/bin/true")
	cmd.Dir = dir
	c, err := confine(nil, Profile{Kind: ReadOnly, Cwd: dir}, cmd, true)
	if err != nil {
		s.Unavailable = err.Error()
		return s
	}
	runErr := cmd.Run()
	setupErr := c.Done()
	switch {
	case setupErr != nil:
		s.UserNamespaces = true
		s.Seccomp = !strings.Contains(setupErr.Error(), "seccomp:")
		s.Unavailable = setupErr.Error()
	case runErr != nil && cmd.ProcessState == nil:
		s.Unavailable = "no user namespaces: " + runErr.Error()
	case runErr != nil:
		s.UserNamespaces = true
		s.Unavailable = "the sandbox's probe failed: " + runErr.Error()
	default:
		s.UserNamespaces, s.Seccomp = true, true
	}
	return s
}
