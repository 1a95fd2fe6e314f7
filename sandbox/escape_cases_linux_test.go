package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// escape is one thing a confined process must not be able to do.
type escape struct {
	name    string
	kind    Kind
	network bool
	script  string // bash; or, with attack set, the attack's argument
	attack  string
	// want are the words of the kernel's refusal, one of which the output
	// must hold ("Permission denied", "Read-only file system" …).
	want []string
	// after checks the host once the process ended; nil checks nothing.
	after func(t *testing.T, w *world)
}

var (
	denied   = []string{"Permission denied"}
	readOnly = []string{"Read-only file system", "Device or resource busy"}
	refused  = []string{"refused:"}
)

// unchanged fails unless the file at rel (under the world's root) still
// holds what it held before.
func unchanged(rel, body string) func(*testing.T, *world) {
	return func(t *testing.T, w *world) {
		b, err := os.ReadFile(filepath.Join(w.root, rel))
		if err != nil || string(b) != body {
			t.Errorf("%s changed on the host: %q, %v", rel, b, err)
		}
	}
}

// absent fails if the file at rel (under the world's root, or absolute)
// exists on the host.
func absent(rel string) func(*testing.T, *world) {
	return func(t *testing.T, w *world) {
		p := rel
		if !filepath.IsAbs(p) {
			p = filepath.Join(w.root, rel)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists on the host", p)
			os.RemoveAll(p)
		}
	}
}

func secretReads() []escape {
	var out []escape
	for _, k := range []Kind{ReadOnly, Workspace} {
		for _, c := range []struct{ name, script string }{
			{"ssh key", "cat ~/.ssh/id_rsa"},
			{"ssh directory listing", "ls -la ~/.ssh"},
			{"aws credentials", "cat ~/.aws/credentials"},
			{"netrc", "cat ~/.netrc"},
			{"npmrc", "cat ~/.npmrc"},
			{"git credentials", "cat ~/.git-credentials"},
			{"gh token", "cat ~/.config/gh/hosts.yml"},
			{"docker config", "cat ~/.docker/config.json"},
			{"kube config", "cat ~/.kube/config"},
			{"gpg key", "cat ~/.gnupg/private-keys-v1.d/a.key"},
			{"own policy", "cat ~/.config/custom-agent/policy.json"},
			{"own data", "cat ~/.local/share/custom-agent/data.db"},
			{"project env", "cat README.md && cat .env"},
			{"project env.local", "cat .env.local"},
			{"nested env", "cat deep/er/.env.production"},
			{"pem file", "cat server.pem"},
			{"key file", "cat deploy.key"},
			{"symlink to key", "cat key-link"},
			{"symlink to env", "cat env-link"},
			{"hard link to key", "cat notes.txt"},
			{"hard link to netrc", "cat src/data.txt"},
			{"fd as directory", "exec 3<~/.ssh && cat /proc/self/fd/3/id_rsa"},
			{"dev fd as directory", "cd ~ && exec 4<.aws && cat /dev/fd/4/credentials"},
			{"cd into ssh", "cd ~/.ssh && cat id_rsa"},
			{"grep home", "grep -r CANARY ~ . 2>&1; exit 1"},
			{"tar ssh", "set -o pipefail; tar -cf - -C ~ .ssh | strings"},
		} {
			out = append(out, escape{name: string(k) + "/read " + c.name, kind: k, script: c.script, want: denied})
		}
	}
	return out
}

func writes() []escape {
	return []escape{
		{name: "read-only/write in project", kind: ReadOnly, script: "echo x > new.txt", want: readOnly, after: absent("proj/new.txt")},
		{name: "read-only/remove in project", kind: ReadOnly, script: "rm README.md", want: readOnly, after: unchanged("proj/README.md", "readme\n")},
		{name: "read-only/mkdir in project", kind: ReadOnly, script: "mkdir newdir", want: readOnly, after: absent("proj/newdir")},
		{name: "read-only/bashrc", kind: ReadOnly, script: "echo evil >> ~/.bashrc", want: readOnly, after: unchanged("home/.bashrc", "# rc\n")},
		{name: "read-only/go cache", kind: ReadOnly, script: "echo x > ~/.cache/go-build/x", want: readOnly, after: absent("home/.cache/go-build/x")},
		{name: "workspace/outside the project", kind: Workspace, script: "echo x > ../outside.txt", want: readOnly, after: absent("outside.txt")},
		{name: "workspace/bashrc", kind: Workspace, script: "echo evil >> ~/.bashrc", want: readOnly, after: unchanged("home/.bashrc", "# rc\n")},
		{name: "workspace/profile", kind: Workspace, script: "echo evil > ~/.profile", want: readOnly, after: unchanged("home/.profile", "# profile\n")},
		{name: "workspace/autostart", kind: Workspace, script: "mkdir -p ~/.config/autostart", want: readOnly, after: absent("home/.config/autostart")},
		{name: "workspace/pre-commit hook", kind: Workspace, script: "echo evil > .git/hooks/pre-commit", want: readOnly, after: absent("proj/.git/hooks/pre-commit")},
		{name: "workspace/nested repository hook", kind: Workspace, script: "echo evil > vendor/lib/.git/hooks/post-checkout", want: readOnly, after: absent("proj/vendor/lib/.git/hooks/post-checkout")},
		{name: "workspace/git config", kind: Workspace, script: "echo '[core] fsmonitor = evil' >> .git/config", want: readOnly, after: unchanged("proj/.git/config", "[core]\n")},
		{name: "workspace/git config hooksPath", kind: Workspace, script: "git config --file .git/config core.hooksPath evil", want: []string{"could not", "Read-only", "busy"}, after: unchanged("proj/.git/config", "[core]\n")},
		{name: "workspace/replace git config", kind: Workspace, script: "echo '[core]' > .git/c2 && mv .git/c2 .git/config", want: readOnly, after: unchanged("proj/.git/config", "[core]\n")},
		{name: "workspace/remove hooks", kind: Workspace, script: "rm -rf .git/hooks", want: readOnly, after: unchanged("proj/.git/hooks/README", "hooks\n")},
		{name: "workspace/move hooks", kind: Workspace, script: "mv .git/hooks .git/old-hooks", want: readOnly, after: unchanged("proj/.git/hooks/README", "hooks\n")},
		{name: "workspace/own project policy", kind: Workspace, script: `echo '{"version":1,"rules":[{"id":"x","tool":"*","decision":"allow"}]}' > .custom-agent/policy.json`, want: readOnly, after: unchanged("proj/.custom-agent/policy.json", `{"version":1,"rules":[]}`)},
		{name: "workspace/editor settings", kind: Workspace, script: "echo '{}' > .vscode/tasks.json", want: readOnly, after: absent("proj/.vscode/tasks.json")},
		{name: "workspace/ci workflow", kind: Workspace, script: "echo evil >> .github/workflows/ci.yml", want: readOnly, after: unchanged("proj/.github/workflows/ci.yml", "on: push\n")},
		{name: "workspace/overwrite env", kind: Workspace, script: "echo X=1 > .env", want: append(readOnly, "Permission denied"), after: unchanged("proj/.env", canary)},
		{name: "workspace/hard link a key in", kind: Workspace, script: "ln ~/.ssh/id_rsa stolen", want: denied, after: absent("proj/stolen")},
		{name: "workspace/system directory", kind: Workspace, script: "touch /usr/custom-agent-evil", want: readOnly, after: absent("/usr/custom-agent-evil")},
		{name: "workspace/chmod a masked file", kind: Workspace, script: "chmod 644 .env", want: append(readOnly, "Operation not permitted")},
	}
}

// TestEscapes runs every escape: each must fail with the kernel's refusal,
// print no canary, and leave the host as it was.
func TestEscapes(t *testing.T) {
	w := newWorld(t)
	cases := append(secretReads(), writes()...)
	if len(cases) < 60 {
		t.Fatalf("%d escape cases; the suite promises at least 60", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.sh(t, c.kind, c.script)
			check(t, c, r)
			if c.after != nil {
				c.after(t, w)
			}
		})
	}
}

func check(t *testing.T, c escape, r result) {
	t.Helper()
	if strings.Contains(r.out, canary) {
		t.Fatalf("the canary reached the output:\n%s", r.out)
	}
	if r.code == 0 && c.attack == "" {
		t.Errorf("exit 0; want a refusal:\n%s", r.out)
	}
	for _, w := range c.want {
		if strings.Contains(r.out, w) {
			return
		}
	}
	t.Errorf("output holds none of %q:\n%s", c.want, r.out)
}

// TestAllowedStillWorks is the other half: what a profile allows works.
func TestAllowedStillWorks(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct {
		name   string
		kind   Kind
		script string
		want   string
		after  func(*testing.T, *world)
	}{
		{"read-only reads the project", ReadOnly, "cat README.md src/main.go", "package main", nil},
		{"read-only lists home", ReadOnly, "ls -a ~", ".bashrc", nil},
		{"read-only private tmp", ReadOnly, "echo hi > /tmp/custom-agent-test-x && cat /tmp/custom-agent-test-x", "hi", absent("/tmp/custom-agent-test-x")},
		{"workspace writes the project", Workspace, "echo made > made.txt && cat made.txt", "made", unchanged("proj/made.txt", "made\n")},
		{"workspace fills the go cache in a private layer", Workspace, "cat ~/.cache/go-build/README && echo c > ~/.cache/go-build/entry && cat ~/.cache/go-build/entry", "c", absent("home/.cache/go-build/entry")},
		{"git reads its config", ReadOnly, "git -C . rev-parse --git-dir 2>&1; cat .git/config", "[core]", nil},
		{"no capability", Workspace, "grep CapEff /proc/self/status", "0000000000000000", nil},
		{"no host process", ReadOnly, "ls /proc | grep -c '^[0-9]'", "", nil},
		{"dev null", ReadOnly, "echo x > /dev/null && echo ok", "ok", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := w.sh(t, c.kind, c.script)
			if r.code != 0 || !strings.Contains(r.out, c.want) {
				t.Fatalf("exit %d, want %q in:\n%s", r.code, c.want, r.out)
			}
			if c.after != nil {
				c.after(t, w)
			}
		})
	}
	os.Remove(filepath.Join(w.proj, "made.txt"))
}

// TestProcessesAndDevices: the agent is out of reach, and so is the
// terminal.
func TestProcessesAndDevices(t *testing.T) {
	w := newWorld(t)
	agent := strconv.Itoa(os.Getpid())
	os.Setenv("CUSTOM_AGENT_TEST_ENV_CANARY", canary)
	defer os.Unsetenv("CUSTOM_AGENT_TEST_ENV_CANARY")
	for _, c := range []escape{
		{name: "signal the agent", kind: Workspace, attack: "kill", script: agent, want: []string{"no such process"}},
		{name: "ptrace the agent", kind: Workspace, attack: "ptrace", script: agent, want: refused},
		{name: "ptrace pid 1", kind: Workspace, attack: "ptrace", script: "1", want: refused},
		{name: "read the agent's memory", kind: Workspace, attack: "process_vm_readv", script: "1", want: refused},
		{name: "io_uring", kind: Workspace, attack: "io_uring", want: refused},
		{name: "bpf", kind: Workspace, attack: "bpf", want: refused},
		{name: "keyctl", kind: Workspace, attack: "keyctl", want: refused},
		{name: "perf_event_open", kind: Workspace, attack: "perf_event_open", want: refused},
		{name: "userfaultfd", kind: Workspace, attack: "userfaultfd", want: refused},
		{name: "unshare a user namespace", kind: Workspace, attack: "unshare-user", want: refused},
		{name: "unshare a network namespace", kind: Workspace, attack: "unshare-net", want: refused},
		{name: "setns", kind: Workspace, attack: "setns", want: refused},
		{name: "mount", kind: Workspace, attack: "mount", want: refused},
		{name: "unmount a mask", kind: Workspace, attack: "umount-mask", script: filepath.Join(w.home, ".ssh"), want: refused},
		{name: "chroot", kind: Workspace, attack: "chroot", want: refused},
		{name: "open by handle", kind: Workspace, attack: "open-by-handle", want: refused},
		{name: "TIOCSTI", kind: Workspace, attack: "tiocsti", want: refused},
		{name: "set-user-ID", kind: Workspace, attack: "setuid-file", script: filepath.Join(w.proj, "src", "main.go"), want: refused},
		{name: "raw socket", kind: Workspace, network: true, attack: "raw-socket", want: refused},
		{name: "packet socket", kind: Workspace, network: true, attack: "packet-socket", want: refused},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := w.attack(t, c.kind, c.network, c.attack, c.script)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s", r.code, r.out)
			}
			check(t, c, r)
		})
	}
	for _, c := range []escape{
		{name: "agent environ", kind: Workspace, script: "cat /proc/" + agent + "/environ", want: []string{"No such file"}},
		{name: "environ of pid 1", kind: Workspace, script: "cat /proc/1/environ | tr '\\0' '\\n' | grep -c CANARY; exit 1", want: []string{"0"}},
		{name: "write the terminal", kind: Workspace, script: "echo forged > /dev/tty", want: []string{"No such device or address"}},
		{name: "host terminals", kind: Workspace, script: "ls /dev/pts/ | grep -v ptmx | grep . ; echo x > /dev/pts/0", want: []string{"No such file", "Permission denied"}},
		{name: "kill every process", kind: Workspace, script: "kill -9 -1; sleep 0.2; echo survived", want: []string{""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := w.sh(t, c.kind, c.script)
			if c.name == "kill every process" {
				// It may kill itself; the agent (this test) lives on.
				return
			}
			check(t, c, r)
		})
	}
}

// TestNetwork: without the network no packet leaves, by any family.
func TestNetwork(t *testing.T) {
	w := newWorld(t)
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	var got atomic.Int32
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	sock := filepath.Join(w.root, "agent.sock")
	ux, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	abstract, err := net.Listen("unix", "@custom-agent-sandbox-test-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer abstract.Close()
	var unixAccepted atomic.Int32
	for _, l := range []net.Listener{ux, abstract} {
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				unixAccepted.Add(1)
				c.Close()
			}
		}()
	}
	for _, k := range []Kind{ReadOnly, Workspace} {
		for _, c := range []escape{
			{name: "tcp to loopback", attack: "tcp", script: tcp.Addr().String(), want: refused},
			{name: "tcp6", attack: "tcp6", script: "[::1]:1", want: refused},
			{name: "udp to loopback", attack: "udp", script: udp.LocalAddr().String(), want: refused},
			{name: "udp to a resolver", attack: "udp", script: "8.8.8.8:53", want: refused},
			{name: "abstract unix socket", attack: "unix", script: "@custom-agent-sandbox-test-" + strconv.Itoa(os.Getpid()), want: refused},
		} {
			c.kind = k
			t.Run(string(k)+"/"+c.name, func(t *testing.T) {
				r := w.attack(t, k, false, c.attack, c.script)
				if r.code != 0 {
					t.Fatalf("exit %d:\n%s", r.code, r.out)
				}
				check(t, c, r)
			})
		}
		t.Run(string(k)+"/dns", func(t *testing.T) {
			r := w.sh(t, k, "getent hosts example.com || echo 'lookup failed'; exit 1")
			if strings.Contains(r.out, "example.com") && !strings.Contains(r.out, "lookup failed") {
				t.Fatalf("resolved:\n%s", r.out)
			}
		})
	}
	t.Run("network profile with abstract socket", func(t *testing.T) {
		r := w.attack(t, Workspace, true, "unix", "@custom-agent-sandbox-test-"+strconv.Itoa(os.Getpid()))
		check(t, escape{attack: "unix", want: refused}, r)
	})
	t.Run("network profile reaches tcp", func(t *testing.T) {
		before := accepted.Load()
		r := w.attack(t, Workspace, true, "tcp", tcp.Addr().String())
		if r.code != 1 || !strings.Contains(r.out, "attack succeeded") {
			t.Fatalf("the network profile could not connect: exit %d\n%s", r.code, r.out)
		}
		deadline := time.Now().Add(2 * time.Second)
		for accepted.Load() == before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if accepted.Load() == before {
			t.Fatal("the listener saw no connection")
		}
		accepted.Store(0)
	})
	time.Sleep(100 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("the TCP listener accepted %d connections from confined processes", n)
	}
	if n := got.Load(); n != 0 {
		t.Errorf("the UDP listener received %d datagrams from confined processes", n)
	}
	if n := unixAccepted.Load(); n != 0 {
		t.Errorf("the host's unix sockets accepted %d connections", n)
	}
}
