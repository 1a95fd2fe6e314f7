package enforce

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Regression tests for a helper started ahead whose copy of the mounts, or
// of what it inherited, is older than the call (the review of the pool,
// finding 1 and 2): a call through the pool runs as one started cold.

// ownMountNSEnv names the propagation of the mount namespace a test binary
// was re-executed in by inOwnMountNamespace.
const ownMountNSEnv = "SANDBOX_TEST_OWN_MNTNS"

// inOwnMountNamespace runs the calling test again, alone, in this test
// binary re-executed under `unshare -m --propagation propagation` (with a
// user namespace of its own when not root), where it can mount and unmount
// as a person's host does, and reports true: the caller returns, the child
// did the work. In that child it reports false. Where unshare is missing
// or refused, the test skips, and fails under CI=true.
func inOwnMountNamespace(t *testing.T, propagation string) bool {
	t.Helper()
	if got := os.Getenv(ownMountNSEnv); got != "" {
		if got != propagation {
			t.Fatalf("in a mount namespace with %s propagation, want %s", got, propagation)
		}
		return false
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		skipOrFail(t, "unshare (util-linux) is not installed")
		return true
	}
	args := []string{"-m", "--propagation", propagation}
	if os.Geteuid() != 0 {
		args = append([]string{"-U", "-r"}, args...)
	}
	var run []string
	for _, part := range strings.Split(t.Name(), "/") {
		run = append(run, "^"+part+"$")
	}
	args = append(args, os.Args[0], "-test.run", strings.Join(run, "/"), "-test.v", "-test.count=1", "-test.timeout=5m")
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), ownMountNSEnv+"="+propagation)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if !strings.Contains(out.String(), "=== RUN") {
		skipOrFail(t, "unshare -m refused here ("+strings.Join(args[:len(args)-6], " ")+"): "+strings.TrimSpace(out.String()))
		return true
	}
	t.Logf("in its own mount namespace (%s propagation):\n%s", propagation, out.String())
	switch {
	case err != nil:
		t.Errorf("the test failed in its own mount namespace: %v", err)
	case !strings.Contains(out.String(), "--- PASS: "+t.Name()+" "):
		t.Errorf("the test did not pass in its own mount namespace")
	}
	return true
}

// skipOrFail skips the test, or fails it under CI=true.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// mountTmpfs mounts a tmpfs on dir until the test ends.
func mountTmpfs(t *testing.T, dir string) {
	t.Helper()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "mode=700"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
}

// A file system unmounted on the host after the pool filled (a vault
// locked, a disk ejected) is gone for the call: the waiting helper's copy
// still has it, so the call starts a helper of its own. The next helper
// started ahead has the host's mounts again and takes the next call.
func TestAheadStaleUnmounted(t *testing.T) {
	needSandbox(t)
	if inOwnMountNamespace(t, "private") {
		return
	}
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	if err := os.Mkdir(vault, 0o700); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, vault)
	if err := os.WriteFile(filepath.Join(vault, "secret"), []byte("TOPSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pl := fullPool(t)
	if err := unix.Unmount(vault, 0); err != nil {
		t.Fatal(err)
	}
	out, _, started, err := runAhead(t, pl, dir, "cat vault/secret 2>&1; echo x > vault/planted; ls vault; echo done")
	t.Logf("started ahead %v, %v: %q", started, err, out)
	if strings.Contains(out, "TOPSECRET") || !strings.Contains(out, "done") {
		t.Errorf("the call read a file system the host unmounted: %q", out)
	}
	if started {
		t.Error("the call was handed to a helper whose mounts are older than the unmount")
	}
	if _, err := os.Stat(filepath.Join(vault, "planted")); err != nil {
		t.Errorf("the write did not reach the host's directory: %v", err)
	}
	refilled(t, pl, dir)
}

// refilled waits for the pool to be full and runs a call, which a helper
// started ahead, with the host's mounts, takes.
func refilled(t *testing.T, pl *Pool, dir string) {
	t.Helper()
	waitFull(t, pl)
	out, _, started, err := runAhead(t, pl, dir, "echo again")
	if !started || err != nil || out != "again\n" {
		t.Errorf("the next call, with the pool full again: started ahead %v, %v, %q", started, err, out)
	}
}

// A file system mounted on the host over a directory of the workspace
// after the pool filled: the call sees it, not what it covers (which the
// plan never read).
func TestAheadStaleShadowed(t *testing.T) {
	needSandbox(t)
	if inOwnMountNamespace(t, "private") {
		return
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "under"), []byte("SHADOWED\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pl := fullPool(t)
	mountTmpfs(t, data)
	out, _, started, err := runAhead(t, pl, dir, "cat data/under 2>&1; echo done")
	t.Logf("started ahead %v, %v: %q", started, err, out)
	if strings.Contains(out, "SHADOWED") || !strings.Contains(out, "done") {
		t.Errorf("the call read what the host's mount covers: %q", out)
	}
	if started {
		t.Error("the call was handed to a helper whose mounts are older than the mount")
	}
	refilled(t, pl, dir)
}

// The host makes the workspace read-only (a read-only bind remount) after
// the pool filled: the call cannot write there, through the pool as cold
// (where the copied mount's read-only flag is locked). A per-mount flag
// does not propagate, so this holds with shared propagation too.
func TestAheadStaleReadOnly(t *testing.T) {
	for _, propagation := range []string{"private", "shared"} {
		t.Run(propagation, func(t *testing.T) {
			needSandbox(t)
			if inOwnMountNamespace(t, propagation) {
				return
			}
			dir := t.TempDir()
			if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
			pl := fullPool(t)
			if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "host"), nil, 0o644); err == nil {
				t.Fatal("the host could write: not read-only")
			}
			out, code, started, err := runAhead(t, pl, dir, "echo x > planted && echo wrote")
			t.Logf("started ahead %v, exit %d, %v: %q", started, code, err, out)
			if started {
				t.Error("the call was handed to a helper whose mounts are older than the remount")
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				t.Errorf("written into the host's read-only directory: %s", e.Name())
			}
		})
	}
}

// The mount table a waiting helper has equals this process's while the
// host's mounts do not change (so the pool is used), and differs after a
// mount (so it is not).
func TestAheadSameMounts(t *testing.T) {
	needSandbox(t)
	pl := fullPool(t)
	pl.mu.Lock()
	hs := []*ahead{pl.ready[false][0], pl.ready[true][0]}
	pl.mu.Unlock()
	for _, h := range hs {
		if !h.sameMounts(pl.hostMounts()) {
			t.Errorf("helper %d: its mounts differ with no change", h.cmd.Process.Pid)
		}
	}
	t.Run("mounted", func(t *testing.T) {
		if inOwnMountNamespace(t, "private") {
			return
		}
		// Again and again: the pool's table of this process's mounts is
		// read again only when a poll reports a change, which nothing
		// else may take first (Go's network poller did, at times).
		dir := t.TempDir()
		for i := range 20 {
			if err := unix.Mount("tmpfs", dir, "tmpfs", 0, ""); err != nil {
				t.Fatal(err)
			}
			for _, h := range hs {
				if h.sameMounts(pl.hostMounts()) {
					t.Errorf("round %d: helper %d: its mounts are the same after a mount", i, h.cmd.Process.Pid)
				}
			}
			if err := unix.Unmount(dir, 0); err != nil {
				t.Fatal(err)
			}
			for _, h := range hs {
				if !h.sameMounts(pl.hostMounts()) {
					t.Errorf("round %d: helper %d: its mounts differ after the unmount", i, h.cmd.Process.Pid)
				}
			}
		}
	})
}

// mountTable reads mountinfo as proc(5) gives it, and refuses what it
// does not.
func TestMountTable(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"two", "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n" +
			"22 1 0:21 / /a\\040b ro shared:2 - tmpfs tmpfs rw,mode=755\n",
			[]string{"0:21 / /a\\040b ro tmpfs tmpfs rw,mode=755", "98:0 /mnt1 /mnt/parent rw,noatime ext3 /dev/root rw,errors=continue"}},
		{"no separator", "36 35 98:0 /mnt1 /mnt/parent rw ext3 /dev/root rw\n", nil},
		{"short", "36 35 98:0 /mnt1 - ext3 /dev/root rw\n", nil},
		{"empty", "", nil},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := mountTable(path)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s: %q, want an error", tc.name, got)
			}
			continue
		}
		if err != nil || strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: %q %v, want %q", tc.name, got, err, tc.want)
		}
	}
}

// waitFull waits (a minute at most) until the pool is full.
func waitFull(t *testing.T, pl *Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := pl.WaitFull(ctx); err != nil {
		t.Fatal(err)
	}
}

// What a command inherits besides its stdio, directory and environment
// (signal masks, capabilities, umask, limits, cgroup, ...) is the same
// through the pool as cold.
func TestAheadInheritsAsCold(t *testing.T) {
	needSandbox(t)
	const status = `grep -E '^(SigBlk|SigIgn|NoNewPrivs|Seccomp|Seccomp_filters|CapInh|CapPrm|CapEff|CapBnd|CapAmb|Umask|Groups|Uid|Gid)' /proc/self/status; cat /proc/self/limits; env | sort; pwd; cat /proc/self/cgroup; cat /proc/self/oom_score_adj`
	pl := fullPool(t)
	dir := t.TempDir()
	warm, _, started, err := runAhead(t, pl, dir, status)
	if err != nil || !started {
		t.Fatalf("through the pool: started ahead %v, %v", started, err)
	}
	cold, _, started, err := runAhead(t, nil, dir, status)
	if err != nil || started {
		t.Fatalf("cold: started ahead %v, %v", started, err)
	}
	if warm != cold {
		t.Errorf("through the pool and cold differ:\n--- through the pool\n%s\n--- cold\n%s", warm, cold)
	}
}

// The umask and limits custom-agent sets after the pool filled reach a
// command run through the pool, as one run cold.
func TestAheadUmaskAndLimitsOfTheCall(t *testing.T) {
	needSandbox(t)
	pl := fullPool(t)
	old := unix.Umask(0o027)
	defer unix.Umask(old)
	// A file size limit of 1 GiB (or the hard limit, if lower).
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	lim := unix.Rlimit{Cur: min(1<<30, was.Max), Max: was.Max}
	if lim.Cur == was.Cur {
		lim.Cur--
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_FSIZE, &was)
	dir := t.TempDir()
	const script = `umask; awk '/^Max file size/ {print $4}' /proc/self/limits`
	warm, _, started, err := runAhead(t, pl, dir, script)
	if err != nil || !started {
		t.Fatalf("through the pool: started ahead %v, %v", started, err)
	}
	cold, _, _, err := runAhead(t, nil, dir, script)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("0027\n%d\n", lim.Cur)
	if warm != cold || warm != want {
		t.Errorf("through the pool %q, cold %q: want %q (umask, file size limit)", warm, cold, want)
	}
}

// BenchmarkHandOverCheck times what a call through the pool adds before
// the hand-over: both mount tables read and compared, the umask and the
// limits read.
func BenchmarkHandOverCheck(b *testing.B) {
	if !Probe().Available() {
		b.Skipf("the sandbox is unavailable here: %s", Probe().Unavailable)
	}
	pl := NewPool(1)
	defer pl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := pl.WaitFull(ctx); err != nil {
		b.Fatal(err)
	}
	h := pl.take(false)
	defer h.kill()
	mounts, err := mountTable("/proc/self/mountinfo")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		lims, err := limits()
		if _, uerr := umask(); err != nil || uerr != nil || !h.sameMounts(pl.hostMounts()) || !limitsOK(h.limits, lims) {
			b.Fatal("the helper cannot take a call", err, uerr)
		}
	}
	b.ReportMetric(float64(len(mounts)), "mounts")
}

// With shared propagation a mount made on the host after the pool filled
// reaches the waiting helpers' copies too: their tables equal the host's,
// a helper started ahead takes the call, and the command sees the new
// file system.
func TestAheadSharedMountReachesHelper(t *testing.T) {
	needSandbox(t)
	if inOwnMountNamespace(t, "shared") {
		return
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	pl := fullPool(t)
	mountTmpfs(t, data)
	if err := os.WriteFile(filepath.Join(data, "new"), []byte("MOUNTED\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, started, err := runAhead(t, pl, dir, "cat data/new 2>&1")
	if !started || err != nil || out != "MOUNTED\n" {
		t.Errorf("started ahead %v, %v: %q; want the helper started ahead to show the new mount", started, err, out)
	}
}
