// Package gateconf reads what a command that decides tool calls needs
// before it decides: the merged configuration of a working directory, the
// compiled policy (user, project with its trust, extra files, built-in
// rules) and the session mode from a flag. run, chat, acp, demo, policy and
// check read them alike through it; it links no model, store or protocol
// SDK, so the small custom-agent-gate binary can use it too.
package gateconf

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/policy"
)

// Files are where a working directory's configuration lives.
type Files struct {
	User, Project string
	// ProjectRoot is the project's directory (policy.FindProject), the one
	// `custom-agent trust` records.
	ProjectRoot string
	ConfigHome  string
}

// FindConfig returns the configuration files for cwd: the user file under
// configHome ("" means from the environment) and the project file beside
// the project policy.
func FindConfig(cwd, configHome string, getenv func(string) string) (Files, error) {
	if configHome == "" {
		h, err := policy.ConfigHome(getenv)
		if err != nil {
			return Files{}, err
		}
		configHome = h
	}
	p, err := policy.FindProject(cwd)
	if err != nil {
		return Files{}, err
	}
	return Files{
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
