package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/custom-agent/custom-agent/sandbox/enforce"
)

// BenchmarkStart measures the start cost of one call: /bin/true run
// unconfined, and under each profile (plan included, as the executor pays
// it), with p50 and p99 per run. The -ahead runs take a helper started
// ahead (enforce.Pool): before each, untimed, the pool is waited for until
// it is full again, as it is when a call comes after the model's reply
// (the refill takes one cold start's time, about 20 ms here; a turn gives
// it seconds). They measure the call's path only, not the helper the pool
// starts in the background for the next one. "ahead" counts the calls a
// helper started ahead took (all of them, unless one was not ready). A
// call ends, as in the shell tool, on the helper's report of the
// command's status, or on its exit; "reported" counts the calls that
// returned on the report (the others saw the helper's exit, which follows
// its report closely, first). A
// helper that reported is reaped in the background, and before the next
// call, untimed. plan-, confine- and done-p50 are the parent's own parts
// of the call: the plan, ConfineWith (the hand-over) and Done (the checks
// after it).
//
//	go test ./sandbox -run '^$' -bench Start -benchtime 300x
func BenchmarkStart(b *testing.B) {
	if !Probe().Available() {
		b.Skip("the sandbox is unavailable here")
	}
	proj := b.TempDir()
	os.WriteFile(proj+"/README.md", []byte("x"), 0o644)
	home, _ := os.UserHomeDir()
	pl := NewPlanner(Env{Home: home, Path: os.Getenv("PATH")})
	for _, c := range []struct {
		name  string
		kind  Kind
		ahead bool
	}{{"unconfined", "", false}, {"read-only", ReadOnly, false}, {"workspace", Workspace, false}, {"read-only-ahead", ReadOnly, true}, {"workspace-ahead", Workspace, true}} {
		b.Run(c.name, func(b *testing.B) {
			var pool *Pool
			if c.ahead {
				pool = enforce.NewPool(1)
				defer pool.Close()
			}
			times := make([]time.Duration, 0, b.N)
			// The parent's own parts of a confined call: the plan, the
			// hand-over (ConfineWith) and the checks after it (Done).
			var plan, hand, done []time.Duration
			ahead, reported := 0, 0
			var reaping sync.WaitGroup
			for b.Loop() {
				if err := pool.WaitFull(context.Background()); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"true"}, Dir: proj, Env: []string{}, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
				var conf *Confined
				if c.kind != "" {
					t0 := time.Now()
					p, err := pl.Plan(Workspace, false, proj)
					plan = append(plan, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if conf, err = ConfineWith(pool, p.As(c.kind, false), cmd); err != nil {
						b.Fatal(err)
					}
					hand = append(hand, time.Since(t1))
				}
				if conf.Started() {
					ahead++
				} else if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				// As the shell tool waits: for the helper's report of
				// the command's status, or its exit; a helper that
				// reported is reaped in the background.
				exited := make(chan struct{})
				go func() {
					var info unix.Siginfo
					for unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
					}
					close(exited)
				}()
				select {
				case <-exited:
				case <-conf.Reported():
				}
				select {
				case <-conf.Reported():
					reported++
					if conf.ExitCode() != 0 {
						b.Fatalf("reported %d", conf.ExitCode())
					}
					reaping.Go(func() {
						<-exited
						_ = cmd.Wait()
					})
				default:
					if err := cmd.Wait(); err != nil {
						b.Fatal(err)
					}
				}
				t2 := time.Now()
				if err := conf.Done(); err != nil {
					b.Fatal(err)
				}
				done = append(done, time.Since(t2))
				times = append(times, time.Since(start))
				// The helper is reaped before the next call, untimed,
				// as it is long before a call after the model's reply.
				reaping.Wait()
			}
			for name, ts := range map[string][]time.Duration{"plan-": plan, "confine-": hand, "done-": done} {
				if len(ts) > 0 {
					slices.Sort(ts)
					b.ReportMetric(float64(ts[len(ts)/2].Microseconds()), name+"p50-µs")
				}
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(ahead), "ahead")
			b.ReportMetric(float64(reported), "reported")
		})
	}
}

// BenchmarkPlan measures a workspace plan of a tree of 10,000 files in 500
// directories, with a git directory, .env files and editor configuration:
// the walk every call that starts processes pays.
//
//	go test ./sandbox -run '^$' -bench Plan -benchtime 50x
func BenchmarkPlan(b *testing.B) {
	proj := b.TempDir()
	for d := 0; d < 500; d++ {
		dir := filepath.Join(proj, "pkg", strconv.Itoa(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 20; f++ {
			os.WriteFile(filepath.Join(dir, strconv.Itoa(f)+".go"), nil, 0o644)
		}
		if d%50 == 0 {
			os.WriteFile(filepath.Join(dir, ".env"), []byte("K=V"), 0o600)
		}
	}
	for _, d := range []string{".git/hooks", ".git/objects", ".git/refs", ".vscode"} {
		os.MkdirAll(filepath.Join(proj, d), 0o755)
	}
	os.WriteFile(filepath.Join(proj, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(proj, ".git", "config"), []byte("[core]\n"), 0o644)
	home, _ := os.UserHomeDir()
	pl := NewPlanner(Env{Home: home, Path: os.Getenv("PATH")})
	var p Profile
	for b.Loop() {
		var err error
		if p, err = pl.Plan(Workspace, false, proj); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(p.Hidden)+len(p.Protected)+len(p.Pinned)), "mounts")
}
