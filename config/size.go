package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes ParseSize accepts, longest first so that "KiB"
// is not read as "K" followed by junk. Binary units (KiB, K) are powers of
// 1024, decimal ones (KB) powers of 1000; B is bytes.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseSize reads a byte count: a whole number with an optional unit, as
// 536870912, 512MiB, 2GiB, 2G (= 2GiB), 500MB (= 500,000,000) or 4096B.
// Units are case-insensitive and may follow a space. The size must be at
// least one byte.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	switch {
	case err != nil || t == "" || t[0] == '+':
		return 0, fmt.Errorf("%q is not a size: want a whole number of bytes with an optional unit, e.g. 2GiB, 512MiB, 500MB or 1048576", s)
	case n <= 0:
		return 0, fmt.Errorf("size %q must be at least 1 byte", s)
	case n > math.MaxInt64/mult:
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}
