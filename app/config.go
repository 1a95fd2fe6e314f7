package app

import (
	"github.com/custom-agent/custom-agent/app/gateconf"
	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/executor"
)

// ConfigFiles are where a working directory's configuration lives.
type ConfigFiles = gateconf.Files

// FindConfig returns the configuration files for cwd (gateconf.FindConfig).
func FindConfig(cwd, configHome string, getenv func(string) string) (ConfigFiles, error) {
	return gateconf.FindConfig(cwd, configHome, getenv)
}

// LoadConfig reads and merges the configuration of cwd with the
// environment and flags (gateconf.LoadConfig).
func LoadConfig(cwd, configHome string, getenv func(string) string, flags config.Flags) (*config.Config, error) {
	return gateconf.LoadConfig(cwd, configHome, getenv, flags)
}

// ConfigEnv returns getenv with the configuration's provider base URLs
// standing for OPENAI_BASE_URL and ANTHROPIC_BASE_URL when those are not
// set, so that the providers read them where they read the variables.
func ConfigEnv(c *config.Config, getenv func(string) string) func(string) string {
	return func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		for name, p := range c.Providers {
			if env, ok := config.ProviderEnv(name); ok && env == k {
				return p.BaseURL
			}
		}
		return ""
	}
}

// MaxOutput is the cap on one output stream kept in the artifact store:
// the configuration's maxOutputBytes (which holds --max-output-bytes, else
// $CUSTOM_AGENT_MAX_OUTPUT_BYTES, else the files), else the default.
func MaxOutput(c *config.Config) int64 {
	if c.MaxOutputBytes > 0 {
		return c.MaxOutputBytes
	}
	return executor.DefaultMaxStored
}
