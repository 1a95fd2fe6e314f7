package app

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/executor"
)

// MaxOutputEnv sets the cap on the bytes of one output stream kept in the
// artifact store, like --max-output-bytes.
const MaxOutputEnv = "CUSTOM_AGENT_MAX_OUTPUT_BYTES"

// ParseSize reads a byte count: a whole number with an optional unit, as
// 536870912, 512MiB, 2GiB, 2G (= 2GiB), 500MB (= 500,000,000) or 4096B
// (config.ParseSize, which the configuration file's maxOutputBytes uses).
func ParseSize(s string) (int64, error) { return config.ParseSize(s) }

// FormatSize writes n in the largest binary unit that divides it, as
// ParseSize reads it back: 2GiB, 512MiB, 1000B.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// MaxOutputBytes is the cap on one output stream kept in the artifact
// store: flag when it is set (not ""), else $CUSTOM_AGENT_MAX_OUTPUT_BYTES,
// else executor.DefaultMaxStored. Commands that read the configuration
// file use LoadConfig and MaxOutput, which put its maxOutputBytes key
// between the environment and the default.
func MaxOutputBytes(flag string, getenv func(string) string) (int64, error) {
	if flag != "" {
		n, err := ParseSize(flag)
		if err != nil {
			return 0, fmt.Errorf("--max-output-bytes: %w", err)
		}
		return n, nil
	}
	if v := getenv(MaxOutputEnv); strings.TrimSpace(v) != "" {
		n, err := ParseSize(v)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", MaxOutputEnv, err)
		}
		return n, nil
	}
	return executor.DefaultMaxStored, nil
}
