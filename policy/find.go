package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custom-agent/custom-agent/support/resolve"
)

// Names of the files this package reads and writes.
const (
	// ProjectDir is the directory, in a project, that holds ProjectFile.
	ProjectDir = ".custom-agent"
	// PolicyFile is the name of the project and user policy files.
	PolicyFile = "policy.json"
	// TrustFile, in the user config directory, lists the trusted projects.
	TrustFile = "trusted.json"
	// AppDir is custom-agent's directory under the config home.
	AppDir = "custom-agent"
)

// ConfigHome returns the XDG config home: $XDG_CONFIG_HOME when it is an
// absolute path (the XDG spec says to ignore a relative one), else
// $HOME/.config.
func ConfigHome(getenv func(string) string) (string, error) {
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Clean(d), nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", errors.New("neither XDG_CONFIG_HOME nor HOME is set to an absolute path, so the user policy cannot be found")
	}
	return filepath.Join(home, ".config"), nil
}

// UserFile returns the user policy file under configHome.
func UserFile(configHome string) string {
	return filepath.Join(configHome, AppDir, PolicyFile)
}

// Project is where a working directory's project policy lives.
type Project struct {
	// Root is the project directory, canonical (absolute, symbolic links
	// resolved): the directory holding .custom-agent/policy.json, or when
	// there is none, the repository root, or when cwd is in no repository,
	// cwd itself. It is what `custom-agent trust` records.
	Root string
	// File is Root/.custom-agent/policy.json; it may not exist yet.
	File string
	// Exists reports whether File existed when the project was found.
	Exists bool
}

// FindProject finds the project policy for the working directory cwd,
// which need not exist.
//
// The search is predictable and never leaves the repository: from cwd
// upwards, the first directory holding .custom-agent/policy.json wins, and
// the search stops at the repository root (the first directory holding a
// .git entry, a directory or a worktree's file). When cwd is in no
// repository only cwd itself is searched, so a stray policy file in a
// parent such as /tmp or $HOME never applies to an unrelated directory.
func FindProject(cwd string) (Project, error) {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return Project{}, err
	}
	// A directory that does not exist yet (check --cwd) is resolved as far
	// as it exists.
	dir := resolve.Path(abs)
	repo := ""
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			repo = d
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return Project{}, fmt.Errorf("finding the repository root: %w", err)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	last := repo
	if last == "" {
		last = dir
	}
	for d := dir; ; d = filepath.Dir(d) {
		f := filepath.Join(d, ProjectDir, PolicyFile)
		if _, err := os.Stat(f); err == nil {
			return Project{Root: d, File: f, Exists: true}, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return Project{}, fmt.Errorf("project policy: %w", err)
		}
		if d == last || filepath.Dir(d) == d {
			break
		}
	}
	return Project{Root: last, File: filepath.Join(last, ProjectDir, PolicyFile)}, nil
}
