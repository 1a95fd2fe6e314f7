package enforce

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkStartParts splits the start cost of a confined /bin/true into
// its parts, each timed in every iteration in turn (so that a load that
// changes during the run weighs on all alike), and reports each part's p50
// and p99:
//
//   - true: /bin/true unconfined, the reference;
//
//   - ns: /bin/true in the helper's namespaces, network namespace included;
//
//   - ns-net: the same without the network namespace (the network profile);
//
//   - reexec: this binary re-executed as the helper, without namespaces,
//     up to its first step (reading the spec, here an empty one): the Go
//     runtime and the package initialisers;
//
//   - probe: the helper in its namespaces, setting the whole read-only
//     sandbox up, without starting a command;
//
//   - read-only: the whole call, /bin/true under the read-only profile,
//     up to the helper's exit;
//
//   - read-only-report: the same up to the helper's report of the
//     command's status (the helper's exit, and its reaping, come after,
//     untimed), as the shell tool waits.
//
//     go test ./sandbox/enforce -run '^$' -bench StartParts -benchtime 100x
func BenchmarkStartParts(b *testing.B) {
	if !Probe().Available() {
		b.Skip("the sandbox is unavailable here: " + Probe().Unavailable)
	}
	dir := b.TempDir()
	null, err := os.Open(os.DevNull)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	run := func(cmd *exec.Cmd) error { return cmd.Run() }
	confined := func(probe bool) func() error {
		return func() error {
			cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"true"}, Dir: dir, Env: []string{}}
			c, err := confine(nil, Profile{Kind: ReadOnly, Cwd: dir}, cmd, probe)
			if err != nil {
				return err
			}
			runErr := cmd.Run()
			if err := c.Done(); err != nil {
				return err
			}
			return runErr
		}
	}
	reported := func() (time.Duration, error) {
		start := time.Now()
		cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"true"}, Dir: dir, Env: []string{}}
		c, err := confine(nil, Profile{Kind: ReadOnly, Cwd: dir}, cmd, false)
		if err != nil {
			return 0, err
		}
		if err := cmd.Start(); err != nil {
			_ = c.Done()
			return 0, err
		}
		exited := make(chan struct{})
		go func() {
			var info unix.Siginfo
			for unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
			}
			close(exited)
		}()
		select {
		case <-c.Reported():
		case <-exited:
		}
		if err := c.Done(); err != nil {
			return 0, err
		}
		took := time.Since(start)
		select {
		case <-c.Reported():
		default:
			return 0, errors.New("the helper exited without a report")
		}
		<-exited
		return took, cmd.Wait()
	}
	parts := []struct {
		name string
		do   func() error
		// timed, when set, is the part, timing itself.
		timed func() (time.Duration, error)
	}{
		{"true", func() error {
			return run(&exec.Cmd{Path: "/bin/true", Args: []string{"true"}, Dir: dir, Env: []string{}})
		}, nil},
		{"ns", func() error {
			cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"true"}, Dir: dir, Env: []string{}, SysProcAttr: &syscall.SysProcAttr{}}
			inNamespaces(cmd.SysProcAttr, false)
			return run(cmd)
		}, nil},
		{"ns-net", func() error {
			cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"true"}, Dir: dir, Env: []string{}, SysProcAttr: &syscall.SysProcAttr{}}
			inNamespaces(cmd.SysProcAttr, true)
			return run(cmd)
		}, nil},
		{"reexec", func() error {
			cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{helperName}, Env: []string{}, ExtraFiles: []*os.File{null, null}}
			err := cmd.Run()
			// The helper fails on the empty spec: that is the point.
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == exitSetup {
				return nil
			}
			return errors.New("the helper did not stop at its spec: " + errString(err))
		}, nil},
		{"probe", confined(true), nil},
		{"read-only", confined(false), nil},
		{"read-only-report", nil, reported},
	}
	times := make([][]time.Duration, len(parts))
	for b.Loop() {
		for i, p := range parts {
			if p.timed != nil {
				took, err := p.timed()
				if err != nil {
					b.Fatalf("%s: %v", p.name, err)
				}
				times[i] = append(times[i], took)
				continue
			}
			start := time.Now()
			if err := p.do(); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	for i, p := range parts {
		t := times[i]
		slices.Sort(t)
		b.ReportMetric(float64(t[len(t)/2].Microseconds()), p.name+"-p50-µs")
		b.ReportMetric(float64(t[len(t)*99/100].Microseconds()), p.name+"-p99-µs")
	}
}

func errString(err error) string {
	if err == nil {
		return "it exited 0"
	}
	return err.Error()
}
