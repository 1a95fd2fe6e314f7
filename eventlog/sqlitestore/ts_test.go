package sqlitestore

import (
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
)

// TestParseTS checks the fast path against time.Parse, the definition: the
// same instant and location for every well-formed stamp, and time.Parse's
// verdict for everything else.
func TestParseTS(t *testing.T) {
	t.Parallel()
	tests := []string{
		"2026-11-30T10:00:00.000000Z",
		"2026-12-01T23:59:59.999999Z",
		"0001-01-01T00:00:00.000000Z",
		"2024-02-29T12:34:56.000001Z",
		"2023-02-29T12:34:56.000001Z", // no 29 February in 2023
		"2026-04-31T00:00:00.000000Z", // no 31 April
		"2026-13-01T00:00:00.000000Z",
		"2026-11-30T24:00:00.000000Z",
		"2026-11-30T10:60:00.000000Z",
		"2026-11-30T10:00:60.000000Z",
		"2026-11-30T10:00:00.000000+01:00",
		"2026-11-30T10:00:00.00000Z",
		"2026-11-30 10:00:00.000000Z",
		"2026-11-3xT10:00:00.000000Z",
		"yesterday",
		"",
	}
	for _, s := range tests {
		got, gotErr := parseTS(s)
		want, wantErr := time.Parse(event.TimeFormat, s)
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("parseTS(%q) error %v, time.Parse %v", s, gotErr, wantErr)
			continue
		}
		if !got.Equal(want) || got.Location() != want.Location() {
			t.Errorf("parseTS(%q) = %v (%v), time.Parse %v (%v)", s, got, got.Location(), want, want.Location())
		}
	}
	// And every instant a store writes reads back as written.
	for _, ts := range []time.Time{time.Now(), time.Date(1999, 12, 31, 23, 59, 59, 123456000, time.UTC)} {
		s := event.NormalizeTime(ts).Format(event.TimeFormat)
		got, err := parseTS(s)
		if err != nil || !got.Equal(event.NormalizeTime(ts)) || got.Format(event.TimeFormat) != s {
			t.Errorf("round trip of %s: %v, %v", s, got, err)
		}
	}
}
