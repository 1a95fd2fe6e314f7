package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkStart measures the start cost of one call: /bin/true run
// unconfined, and under each profile (plan included, as the executor pays
// it), with p50 and p99 per run.
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
		name string
		kind Kind
	}{{"unconfined", ""}, {"read-only", ReadOnly}, {"workspace", Workspace}} {
		b.Run(c.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"true"}, Dir: proj, Env: []string{}}
				var conf *Confined
				if c.kind != "" {
					p, err := pl.Plan(Workspace, false, proj)
					if err != nil {
						b.Fatal(err)
					}
					if conf, err = Confine(p.As(c.kind, false), cmd); err != nil {
						b.Fatal(err)
					}
				}
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				if err := conf.Done(); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
		})
	}
}
