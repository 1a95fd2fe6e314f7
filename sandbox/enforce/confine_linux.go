package enforce

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// landlockConfigs are the Landlock configurations by ABI version. The
// helper uses exactly the kernel's, never BestEffort: a configuration the
// kernel cannot enforce is an error, not a silent no-op.
var landlockConfigs = []landlock.Config{
	1: landlock.V1, 2: landlock.V2, 3: landlock.V3, 4: landlock.V4, 5: landlock.V5, 6: landlock.V6,
	7: landlock.V7, 8: landlock.V8, 9: landlock.V9, 10: landlock.V10, 11: landlock.V11,
}

// landlockABI returns the kernel's Landlock ABI version, 0 when it has none.
func landlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// restrictLandlock confines the calling thread with Landlock, a layer that
// holds even where a mount were wrong: reads and execution everywhere,
// writes only in the writable directories, /tmp, /var/tmp and /dev; no TCP
// bind or connect without the network (ABI 4); no signal to, or abstract
// socket of, a process outside the sandbox (ABI 6).
func restrictLandlock(s *spec) error {
	abi := s.LandlockABI
	if abi < 1 {
		return fmt.Errorf("this kernel has no Landlock")
	}
	if abi >= len(landlockConfigs) {
		abi = len(landlockConfigs) - 1
	}
	cfg := landlockConfigs[abi]
	writable := append([]string{"/tmp", "/var/tmp", "/dev"}, s.Profile.Writable...)
	writable = append(writable, s.Profile.Caches...)
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWDirs(writable...).WithRefer().WithIoctlDev().IgnoreIfMissing(),
	}
	if s.Profile.Network {
		// The network profile reaches any TCP port: Landlock leaves
		// TCP alone, so it must not handle it.
		cfg = withoutNet(cfg)
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// Every thread of the helper, not only the one that starts the
	// process.
	return llsys.AllThreadsLandlockRestrictSelf(fd, flags)
}

// withoutNet returns cfg without the network access rights it handles.
func withoutNet(cfg landlock.Config) landlock.Config {
	cfg.HandledAccessNet = 0
	return cfg
}

// seccompDenied are the system calls no confined process needs and that
// reach past the other layers: tracing and other processes' memory, kernel
// keyrings, BPF, io_uring (whose operations no filter sees), namespaces and
// mounts, and the module and reboot calls.
var seccompDenied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"open_by_handle_at", "name_to_handle_at",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "vhangup", "uselib",
	"ioperm", "iopl", "lookup_dcookie",
}

// seccompPrograms are the filters, without and with the network, each
// assembled once per process (the parent's) and sent in the spec: the
// helper only loads the one it is given.
var seccompPrograms [2]struct {
	once sync.Once
	prog []byte
	err  error
}

// seccompProgram returns the filter of a profile with or without the
// network, in the kernel's layout (struct sock_filter, 8 bytes each).
func seccompProgram(network bool) ([]byte, error) {
	c := &seccompPrograms[boolInt(network)]
	c.once.Do(func() { c.prog, c.err = assembleSeccomp(network) })
	return c.prog, c.err
}

// loadSeccomp installs prog, from seccompProgram, on every thread of the
// helper (TSYNC; no_new_privs is set on all of them before). A spec without
// a well-formed filter is a setup failure: the command never runs
// unfiltered.
func loadSeccomp(prog []byte) error {
	const size = int(unsafe.Sizeof(unix.SockFilter{}))
	if len(prog) == 0 || len(prog)%size != 0 || len(prog)/size > bpfMaxInsns {
		return fmt.Errorf("the spec carries no well-formed filter (%d bytes)", len(prog))
	}
	filter := make([]unix.SockFilter, len(prog)/size)
	for i := range filter {
		b := prog[i*size:]
		filter[i] = unix.SockFilter{Code: binary.NativeEndian.Uint16(b), Jt: b[2], Jf: b[3], K: binary.NativeEndian.Uint32(b[4:])}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// Every thread of the helper (TSYNC), not only the one that starts
	// the process: the others must not be a way out either.
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("loading the filter: %w", e)
	}
	runtime.KeepAlive(filter)
	return nil
}

// bpfMaxInsns is the kernel's limit on the length of one filter.
const bpfMaxInsns = 4096

// assembleSeccomp builds the filter of a profile with or without the
// network: the calls above fail with EPERM; ioctl TIOCSTI and
// TIOCLINUX (pushing keys into a terminal) too, and a chmod, open or
// mknod that sets the set-user-ID or set-group-ID bit (openat2 with
// ENOSYS); system calls of another
// architecture kill the process; clone with CLONE_NEWUSER
// too, and clone3, whose flags a filter cannot read, with ENOSYS so that
// the C library falls back to clone. Without the network, sockets of the
// IP families cannot even be made.
func assembleSeccomp(network bool) ([]byte, error) {
	groups := []seccomp.SyscallGroup{
		{Names: seccompDenied, Action: seccomp.ActionErrno},
		{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
		{
			NamesWithCondtions: []seccomp.NameWithConditions{
				{Name: "ioctl", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: unix.TIOCSTI}}},
				{Name: "ioctl", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: unix.TIOCLINUX}}},
				{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_NEWUSER}}},
			},
			Action: seccomp.ActionErrno,
		},
		// No set-user-ID or set-group-ID file is made: the mounts ignore
		// the bits, but the file stays on the host.
		{NamesWithCondtions: setIDCalls(), Action: seccomp.ActionErrno},
		// openat2 takes its mode in a structure a filter cannot read:
		// ENOSYS, on which the C library, Go and the tools that use it
		// fall back to openat, whose mode the rule above reads.
		{Names: []string{"openat2"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
	}
	if !network {
		var socks []seccomp.NameWithConditions
		for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6, unix.AF_PACKET, unix.AF_VSOCK} {
			socks = append(socks, seccomp.NameWithConditions{Name: "socket", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: fam}}})
		}
		groups = append(groups, seccomp.SyscallGroup{NamesWithCondtions: socks, Action: seccomp.ActionErrno})
	} else {
		groups = append(groups, seccomp.SyscallGroup{NamesWithCondtions: []seccomp.NameWithConditions{
			{Name: "socket", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_VSOCK}}},
		}, Action: seccomp.ActionErrno})
	}
	groups = append(groups, seccomp.SyscallGroup{NamesWithCondtions: setID("fchmodat2", 2), Action: seccomp.ActionErrno})
	policy := seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}
	insts, err := policy.Assemble()
	if err != nil {
		return nil, err
	}
	arch, ok := auditArch[runtime.GOARCH]
	if !ok {
		return nil, fmt.Errorf("no seccomp architecture check for %s", runtime.GOARCH)
	}
	// The library lets a system call of another architecture through
	// (on amd64: the i386 table, by int 0x80, where no rule above
	// applies). Anything but this architecture's own calls kills the
	// process, and so do x32 numbers.
	prefix := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: arch, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
	}
	raw, err := bpf.Assemble(append(prefix, insts...))
	if err != nil {
		return nil, err
	}
	if len(raw) > bpfMaxInsns {
		return nil, fmt.Errorf("the filter has %d instructions, more than the kernel takes", len(raw))
	}
	prog := make([]byte, 0, len(raw)*8)
	for _, r := range raw {
		prog = binary.NativeEndian.AppendUint16(prog, r.Op)
		prog = append(prog, r.Jt, r.Jf)
		prog = binary.NativeEndian.AppendUint32(prog, r.K)
	}
	return prog, nil
}

// x32Bit marks the x32 system call numbers on amd64.
const x32Bit = 0x40000000

// auditArch is the seccomp architecture of each GOARCH the sandbox runs on.
var auditArch = map[string]uint32{
	"amd64": unix.AUDIT_ARCH_X86_64,
	"arm64": unix.AUDIT_ARCH_AARCH64,
}

// setID returns the conditions that match name with the set-user-ID or
// set-group-ID bit in argument arg (a mode), and the further conditions
// also.
func setID(name string, arg uint32, also ...seccomp.Condition) []seccomp.NameWithConditions {
	var out []seccomp.NameWithConditions
	for _, bit := range []uint64{unix.S_ISUID, unix.S_ISGID} {
		conds := append(seccomp.ArgumentConditions{{Argument: arg, Operation: seccomp.BitsSet, Value: bit}}, also...)
		out = append(out, seccomp.NameWithConditions{Name: name, Conditions: conds})
	}
	return out
}

// creating is the condition that the flags in argument arg of an open make
// a file: O_CREAT, or O_TMPFILE (an unnamed file linkat names later).
// Without them the kernel ignores the mode, and callers pass 0 or
// anything.
func creating(arg uint32) seccomp.Condition {
	return seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: unix.O_CREAT | (unix.O_TMPFILE &^ unix.O_DIRECTORY)}
}

// setIDCalls are the calls that would give a file the set-user-ID or
// set-group-ID bit: chmod and its kin by their mode, and the calls that
// make a file with a mode (open, openat and creat when they create, mknod,
// mknodat). The umask cannot be relied on to clear the bits (the process
// may set it to 0), so the mode asked for is what is judged. open, creat
// and mknod exist on amd64 only; arm64 has the *at forms.
func setIDCalls() []seccomp.NameWithConditions {
	out := slices.Concat(
		setID("chmod", 1), setID("fchmod", 1), setID("fchmodat", 2),
		setID("openat", 3, creating(2)), setID("mknodat", 2),
	)
	if runtime.GOARCH == "amd64" {
		out = slices.Concat(out, setID("open", 2, creating(1)), setID("creat", 1), setID("mknod", 1))
	}
	return out
}
