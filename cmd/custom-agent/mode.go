package main

import (
	"github.com/spf13/pflag"

	"github.com/custom-agent/custom-agent/app/gateconf"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/flagspec"
)

// modeUsage is the help text of --mode (gateconf.ModeUsage).
const modeUsage = gateconf.ModeUsage

// addModeFlag adds --mode (gateconf.AddModeFlag).
func addModeFlag(fl *pflag.FlagSet, p *string) {
	var s flagspec.Set
	gateconf.AddModeFlag(&s, p)
	addFlags(fl, &s)
}

// parseMode checks a mode from a flag, a configuration file or a request
// (gateconf.ParseMode).
func parseMode(s string) (permission.Mode, error) { return gateconf.ParseMode(s) }

// modeOf returns the mode a command runs in (gateconf.ModeOf).
func modeOf(flagValue, confMode string) (permission.Mode, error) {
	return gateconf.ModeOf(flagValue, confMode)
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
