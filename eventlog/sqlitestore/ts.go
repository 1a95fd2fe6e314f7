package sqlitestore

import (
	"time"

	"github.com/custom-agent/custom-agent/event"
)

// parseTS reads a stored timestamp. Every row the store writes has the form
// of event.TimeFormat in UTC ("2006-01-02T15:04:05.000000Z"), which is read
// here without time.Parse's layout interpretation (a quarter of a replay's
// CPU was time.Parse). Anything else, such as a hand-edited row, goes
// through time.Parse, so the result and the error are time.Parse's.
func parseTS(s string) (time.Time, error) {
	if t, ok := parseUTCMicro(s); ok {
		return t, nil
	}
	return time.Parse(event.TimeFormat, s)
}

func parseUTCMicro(s string) (time.Time, bool) {
	// 0123456789012345678901234567
	// 2006-01-02T15:04:05.000000Z
	if len(s) != 27 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[26] != 'Z' {
		return time.Time{}, false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for i := from; i < to; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	var f [7]int
	for i, r := range [7][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 26}} {
		n, ok := num(r[0], r[1])
		if !ok {
			return time.Time{}, false
		}
		f[i] = n
	}
	year, month, day, hour, minute, sec, usec := f[0], f[1], f[2], f[3], f[4], f[5], f[6]
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, usec*1000, time.UTC)
	if t.Day() != day { // 31 April and the like: let time.Parse refuse it
		return time.Time{}, false
	}
	return t, true
}
