package gateconf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

// BuiltinRulesEnv turns the built-in rules off (issue 16) when set to off;
// --no-builtin-rules does the same for one command, and the configuration
// file's builtinRules key for its scope.
const BuiltinRulesEnv = "CUSTOM_AGENT_BUILTIN_RULES"

// NoBuiltinRulesUsage is the help of --no-builtin-rules.
const NoBuiltinRulesUsage = "leave out the built-in rules that allow read-only commands (ls, cat, git status, …) without a question; also " + BuiltinRulesEnv + "=off"

// BuiltinRulesOff reads CUSTOM_AGENT_BUILTIN_RULES: "off" (or 0, false,
// no) turns the built-in rules off, "on", "" (or 1, true, yes) keeps them;
// anything else is an error rather than a guess.
func BuiltinRulesOff(getenv func(string) string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv(BuiltinRulesEnv))); v {
	case "", "on", "1", "true", "yes":
		return false, nil
	case "off", "0", "false", "no":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want on or off", BuiltinRulesEnv, v)
	}
}

// PolicyOptions returns the store options for cwd ("" is the current
// directory), from the environment: the user config under the XDG config
// home, HOME, CUSTOM_AGENT_BUILTIN_RULES, and extra files.
func PolicyOptions(cwd string, files []string) (policy.Options, error) {
	ch, err := policy.ConfigHome(os.Getenv)
	if err != nil {
		return policy.Options{}, err
	}
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return policy.Options{}, err
		}
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return policy.Options{}, err
	}
	home := os.Getenv("HOME")
	if home != "" {
		home = filepath.Clean(home)
	}
	off, err := BuiltinRulesOff(os.Getenv)
	if err != nil {
		return policy.Options{}, err
	}
	return policy.Options{Cwd: abs, ConfigHome: ch, Home: home, Files: files, NoBuiltin: off}, nil
}

// OpenPolicy opens the policy store for cwd the way run and check do, with
// the user's configuration (user policy, trusted projects) in configHome
// instead of the environment's unless it is "", and the built-in rules left
// out when noBuiltin is set (--no-builtin-rules).
func OpenPolicy(cwd, configHome string, noBuiltin bool, files ...string) (*policy.Store, error) {
	o, err := PolicyOptions(cwd, files)
	if err != nil {
		return nil, err
	}
	if configHome != "" {
		o.ConfigHome = configHome
	}
	o.NoBuiltin = o.NoBuiltin || noBuiltin
	return policy.Open(o)
}

// LoadPolicy returns the compiled policy run and check give the engine for
// cwd: user, project (with its trust), extra files and, unless noBuiltin or
// the environment turns them off, the built-in rules.
func LoadPolicy(cwd string, files []string, noBuiltin bool) (*permission.Policy, error) {
	s, err := OpenPolicy(cwd, "", noBuiltin, files...)
	if err != nil {
		return nil, err
	}
	return s.Policy()
}
