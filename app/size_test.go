package app

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/executor"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	good := map[string]int64{
		"1": 1, "536870912": 512 << 20, "4096B": 4096, "4096 b": 4096,
		"512MiB": 512 << 20, "2GiB": 2 << 30, "2gib": 2 << 30, "2 GiB": 2 << 30, "1TiB": 1 << 40, "64KiB": 64 << 10,
		"2G": 2 << 30, "512m": 512 << 20, "8k": 8 << 10,
		"500MB": 500_000_000, "2GB": 2_000_000_000, "1kb": 1000, " 3GiB ": 3 << 30,
		"8388607TiB": 8388607 << 40,
	}
	for in, want := range good {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "0", "0GiB", "-1", "-2GiB", "+5", "1.5GiB", "2 GiB GiB", "2XiB", "two", "8388608TiB", "99999999999999999999", "0x10", "1_000"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatSizeRoundTrips(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 1000, 1024, 4097, 512 << 20, 2 << 30, 3 << 40, executor.DefaultMaxStored} {
		s := FormatSize(n)
		if back, err := ParseSize(s); err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q, read back as %d, %v", n, s, back, err)
		}
	}
	if got := FormatSize(2 << 30); got != "2GiB" {
		t.Errorf("FormatSize(2 GiB) = %q", got)
	}
}

func TestMaxOutputBytes(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == MaxOutputEnv {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		flag, env string
		want      int64
	}{
		{"", "", executor.DefaultMaxStored},
		{"", "1GiB", 1 << 30},
		{"4GiB", "1GiB", 4 << 30},
		{"100", "", 100},
	} {
		if got, err := MaxOutputBytes(c.flag, env(c.env)); err != nil || got != c.want {
			t.Errorf("MaxOutputBytes(%q, env %q) = %d, %v; want %d", c.flag, c.env, got, err, c.want)
		}
	}
	if _, err := MaxOutputBytes("lots", env("")); err == nil || !strings.Contains(err.Error(), "--max-output-bytes") {
		t.Errorf("a bad flag: %v", err)
	}
	if _, err := MaxOutputBytes("", env("0")); err == nil || !strings.Contains(err.Error(), MaxOutputEnv) {
		t.Errorf("a bad environment variable: %v", err)
	}
}
