package app

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/policy"
)

// ConfigFiles are where a working directory's configuration lives.
type ConfigFiles struct {
	User, Project string
	// ProjectRoot is the project's directory (policy.FindProject), the one
	// `custom-agent trust` records.
	ProjectRoot string
	ConfigHome  string
}

// FindConfig returns the configuration files for cwd: the user file under
// configHome ("" means from the environment) and the project file beside
// the project policy.
func FindConfig(cwd, configHome string, getenv func(string) string) (ConfigFiles, error) {
	if configHome == "" {
		h, err := policy.ConfigHome(getenv)
		if err != nil {
			return ConfigFiles{}, err
		}
		configHome = h
	}
	p, err := policy.FindProject(cwd)
	if err != nil {
		return ConfigFiles{}, err
	}
	return ConfigFiles{
		User:        filepath.Join(configHome, policy.AppDir, config.FileName),
		Project:     filepath.Join(p.Root, policy.ProjectDir, config.FileName),
		ProjectRoot: p.Root, ConfigHome: configHome,
	}, nil
}

// LoadConfig reads and merges the configuration of cwd with the
// environment and flags. A file that does not exist is no file; one that
// does not load strictly is an error naming file:line:col.
func LoadConfig(cwd, configHome string, getenv func(string) string, flags config.Flags) (*config.Config, error) {
	files, err := FindConfig(cwd, configHome, getenv)
	if err != nil {
		return nil, err
	}
	in := config.Inputs{ProjectRoot: files.ProjectRoot, Getenv: getenv, Flags: flags}
	if in.User, err = readConfig(files.User); err != nil {
		return nil, err
	}
	if in.Project, err = readConfig(files.Project); err != nil {
		return nil, err
	}
	if in.Project != nil {
		if in.ProjectTrusted, err = policy.IsTrusted(files.ConfigHome, files.ProjectRoot); err != nil {
			return nil, err
		}
	}
	return config.Merge(in)
}

func readConfig(path string) (*config.File, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return config.Parse(path, b)
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
