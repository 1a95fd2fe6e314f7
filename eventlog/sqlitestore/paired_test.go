package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
)

// BenchmarkPaired measures the store against its floor (bareLog) in
// alternating rounds on the same disk, so that the ratio of issue 14
// ("one appender at least 0.9 of bare SQLite, 64 appenders on 64 sessions
// at least 0.8") does not move with whatever else the disk was doing
// while one of BenchmarkBareSQLite and BenchmarkAppend ran: on a shared
// machine their events/s moved threefold between runs seconds apart.
// b.N events are appended to each, in 8 rounds of b.N/8 (at least one per
// appender), the order alternating; store/bare is the median of the rounds' ratios of events/s.
func BenchmarkPaired(b *testing.B) {
	const rounds = 8
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) {
			per := max(b.N/rounds, n) // the first run, b.N = 1, still appends a few
			bare := openBare(b)
			defer bare.close()
			s, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "events.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			drafts := make([]event.Draft, n)
			for i := range drafts {
				if drafts[i], err = event.NewDraft(fmt.Sprintf("bench-%d", i), "t", time.Now(), payload1KB()); err != nil {
					b.Fatal(err)
				}
			}
			rate := func(events int, d time.Duration) float64 { return float64(events) / d.Seconds() }
			var ratios, bareRates, storeRates []float64
			b.ResetTimer()
			for r := range rounds {
				var bareElapsed, storeElapsed time.Duration
				if r%2 == 0 {
					_, bareElapsed = bare.run(b, n, per)
					_, storeElapsed = appendRun(b, s, drafts, per)
				} else {
					_, storeElapsed = appendRun(b, s, drafts, per)
					_, bareElapsed = bare.run(b, n, per)
				}
				bareRates = append(bareRates, rate(per, bareElapsed))
				storeRates = append(storeRates, rate(per, storeElapsed))
				ratios = append(ratios, storeRates[r]/bareRates[r])
			}
			b.StopTimer()
			median := func(xs []float64) float64 {
				xs = slices.Clone(xs)
				slices.Sort(xs)
				return (xs[(len(xs)-1)/2] + xs[len(xs)/2]) / 2
			}
			b.ReportMetric(median(ratios), "store/bare")
			b.ReportMetric(slices.Min(ratios), "min-store/bare")
			b.ReportMetric(median(bareRates), "bare-events/s")
			b.ReportMetric(median(storeRates), "store-events/s")
		})
	}
}
