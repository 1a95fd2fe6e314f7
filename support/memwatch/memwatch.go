// Package memwatch measures how far the heap grows while something runs,
// for tests and benchmarks that bound memory (a tool printing 1 GiB must
// not hold 1 GiB).
package memwatch

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Start samples the heap in use every interval until the returned function
// is called; that function returns the peak growth over the heap in use at
// Start (after a GC), in bytes, never negative.
func Start(interval time.Duration) (stop func() uint64) {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	peak.Store(base.HeapInuse)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return peak.Load() - base.HeapInuse
	}
}
