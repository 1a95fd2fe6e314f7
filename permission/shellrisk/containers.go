package shellrisk

import (
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Containers and remote shells are judged by what they mount and run.
//
// What a container may reach of the host decides the risk, not the word
// "docker":
//   - a bind mount's host path is an access of that path (a read, and a
//     write unless the mount is read-only); a mount of /, of the home or of
//     a directory holding secrets is credential (the container reads every
//     secret beneath it); a read-write mount of a system directory (/etc,
//     /usr, /var, …) is destructive, since the container can change or
//     delete it. A mount of the working directory is an ordinary write.
//   - the Docker socket (-v /var/run/docker.sock, --use-api-socket),
//     --privileged, --cap-add SYS_ADMIN (and ALL, SYS_MODULE, SYS_RAWIO) and
//     a host disk as --device each make the container root on the host: it
//     can start another container that mounts / or mount the host's disks
//     itself, so it can read every secret and change or delete anything.
//     That is judged destructive, the highest level, with the host's
//     secrets counted as a credential source: credential alone would say
//     "reads secrets" when the grant is "does anything".
//   - --pid=host, --cap-add SYS_PTRACE or DAC_READ_SEARCH reach the host's
//     processes or files: credential. --net=host reaches services bound to
//     the host's loopback: network. Other shared namespaces and weakened
//     security options: execute.
//   - the command run in the container is parsed and judged there
//     (elsewhere): its paths are the container's, not accesses of the
//     host, except where a bind mount maps them to a host path; a secret
//     read there is still a secret printed here; destruction stays
//     destructive unless the container is fresh and mounts nothing of the
//     host (docker run without any mount), where it only touches the
//     container's own files and counts as a write.
//   - a remote daemon (-H tcp://…, DOCKER_HOST, a context, podman
//     --remote) is network: every container runs on another machine.
//
// docker run is network as before (it pulls the image when it is missing,
// and the container has the network) unless both --pull=never and
// --network=none are given.

// containerGlobalValue are the global options of docker, podman and nerdctl
// that take a value; containerGlobalFlag those that take none.
var (
	containerGlobalValue = []string{"-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--tlscacert", "--tlscert",
		"--tlskey", "--connection", "--url", "--identity", "--root", "--runroot", "--storage-driver", "--storage-opt",
		"--cgroup-manager", "--conmon", "--events-backend", "--hooks-dir", "--imagestore", "--module", "--network-cmd-path",
		"--network-config-dir", "--out", "--registries-conf", "--runtime", "--runtime-flag", "--ssh", "--tmpdir",
		"--volumepath", "--cni-config-dir", "-a", "--address", "-n", "--namespace", "--snapshotter", "--cni-path",
		"--cni-netconfpath", "--data-root", "--host-gateway-ip", "--hosts-dir", "--bridge-ip"}
	containerGlobalFlag = []string{"-D", "--debug", "--tls", "--tlsverify", "-v", "--version", "-h", "--help", "-r", "--remote",
		"--syslog", "--transient-store", "--noout", "--debug-full", "--experimental", "--insecure-registry"}
)

// containerGlobalOpts is the table of those options, for scan: they end at
// the subcommand, and as pflag reads them, are never abbreviated.
var containerGlobalOpts = lazy[opts]{build: func() opts {
	o := opts{stop: true, exact: true, complete: true}
	for _, v := range containerGlobalValue {
		if l, ok := strings.CutPrefix(v, "--"); ok {
			o.long = append(o.long, l)
		} else {
			o.short += v[1:]
		}
	}
	for _, f := range containerGlobalFlag {
		if l, ok := strings.CutPrefix(f, "--"); ok {
			o.flagsLong = append(o.flagsLong, l)
		} else {
			o.flags += f[1:]
		}
	}
	return o
}}

// ruleContainer judges docker, podman and nerdctl. Subcommands it does not
// change (rm, prune, push, pull, build, inspect, …) go to ruleDocker with
// the global options taken off.
func ruleContainer(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	args := c.args
	remote := false
	os, tail := a.scan(containerGlobalOpts.get(), args)
	for _, op := range os {
		if op.unknown {
			return // scan made the command opaque
		}
		opt, x, val := op.name, op.x, op.val
		if !slices.Contains(containerGlobalValue, opt) {
			if opt == "-r" || opt == "--remote" {
				remote = true
				a.network(x.sp, quote(name+" "+opt), name+" "+opt+" sends the command to a daemon on another machine")
			}
			continue
		}
		if val == (arg{}) {
			return // the value is missing: there is no subcommand
		}
		if val.dyn {
			a.opaque(val.sp, name+" "+opt+" is given a value built at run time")
			return
		}
		v := val.s
		if len(opt) == 2 {
			v = strings.TrimPrefix(v, "=") // pflag takes -H=URL as -H URL
		}
		switch opt {
		case "-H", "--host", "--url", "-a", "--address":
			if remoteDaemon(v) {
				remote = true
				a.network(x.sp, quote(name+" "+opt), name+" "+opt+" "+v+" sends the command to a daemon on another machine, where its containers run")
			}
		case "-c", "--context", "--connection":
			if v != "default" {
				remote = true
				a.network(x.sp, quote(name+" "+opt), name+" "+opt+" "+v+" sends the command to the daemon the context names, which may be on another machine")
			}
		}
	}
	if len(tail) == 0 {
		return
	}
	i := len(args) - len(tail) // the subcommand
	if sub := args[i]; sub.dyn {
		if at := args[i-1]; at.dyn || at.s != "--" {
			a.opaque(sub.sp, name+" is given a word built at run time before its subcommand")
			return
		}
	}
	sub := args[i]
	if sub.dyn {
		a.opaque(sub.sp, name+" runs a subcommand built at run time")
		return
	}
	rest := args[i+1:]
	if sub.s == "container" && len(rest) > 0 && !rest[0].dyn {
		sub, rest = rest[0], rest[1:]
	}
	switch sub.s {
	case "run", "create":
		a.containerRun(c, name, sub.s, rest, remote)
	case "exec":
		a.containerExec(c, name, rest)
	case "compose":
		a.compose(c, name, args[i:], rest)
	case "context":
		if len(rest) > 0 && (rest[0].s == "use" || rest[0].s == "create") {
			a.network(c.sp, quote(name+" context "+rest[0].s), name+" context "+rest[0].s+" points later "+name+" commands at the daemon the context names, which may be on another machine")
		}
	case "cp":
		a.containerCp(c, rest)
	default:
		ruleDocker(a, a.newCall(call{args: append([]arg{args[0]}, args[i:]...), sp: c.sp, in: c.in, cwd: c.cwd, dyn: c.dyn}))
	}
}

// runValue are the long options of docker/podman/nerdctl run and create
// that take a value; runFlags those that take none (or an attached
// =true/=false, as pflag reads a boolean). With the short ones they make
// runOpts, complete for docker 28, podman 5 and nerdctl 2: an option it
// does not list makes the call Opaque, since its value would be taken for
// the image or the command.
var (
	runValue = []string{"add-host", "annotation", "attach", "blkio-weight", "blkio-weight-device", "cap-add", "cap-drop",
		"cgroup-parent", "cgroupns", "cidfile", "cpu-count", "cpu-percent", "cpu-period", "cpu-quota", "cpu-rt-period",
		"cpu-rt-runtime", "cpu-shares", "cpus", "cpuset-cpus", "cpuset-mems", "detach-keys", "device", "device-cgroup-rule",
		"device-read-bps", "device-read-iops", "device-write-bps", "device-write-iops", "dns", "dns-opt", "dns-option",
		"dns-search", "domainname", "entrypoint", "env", "env-file", "expose", "gpus", "group-add", "health-cmd",
		"health-interval", "health-retries", "health-start-interval", "health-start-period", "health-timeout", "hostname",
		"io-maxbandwidth", "io-maxiops", "ip", "ip6", "ipc", "isolation", "kernel-memory", "label", "label-file", "link",
		"link-local-ip", "log-driver", "log-opt", "mac-address", "memory", "memory-reservation", "memory-swap",
		"memory-swappiness", "mount", "name", "network", "net", "network-alias", "net-alias", "oom-score-adj", "pid",
		"pids-limit", "platform", "publish", "pull", "restart", "runtime", "security-opt", "shm-size", "stop-signal",
		"stop-timeout", "storage-opt", "sysctl", "tmpfs", "ulimit", "user", "userns", "uts", "volume", "volume-driver",
		"volumes-from", "workdir",
		// podman
		"arch", "authfile", "cert-dir", "cgroup-conf", "cgroups", "chrootdirs", "conmon-pidfile", "creds", "decryption-key",
		"env-merge", "gidmap", "group-entry", "health-log-destination", "health-max-log-count", "health-max-log-size",
		"health-on-failure", "health-startup-cmd", "health-startup-interval", "health-startup-retries",
		"health-startup-success", "health-startup-timeout", "hosts-file", "hostuser", "image-volume", "init-path", "os",
		"passwd-entry", "personality", "pidfile", "pod", "pod-id-file", "preserve-fd", "preserve-fds", "rdt-class",
		"requires", "retry", "retry-delay", "sdnotify", "seccomp-policy", "secret", "shm-size-systemd", "subgidname",
		"subuidname", "systemd", "timeout", "uidmap", "umask", "unsetenv", "variant",
		// nerdctl
		"cosign-key", "verify", "ipfs-address"}
	runFlags = []string{"detach", "disable-content-trust", "help", "init", "interactive", "no-healthcheck", "oom-kill-disable",
		"privileged", "publish-all", "quiet", "read-only", "rm", "sig-proxy", "tty", "use-api-socket", "env-host",
		"http-proxy", "no-hosts", "read-only-tmpfs", "replace", "rootfs", "tls-verify", "unsetenv-all", "passwd", "rmi"}
)

// runOpts is the table of docker run's options: pflag's, so flags
// cluster (-it), a short option takes its value attached (-v/a:/b,
// -v=/a:/b) or as the next word, and long options are never abbreviated.
var runOpts = opts{short: "acehlmpuvw", long: runValue, flags: "ditPq", flagsLong: runFlags,
	stop: true, exact: true, complete: true, boolValue: true}

// afterDashDash reports whether the operand at args[at] follows a "--"
// that ended the options, and is not the value of the last option read.
func afterDashDash(os []opt, args []arg, at int) bool {
	if at < 1 || args[at-1].dyn || args[at-1].s != "--" {
		return false
	}
	if len(os) > 0 {
		last := os[len(os)-1]
		if !last.attached && last.val != (arg{}) && last.val.sp == args[at-1].sp && last.val.s == "--" {
			return false // "--" is that option's value
		}
	}
	return true
}

// container is what a run or create gives the container of the host.
type container struct {
	mounts      []mount
	hostReached bool // a mount, a volume, the socket, --privileged, a device…
	noNet       bool
	pullNever   bool
	entrypoint  *arg
	workdir     string
}

// mount is a bind mount: the host path and where it appears inside.
type mount struct{ host, target string }

// containerRun judges docker run and create: the options that give the
// container power over the host, the mounts, and the command it runs.
func (a *analyzer) containerRun(c *call, name, verb string, args []arg, remote bool) {
	ct := container{}
	os, tail := a.scan(runOpts, append([]arg{c.args[0]}, args...))
	rootfs := false
	for _, op := range os {
		if op.unknown {
			return // scan made the command opaque
		}
		short := len(op.name) == 2
		if short && strings.IndexByte(runOpts.flags, op.name[1]) >= 0 || !short && slices.Contains(runFlags, op.name[2:]) {
			if op.attached && (op.val.s == "false" || op.val.s == "0") {
				continue
			}
			rootfs = rootfs || op.name == "--rootfs"
			a.runOpt(c, &ct, name, op.name, arg{}, remote)
			continue
		}
		v := op.val
		if v == (arg{}) {
			return // the value is missing: there is no image
		}
		if short && op.attached {
			v.s = strings.TrimPrefix(v.s, "=") // pflag takes -v=/a:/b as -v /a:/b
		}
		a.runOpt(c, &ct, name, op.name, v, remote)
	}
	at := len(args) - len(tail) // the image
	if len(tail) > 0 && tail[0].dyn && !afterDashDash(os, args, at) {
		a.opaque(tail[0].sp, name+" "+verb+" is given a word built at run time where an option or the image may stand")
		return
	}
	if !(ct.noNet && ct.pullNever) {
		a.network(c.sp, quote(name+" "+verb), name+" "+verb+" may pull the image and gives the container network access")
	}
	if len(tail) == 0 {
		return
	}
	if rootfs {
		// podman run --rootfs: the image is a host directory, the
		// container's root file system (PATH[:O][,idmap…]); with O an
		// overlay keeps the container's changes off it.
		img := tail[0]
		if img.dyn {
			a.opaque(img.sp, name+" "+verb+" --rootfs is given a root file system built at run time")
			return
		}
		dir, overlay := rootfsPath(img.s)
		ct.hostReached = true
		a.bindMount(c, &ct, name, img, dir, "/", overlay, remote)
	}
	cmd := tail[1:]
	if ct.entrypoint != nil {
		cmd = append([]arg{*ct.entrypoint}, cmd...)
	}
	if len(cmd) == 0 {
		return // the image's own command, judged by the grants above
	}
	cwd := "/"
	if strings.HasPrefix(ct.workdir, "/") {
		cwd = cleanAbs(ct.workdir)
	}
	mounts := ct.mounts
	a.elsewhere(elsewhere{where: "inside the container", cwd: cwd, keepDestroy: ct.hostReached, host: func(p string) string {
		return hostPath(mounts, p)
	}}, func() { a.inner(c, cmd, cwd, false) })
}

// rootfsPath splits podman's --rootfs operand into the host directory and
// whether its options ask for an overlay (O).
func rootfsPath(s string) (string, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, false
	}
	overlay := false
	for _, o := range strings.Split(s[i+1:], ",") {
		switch {
		case o == "O":
			overlay = true
		case o == "idmap" || strings.HasPrefix(o, "idmap="):
		default:
			return s, false // not options: part of the path
		}
	}
	return s[:i], overlay
}

// hostPath maps a path inside a container to the host path a bind mount
// shows there, or "".
func hostPath(ms []mount, p string) string {
	best, host := -1, ""
	for _, m := range ms {
		t := m.target
		if m.host == "" || t == "" {
			continue
		}
		if p == t || t == "/" || strings.HasPrefix(p, t+"/") {
			if len(t) > best {
				best = len(t)
				rest := strings.TrimPrefix(p, t)
				if t == "/" {
					rest = p
				}
				host = cleanAbs(m.host + "/" + strings.TrimPrefix(rest, "/"))
			}
		}
	}
	return host
}

// runOpt judges one option of run or create.
func (a *analyzer) runOpt(c *call, ct *container, name, opt string, v arg, remote bool) {
	if v.dyn && opt != "-e" && opt != "--env" && opt != "--label" && opt != "-l" && opt != "--name" {
		a.opaque(v.sp, name+" "+opt+" is given a value built at run time, so what the container reaches of the host is not known; no rule allows it")
		if opt == "-v" || opt == "--volume" || opt == "--mount" {
			ct.hostReached = true
		}
		return
	}
	val := v.s
	switch opt {
	case "--privileged":
		ct.hostReached = true
		a.hostRoot(c.sp, name+" --privileged gives the container every capability and device of the host, so it can mount the host's disks")
	case "--use-api-socket":
		ct.hostReached = true
		a.hostRoot(c.sp, name+" --use-api-socket hands the container the Docker daemon's API, which runs as root")
	case "--pid":
		if val == "host" {
			ct.hostReached = true
			a.credSource(v.sp, "the host's processes")
			a.find(risk.Credential, v.sp, name+" --pid=host shares the host's processes with the container, whose root can read their environments and memory and signal them")
		} else if strings.HasPrefix(val, "container:") {
			a.find(risk.Execute, v.sp, name+" --pid="+val+" shares another container's processes")
		}
	case "--net", "--network":
		switch {
		case val == "host":
			a.network(v.sp, quote(name+" --network=host"), name+" --network=host shares the host's network, so services bound to the host's loopback are reachable from the container")
		case val == "none":
			ct.noNet = true
		}
	case "--ipc", "--uts", "--userns", "--cgroupns":
		if val == "host" {
			a.find(risk.Execute, v.sp, name+" "+opt+"=host shares a namespace of the host with the container")
		}
	case "--cap-add":
		for _, cp := range strings.Split(val, ",") {
			a.capAdd(c, ct, name, strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(cp)), "CAP_"), v.sp)
		}
	case "--security-opt":
		if val != "no-new-privileges" && !strings.HasPrefix(val, "no-new-privileges") {
			a.find(risk.Execute, v.sp, name+" --security-opt "+val+" changes the container's confinement")
		}
	case "--device":
		ct.hostReached = true
		dev, _, _ := strings.Cut(val, ":")
		if isBlockDevice(dev) || dev == "/dev/mem" || dev == "/dev/kmem" || dev == "/dev/port" {
			a.find(risk.Destructive, v.sp, name+" --device "+dev+" gives the container raw access to a host disk or memory, which it can overwrite")
		} else {
			a.find(risk.Execute, v.sp, name+" --device "+dev+" gives the container a device of the host")
		}
	case "--volumes-from":
		ct.hostReached = true
		a.find(risk.Execute, v.sp, name+" --volumes-from "+val+" mounts another container's volumes, which may be host directories")
	case "-v", "--volume":
		a.volume(c, ct, name, v, remote)
	case "--mount":
		a.mountOpt(c, ct, name, v, remote)
	case "--entrypoint":
		e := v
		ct.entrypoint = &e
	case "-w", "--workdir":
		ct.workdir = val
	case "--pull":
		ct.pullNever = val == "never"
	case "--env-file", "--label-file", "--authfile", "--decryption-key", "--cosign-key", "--hosts-file":
		// Read on this machine; --hosts-file is copied into the container.
		if !remote {
			a.access(v, c.cwd, false, false)
		}
	case "--cidfile", "--pidfile", "--conmon-pidfile", "--pod-id-file":
		if !remote {
			a.access(v, c.cwd, true, false)
		}
	case "--health-log-destination":
		// podman writes the health checks' log to a directory of the host
		// unless it is one of its own destinations.
		if val != "local" && val != "events_logger" && !remote {
			a.access(v, c.cwd, true, false)
		}
	}
}

// capAdd judges one capability given to the container.
func (a *analyzer) capAdd(c *call, ct *container, name, cp string, sp risk.Span) {
	switch cp {
	case "ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_RAWIO", "SYS_BOOT":
		ct.hostReached = true
		a.hostRoot(sp, name+" --cap-add "+cp+" lets the container's root mount file systems, load kernel modules or reach devices, which escapes to the host")
	case "SYS_PTRACE", "DAC_READ_SEARCH":
		ct.hostReached = true
		a.credSource(sp, "the host's files and processes")
		a.find(risk.Credential, sp, name+" --cap-add "+cp+" lets the container read memory of processes it sees or files of the host by handle, which hold secrets")
	case "NET_ADMIN", "NET_RAW":
		a.network(sp, quote(name+" --cap-add "+cp), name+" --cap-add "+cp+" lets the container craft packets and change the network")
	default:
		a.find(risk.Execute, sp, name+" --cap-add "+cp+" gives the container a capability beyond the default")
	}
}

// hostRoot records a grant that makes a container, or a command, root on
// the host: it can read every secret there and change or delete anything.
func (a *analyzer) hostRoot(sp risk.Span, why string) {
	a.credSource(sp, "the whole host")
	a.find(risk.Destructive, sp, why+": that is root on the host, able to read every secret and change or delete anything")
}

// volume judges -v SRC:DST[:OPTS]; a SRC that is no path is a named
// volume.
func (a *analyzer) volume(c *call, ct *container, name string, v arg, remote bool) {
	parts := strings.Split(v.s, ":")
	if len(parts) < 2 {
		return // an anonymous volume
	}
	src, dst := parts[0], parts[1]
	ro := len(parts) > 2 && slices.ContainsFunc(strings.Split(parts[2], ","), func(o string) bool { return o == "ro" || o == "readonly" })
	ct.hostReached = true
	if !(strings.HasPrefix(src, "/") || strings.HasPrefix(src, ".") || strings.HasPrefix(src, "~")) {
		return // a named volume: the daemon's, not a host path the command names
	}
	a.bindMount(c, ct, name, v, src, dst, ro, remote)
}

// mountOpt judges --mount type=bind,source=…,target=…[,readonly].
func (a *analyzer) mountOpt(c *call, ct *container, name string, v arg, remote bool) {
	typ, src, dst, ro := "volume", "", "", false
	for _, kv := range strings.Split(v.s, ",") {
		k, val, hasVal := strings.Cut(kv, "=")
		switch strings.ToLower(k) {
		case "type":
			typ = val
		case "source", "src":
			src = val
		case "target", "destination", "dst":
			dst = val
		case "readonly", "ro":
			ro = !hasVal || val == "true" || val == "1"
		}
	}
	switch typ {
	case "tmpfs", "image", "devpts":
		return
	case "bind", "glob":
		ct.hostReached = true
		if src == "" {
			return
		}
		a.bindMount(c, ct, name, v, src, dst, ro, remote)
	default:
		ct.hostReached = true // a named volume keeps what the container does
	}
}

// systemDirs are host directories whose contents the system runs or needs.
var systemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/var", "/opt",
	"/root", "/dev", "/proc", "/sys", "/srv", "/run", "/System", "/Library", "/private", "/Applications"}

// bindMount judges the host path of a bind mount as an access, and what
// the container can do with it.
func (a *analyzer) bindMount(c *call, ct *container, name string, v arg, src, dst string, ro, remote bool) {
	x := arg{s: src, sp: v.sp}
	p := resolve(src, c.cwd)
	if strings.HasPrefix(src, "~") {
		if home := a.env.Home; home != "" {
			p = cleanAbs(home + "/" + strings.TrimPrefix(strings.TrimPrefix(src, "~"), "/"))
		}
	}
	if p != "" {
		x.s = p
		ct.mounts = append(ct.mounts, mount{host: p, target: cleanAbs(dst)})
	}
	if !remote {
		a.accessDeep(x, c.cwd)
		if !ro {
			a.access(x, c.cwd, true, false)
		}
	}
	where := "the host directory " + quote(src)
	if remote {
		where += " of the remote machine"
	}
	switch {
	case p == "":
		a.opaque(v.sp, name+" mounts a host path that is not known, which may be / or the home")
	case isSocket(p):
		a.hostRoot(v.sp, name+" mounts "+quote(src)+", the container daemon's socket, into the container, which can then start containers that mount / with the daemon's root rights")
	case p == "/" || pathrisk.HoldsSecrets(p, a.pathEnv()) || isHomeOrAbove(p, a.env.Home):
		a.credSource(v.sp, p)
		a.find(risk.Credential, v.sp, name+" mounts "+where+" into the container, which can read every secret beneath it")
	}
	if !ro && p != "" && !isSocket(p) && (p == "/" || isHomeOrAbove(p, a.env.Home) || slices.ContainsFunc(systemDirs, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") })) {
		a.find(risk.Destructive, v.sp, name+" mounts "+where+" read-write into the container, which can change or delete it")
	}
}

// isSocket reports the socket of a container daemon, or a directory that
// holds one (/var/run, /run).
func isSocket(p string) bool {
	switch p {
	case "/var/run", "/run", "/run/containerd", "/var/run/containerd", "/run/podman", "/run/user":
		return true
	}
	b := p[strings.LastIndexByte(p, '/')+1:]
	return b == "docker.sock" || b == "podman.sock" || b == "containerd.sock" || b == "buildkitd.sock" || b == "crio.sock" || b == "dockershim.sock"
}

// isHomeOrAbove reports the home directory or a directory above it (/home).
func isHomeOrAbove(p, home string) bool {
	if home == "" {
		return false
	}
	return p == home || strings.HasPrefix(home, strings.TrimSuffix(p, "/")+"/") && p != "/" ||
		p == "/home" || p == "/Users"
}

// execOpts is the option table of docker (podman, nerdctl) exec. Its
// options end at the container's name; as pflag reads them, long options
// are never abbreviated.
var execOpts = opts{short: "euw", long: []string{"env", "env-file", "detach-keys", "user", "workdir", "preserve-fds"},
	flags: "ditl", flagsLong: []string{"detach", "interactive", "tty", "privileged", "latest"},
	stop: true, exact: true, complete: true}

// containerExec judges docker exec CTR CMD: the command runs inside a
// running container, whose data it can change or delete.
func (a *analyzer) containerExec(c *call, name string, args []arg) {
	a.find(risk.Execute, c.sp, name+" exec runs a command inside a running container")
	cwd := "/"
	os, rest := a.scan(execOpts, append([]arg{c.args[0]}, args...))
	for _, op := range os {
		if op.unknown {
			return // scan made the command opaque
		}
		// pflag takes -w=/dir as -w /dir.
		val := arg{s: strings.TrimPrefix(op.val.s, "="), sp: op.val.sp, w: op.val.w, dyn: op.val.dyn}
		switch op.name {
		case "-w", "--workdir":
			cwd = val.s
		case "--env-file":
			a.access(arg{s: val.s, sp: op.x.sp}, c.cwd, false, false)
		case "--privileged":
			a.find(risk.Execute, op.x.sp, name+" exec --privileged runs the command with every capability of the host")
		}
	}
	if len(rest) > 0 && rest[0].dyn {
		if !afterDashDash(os, args, len(args)-len(rest)) {
			a.opaque(rest[0].sp, name+" exec is given a word built at run time where an option or the container may stand")
			return
		}
	}
	i := len(args) - len(rest) // the container
	if i+1 >= len(args) {
		return
	}
	if !strings.HasPrefix(cwd, "/") {
		cwd = "/"
	}
	cmd := args[i+1:]
	a.elsewhere(elsewhere{where: "inside the container", cwd: cwd, keepDestroy: true}, func() { a.inner(c, cmd, cwd, false) })
}

// containerCp: docker cp SRC DST, where a path with CTR: is the
// container's and any other a host path (read as the source, written as
// the destination).
func (a *analyzer) containerCp(c *call, args []arg) {
	var ops []arg
	for _, x := range args {
		if !x.dyn && strings.HasPrefix(x.s, "-") && x.s != "-" {
			continue
		}
		ops = append(ops, x)
	}
	for i, x := range ops {
		if isRemote(x.s) || x.s == "-" {
			continue
		}
		if i == len(ops)-1 && len(ops) > 1 {
			a.access(x, c.cwd, true, false)
		} else {
			a.accessDeep(x, c.cwd)
		}
	}
}

// composeOpts are the options of docker compose before its subcommand
// (compose v2 and later, hidden ones included: --workdir, --no-ansi,
// --verbose, --insecure-registry, -v/--version), and composeExecOpts
// those of compose exec before the service. Both tables are complete: an
// option they do not list may take a value the analysis would read as
// the subcommand or the service, so it makes the command Opaque. As
// pflag reads them, long options are never abbreviated.
var (
	composeOpts = opts{short: "fp", long: []string{"file", "project-name", "profile", "env-file", "project-directory",
		"workdir", "ansi", "progress", "parallel", "insecure-registry"},
		flags: "hv", flagsLong: []string{"compatibility", "all-resources", "dry-run", "no-ansi", "verbose", "version", "help"},
		stop: true, exact: true, complete: true}
	composeExecOpts = opts{short: "euw", long: []string{"env", "index", "user", "workdir"},
		flags: "dTith", flagsLong: []string{"detach", "privileged", "no-tty", "no-TTY", "interactive", "tty", "dry-run", "help"},
		stop: true, exact: true, complete: true}
)

// compose judges docker compose: read-only subcommands talk only to the
// local daemon; exec and run run a command in a service's container;
// the rest is ruleDocker's.
func (a *analyzer) compose(c *call, name string, whole, args []arg) {
	os, rest := a.scan(composeOpts, append([]arg{c.args[0]}, args...))
	for _, op := range os {
		if op.unknown {
			return // scan made the command opaque
		}
		switch op.name {
		case "-f", "--file", "--env-file":
			if op.val.s != "" || op.val.dyn {
				a.access(op.val, c.cwd, false, false)
			}
		}
	}
	i := len(args) - len(rest)
	if i < len(args) && args[i].dyn {
		a.opaque(args[i].sp, name+" compose is given a word built at run time where an option or its subcommand may stand")
		return
	}
	sub := ""
	if i < len(args) {
		sub = args[i].s
	}
	switch sub {
	case "ps", "ls", "config", "images", "top", "version", "port", "logs", "events", "convert":
		return // what the local daemon and the compose file say
	case "exec":
		a.find(risk.Execute, c.sp, name+" compose exec runs a command inside a service's container")
		eos, svc := a.scan(composeExecOpts, args[i:])
		for _, op := range eos {
			if op.unknown {
				return // scan made the command opaque
			}
			if op.name == "--privileged" {
				a.find(risk.Execute, op.x.sp, name+" compose exec --privileged runs the command with every capability of the host")
			}
		}
		if len(svc) > 0 && svc[0].dyn {
			a.opaque(svc[0].sp, name+" compose exec is given a word built at run time where an option or the service may stand")
			return
		}
		if len(svc) > 1 {
			cmd := svc[1:]
			a.elsewhere(elsewhere{where: "inside the container", cwd: "/", keepDestroy: true}, func() { a.inner(c, cmd, "/", false) })
		}
		return
	}
	// ruleDocker reads the subcommand from the words, so it is given them
	// without compose's options, judged above.
	sc := make([]arg, 0, 2+len(args)-i)
	sc = append(append(append(sc, c.args[0]), whole[0]), args[i:]...)
	ruleDocker(a, a.newCall(call{args: sc, sp: c.sp, in: c.in, cwd: c.cwd, dyn: c.dyn}))
}

// ruleKubectlSideDoor: kubectl exec, debug and run judge the command they
// run in the pod; kubectl debug node/… and run --overrides with a
// privileged or host pod are root on the node; completion prints a
// script and talks to no cluster.
func ruleKubectlSideDoor(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	v := firstVerb(c, "completion", "exec", "debug", "run", "cp", "version")
	switch v {
	case "completion":
		return
	case "version":
		if _, ok := hasArg(c, func(s string) bool { return s == "--client" || s == "--client=true" }); ok {
			return
		}
	}
	ruleKubectl(a, c)
	dash := -1
	for i, x := range c.args {
		if !x.dyn && x.s == "--" {
			dash = i
			break
		}
	}
	switch v {
	case "debug":
		if _, ok := hasArg(c, func(s string) bool { return strings.HasPrefix(s, "node/") || strings.HasPrefix(s, "nodes/") }); ok {
			a.hostRoot(c.sp, name+" debug node/… runs a pod in the node's namespaces with the node's root file system mounted at /host")
		}
	case "run":
		if x, ok := hasArg(c, func(s string) bool {
			return strings.Contains(s, "privileged") || strings.Contains(s, "hostPID") || strings.Contains(s, "hostPath")
		}); ok {
			a.hostRoot(x.sp, name+" run --overrides asks for a privileged pod, the node's processes or a host path")
		}
	case "cp":
		var ops []arg
		for _, x := range c.args[1:] {
			if x.s != "cp" && !strings.HasPrefix(x.s, "-") {
				ops = append(ops, x)
			}
		}
		for i, x := range ops {
			if isRemote(x.s) {
				continue
			}
			if i == len(ops)-1 && len(ops) > 1 {
				a.access(x, c.cwd, true, false)
			} else {
				a.accessDeep(x, c.cwd)
			}
		}
		return
	case "exec":
		if dash < 0 {
			a.opaque(c.sp, name+" exec without -- names its command in a way the analyser does not follow")
			return
		}
	default:
		return
	}
	if dash < 0 || dash+1 >= len(c.args) {
		return
	}
	cmd := c.args[dash+1:]
	a.elsewhere(elsewhere{where: "inside the pod", cwd: "/", keepDestroy: true}, func() { a.inner(c, cmd, "/", false) })
}

// nsenterOpts is nsenter's option table (util-linux 2.40 to 2.42). Its
// options end at the first operand, the command. -m, -u, -i, -n, -p, -U,
// -C, -T, -r, -w and -W take a file only attached (-m/proc/1/ns/mnt,
// --mount=FILE).
var nsenterOpts = opts{short: "tSGN", long: []string{"target", "setuid", "setgid", "net-socket"},
	flags: "aFZechV", flagsLong: []string{"all", "env", "preserve-credentials", "no-fork", "follow-context", "join-cgroup",
		"keep-caps", "user-parent", "help", "version"},
	optShort: "muinpUCTrwW",
	optional: []string{"mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "root", "wd", "wdns"},
	stop:     true, complete: true}

// nsenterPID reads a target PID as nsenter does (strtol in base 10:
// leading white space, a '+' and leading zeros allowed; util-linux 2.41
// also takes PID:INODE). It reports the PID and whether the value is one
// nsenter takes as exactly that PID; a value it would refuse, or that
// older versions truncate to a pid_t, is not known.
func nsenterPID(s string) (int, bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	s = strings.TrimPrefix(s, "+")
	if pid, ino, ok := strings.Cut(s, ":"); ok {
		if !isDigits(ino) {
			return 0, false
		}
		s = pid
	}
	if !isDigits(s) {
		return 0, false
	}
	s = strings.TrimLeft(s, "0")
	if len(s) > 10 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > math.MaxInt32 {
		return 0, false
	}
	return n, true
}

// nsenterOwnFile reports whether a namespace, root or directory file
// given to nsenter is one of a process other than PID 1 (/proc/N/…, or
// the caller's own /proc/self/…): any other file, such as a bind mount
// of a namespace or /proc/1/ns/mnt written some other way, may be PID
// 1's.
func nsenterOwnFile(p string) bool {
	rest, ok := strings.CutPrefix(path.Clean(p), "/proc/")
	if !ok {
		return false
	}
	pid, _, _ := strings.Cut(rest, "/")
	if pid == "self" || pid == "thread-self" {
		return true
	}
	// /proc names a process by its PID in canonical decimal only.
	n, ok := nsenterPID(pid)
	return ok && n != 1 && strconv.Itoa(n) == pid
}

// ruleNsenter: nsenter runs a command in the namespaces of another
// process, as root. Entering the mount namespace of PID 1 (the host's
// init, reachable from a container started with --pid=host), or taking
// its root or working directory, is root on the host; the command is
// judged as a host command then, and elsewhere for another target. A
// target built at run time or that nsenter would read otherwise than
// as a plain PID counts as possibly PID 1.
func ruleNsenter(a *analyzer, c *call) {
	args := c.args
	target, maybeOne, mountNS, all, dir, file := "", false, false, false, false, false
	os, rest := a.scan(nsenterOpts, args)
	for _, op := range os {
		if op.unknown {
			return // scan made the command opaque
		}
		switch op.name {
		case "-t", "--target":
			target = op.val.s
			if n, ok := nsenterPID(op.val.s); op.val.dyn || !ok || n == 1 {
				maybeOne = true // given twice, older versions take the last, newer refuse
			}
		case "-m", "--mount", "-r", "--root", "-w", "--wd", "-W", "--wdns":
			// -W is a path inside the namespaces entered: only the
			// namespaces decide what it reaches.
			wdns := op.name == "-W" || op.name == "--wdns"
			if wdns && op.val.s == "" && !op.val.dyn {
				// util-linux 2.41 takes its directory only attached;
				// an older nsenter may take the next word.
				a.opaque(op.x.sp, "nsenter "+op.name+" without an attached directory takes the next word as its value in some versions of nsenter and not in others; no rule allows it")
				return
			}
			v := op.val
			if !wdns && v.dyn {
				file = true
			} else if !wdns && v.s != "" {
				f := v.s
				if op.name == "-w" || op.name == "--wd" {
					f = strings.TrimPrefix(f, "=") // as nsenter does; -m=F opens "=F"
				}
				if !nsenterOwnFile(f) {
					file = true
				}
			}
			switch {
			case op.name == "-m" || op.name == "--mount":
				mountNS = true
			case !wdns && v.s == "" && !v.dyn:
				dir = true // the target's root or working directory
			}
		case "-a", "--all":
			all = true
		}
	}
	if len(rest) > 0 && rest[0].dyn {
		if at := len(args) - len(rest); at < 1 || args[at-1].dyn || args[at-1].s != "--" {
			a.opaque(rest[0].sp, "nsenter is given a word built at run time where an option may stand")
			return
		}
	}
	a.find(risk.Execute, c.sp, "nsenter runs a command inside the namespaces of another process, which needs root")
	host := maybeOne && (mountNS || all || dir) || file
	if host {
		a.hostRoot(c.sp, "nsenter enters the mount namespace, the root or the working directory of PID 1 (or of a namespace file that may be PID 1's), the host's init: from a container that shares the host's processes this reaches the host's file system as root")
	}
	if len(rest) == 0 {
		a.shellStdin(c, "the shell nsenter starts")
		return
	}
	if (mountNS || all) && !host {
		a.elsewhere(elsewhere{where: "in the namespaces of process " + target, cwd: "/", keepDestroy: true}, func() { a.inner(c, rest, "/", false) })
		return
	}
	a.inner(c, rest, c.cwd, false)
}
