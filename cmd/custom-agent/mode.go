package main

import (
	"github.com/spf13/pflag"

	"github.com/custom-agent/custom-agent/permission"
)

// modeUsage is the help text of --mode, the same on every command that
// decides calls (run, acp, demo, check and chat).
const modeUsage = "session mode: default (writes, commands and network calls are asked), " +
	"plan (only reads run; anything else is denied), " +
	"accept-edits (write_file and apply_patch inside the working directory run without asking; protected and credential paths as default) " +
	"or dont-ask (every question is a denial at once, for CI and headless use)"

// addModeFlag adds --mode, defaulting to default. A command reads the
// configuration files' mode when the flag is not given (configFlags).
func addModeFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "mode", string(permission.ModeDefault), modeUsage)
}

// parseMode checks a mode from a flag, a configuration file or a request:
// unknown mode "x" (want default, plan, accept-edits or dont-ask). The
// empty mode is default.
func parseMode(s string) (permission.Mode, error) {
	if s == "" {
		return permission.ModeDefault, nil
	}
	m, err := permission.ParseMode(s)
	if err != nil {
		return "", err
	}
	return m, nil
}

// modeOf returns the mode a command runs in: the merged configuration's
// (where --mode, when given, beats the files), else the flag's value.
func modeOf(flagValue, confMode string) (permission.Mode, error) {
	if confMode != "" {
		flagValue = confMode
	}
	return parseMode(flagValue)
}

// modeStep says what a mode does to a decision, for policy explain.
func modeStep(m permission.Mode) string {
	switch m {
	case permission.ModePlan:
		return "plan (only calls judged read may run; anything else is denied)"
	case permission.ModeAcceptEdits:
		return "accept-edits (where no rule and no prior approval decides, a write_file or apply_patch judged write is allowed instead of asked)"
	case permission.ModeDontAsk:
		return "dont-ask (whatever would be asked is denied at once)"
	}
	return string(permission.ModeDefault)
}
