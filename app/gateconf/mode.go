package gateconf

import (
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/flagspec"
)

// ModeUsage is the help text of --mode, the same on every command that
// decides calls (run, acp, demo, check and chat).
const ModeUsage = "session mode: default (writes, commands and network calls are asked), " +
	"plan (only reads run; anything else is denied), " +
	"accept-edits (write_file and apply_patch inside the working directory run without asking; protected and credential paths as default) " +
	"or dont-ask (every question is a denial at once, for CI and headless use)"

// ModeFlag is the name of the mode flag.
const ModeFlag = "mode"

// AddModeFlag adds --mode, defaulting to default. A command reads the
// configuration files' mode when the flag is not given.
func AddModeFlag(s *flagspec.Set, p *string) {
	s.String(p, ModeFlag, string(permission.ModeDefault), ModeUsage)
}

// ParseMode checks a mode from a flag, a configuration file or a request:
// unknown mode "x" (want default, plan, accept-edits or dont-ask). The
// empty mode is default.
func ParseMode(s string) (permission.Mode, error) {
	if s == "" {
		return permission.ModeDefault, nil
	}
	m, err := permission.ParseMode(s)
	if err != nil {
		return "", err
	}
	return m, nil
}

// ModeOf returns the mode a command runs in: the merged configuration's
// (where --mode, when given, beats the files), else the flag's value.
func ModeOf(flagValue, confMode string) (permission.Mode, error) {
	if confMode != "" {
		flagValue = confMode
	}
	return ParseMode(flagValue)
}
