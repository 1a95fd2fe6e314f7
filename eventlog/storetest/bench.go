package storetest

import (
	"slices"
	"syscall"
	"testing"
	"time"
)

// CPUTime is the process's user and system time so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportLatency reports an append benchmark's throughput and latency
// (events/s, p50-µs, p99-µs of lat), and cpu-µs/event: this process's CPU
// time per event since cpu0, which unlike events/s hardly moves with what
// else the disk is doing. A server's own work (PostgreSQL's) is not in it.
func ReportLatency(b *testing.B, lat []time.Duration, elapsed, cpu0 time.Duration) {
	b.ReportMetric(float64((CPUTime()-cpu0).Microseconds())/float64(len(lat)), "cpu-µs/event")
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
