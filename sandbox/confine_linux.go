package sandbox

import (
	"fmt"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
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
	// This thread only: the process is started from it.
	return llsys.LandlockRestrictSelf(fd, flags)
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

// loadSeccomp installs the filter on the calling thread (with
// no_new_privs): the calls above fail with EPERM; ioctl TIOCSTI and
// TIOCLINUX (pushing keys into a terminal) too, and a chmod that sets
// the set-user-ID bit; clone with CLONE_NEWUSER
// too, and clone3, whose flags a filter cannot read, with ENOSYS so that
// the C library falls back to clone. Without the network, sockets of the
// IP families cannot even be made.
func loadSeccomp(network bool) error {
	groups := []seccomp.SyscallGroup{
		{Names: seccompDenied, Action: seccomp.ActionErrno},
		{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
		{
			NamesWithCondtions: []seccomp.NameWithConditions{
				{Name: "ioctl", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: unix.TIOCSTI}}},
				{Name: "ioctl", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: unix.TIOCLINUX}}},
				{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_NEWUSER}}},
				// No set-user-ID file is made: the mounts ignore the
				// bit, but the file stays on the host.
				{Name: "chmod", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.BitsSet, Value: unix.S_ISUID}}},
				{Name: "fchmod", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.BitsSet, Value: unix.S_ISUID}}},
				{Name: "fchmodat", Conditions: seccomp.ArgumentConditions{{Argument: 2, Operation: seccomp.BitsSet, Value: unix.S_ISUID}}},
			},
			Action: seccomp.ActionErrno,
		},
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
	return seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Policy:     seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups},
	})
}
