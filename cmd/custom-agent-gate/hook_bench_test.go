package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// BenchmarkHookCold starts, in each iteration and in turn, a Go
// hello-world, custom-agent-gate hook claude-code with its durable record
// (the journal file synced before the answer), and the same hook with
// --no-record, each as a new process fed one PreToolUse event on stdin, as
// Claude Code runs a hook, and custom-agent-gate version (the gate's start
// alone). It reports each one's median (p50) and 90th percentile wall
// time, and the hook's medians over hello-world's (the target: the
// recorded hook under 2.5 times hello-world):
//
//	go test ./cmd/custom-agent-gate -run '^$' -bench HookCold -benchtime 200x
func BenchmarkHookCold(b *testing.B) {
	testenv.NeedProgram(b, "go")
	dir := b.TempDir()
	gate := filepath.Join(dir, "custom-agent-gate")
	// Both binaries are built the way README.md installs custom-agent:
	// statically (CGO_ENABLED=0: a dynamically linked binary spends about
	// a millisecond in the loader before Go starts), stripped, trimmed.
	goBuild := func(args ...string) *exec.Cmd {
		c := exec.Command("go", append([]string{"build", "-trimpath", "-ldflags=-s -w"}, args...)...)
		c.Env = append(os.Environ(), "CGO_ENABLED=0")
		return c
	}
	if out, err := goBuild("-o", gate, ".").CombinedOutput(); err != nil {
		b.Fatalf("building the gate: %v\n%s", err, out)
	}
	hello := filepath.Join(dir, "hello")
	src := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(`{}`) }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	build := goBuild("-o", hello, src)
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building hello-world: %v\n%s", err, out)
	}
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	env := []string{"HOME=" + filepath.Join(dir, "home"), "PATH=" + os.Getenv("PATH"),
		"CUSTOM_AGENT_DATA_DIR=" + filepath.Join(dir, "data"), "CLAUDE_PROJECT_DIR=" + proj}
	event := []byte(`{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"` + proj +
		`","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"toolu_bench"}`)
	run := func(bin string, args ...string) time.Duration {
		c := exec.Command(bin, args...)
		c.Env, c.Dir, c.Stdin = env, proj, bytes.NewReader(event)
		var out bytes.Buffer
		c.Stdout = &out
		start := time.Now()
		err := c.Run()
		d := time.Since(start)
		if err != nil || out.Len() == 0 {
			b.Fatalf("%s %s: %v: %s", bin, strings.Join(args, " "), err, out.String())
		}
		return d
	}
	var helloT, versionT, recT, noRecT []time.Duration
	for b.Loop() {
		helloT = append(helloT, run(hello))
		versionT = append(versionT, run(gate, "version"))
		recT = append(recT, run(gate, "hook", "claude-code"))
		noRecT = append(noRecT, run(gate, "hook", "claude-code", "--no-record"))
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	h, r, n := pct(helloT, 50), pct(recT, 50), pct(noRecT, 50)
	b.ReportMetric(ms(h), "hello-p50-ms")
	b.ReportMetric(ms(pct(versionT, 50)), "version-p50-ms")
	b.ReportMetric(ms(r), "hook-p50-ms")
	b.ReportMetric(ms(n), "norecord-p50-ms")
	b.ReportMetric(ms(pct(helloT, 90)), "hello-p90-ms")
	b.ReportMetric(ms(pct(recT, 90)), "hook-p90-ms")
	b.ReportMetric(ms(pct(noRecT, 90)), "norecord-p90-ms")
	b.ReportMetric(float64(r)/float64(h), "hook/hello-p50")
	b.ReportMetric(float64(n)/float64(h), "norecord/hello-p50")
	b.ReportMetric(0, "ns/op") // the three processes of an iteration are reported above, not as one
}

// pct is the p-th percentile of ds (nearest rank).
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return s[max(i, 0)]
}
