// Package datadir locates custom-agent's data directory: the event log and
// the artifact store live there.
package datadir

import (
	"errors"
	"path/filepath"
)

// EnvVar overrides the data directory.
const EnvVar = "CUSTOM_AGENT_DATA_DIR"

// LogFile is the event log's file name inside the data directory.
const LogFile = "events.db"

// Resolve returns the data directory: flag if set, else $CUSTOM_AGENT_DATA_DIR,
// else $XDG_DATA_HOME/custom-agent, else ~/.local/share/custom-agent. getenv
// and home are injected so that the rule is testable; home is consulted only
// when needed.
func Resolve(flag string, getenv func(string) string, home func() (string, error)) (string, error) {
	pick := func(p string) (string, error) { return filepath.Abs(filepath.Clean(p)) }
	if flag != "" {
		return pick(flag)
	}
	if v := getenv(EnvVar); v != "" {
		return pick(v)
	}
	// The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
	if v := getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return pick(filepath.Join(v, "custom-agent"))
	}
	h, err := home()
	if err != nil || h == "" {
		return "", errors.New("cannot find a data directory: HOME is not set; set --data-dir or " + EnvVar)
	}
	return pick(filepath.Join(h, ".local", "share", "custom-agent"))
}

// Real returns dir with its symbolic links resolved, or dir cleaned when it
// cannot be resolved (it does not exist yet). It is the form the permission
// engine is given (permission.Request.DataDir): the engine compares it with
// the resolved form of each path, so a link to the data directory, or a data
// directory reached through one, is still recognised.
func Real(dir string) string {
	if dir == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}
