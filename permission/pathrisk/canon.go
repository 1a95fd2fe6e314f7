package pathrisk

import (
	"path"
	"strings"
)

// Env is what Classify and Canonical need to know about the caller's world.
// Every field is a value the caller computed at the edge; nothing is looked up.
type Env struct {
	// Cwd is the session's working directory, absolute. Relative paths are
	// joined to it, and a path outside it is raised one level. Empty means
	// unknown: every relative path is then unknown too.
	Cwd string
	// Home is the user's home directory, absolute; "" if unknown.
	Home string
	// UserHomes maps a user name to its home directory, for ~user. A user not
	// in the map makes the path unknown.
	UserHomes map[string]string
	// ConfigHome is $XDG_CONFIG_HOME if set; "" means Home/.config.
	ConfigHome string
	// DataDir is custom-agent's data directory as the runner resolved it
	// (--data-dir, $CUSTOM_AGENT_DATA_DIR, $XDG_DATA_HOME/custom-agent),
	// absolute; "" when it is the default ~/.local/share/custom-agent or
	// unknown. It holds the event log and the web UI's script token, so
	// it is a credential location like the default one, wherever it is.
	DataDir string
}

// Canonical returns the lexical absolute form of raw: `~`, `~user`, `$HOME`
// and `${HOME}` expanded at the start, joined to env.Cwd if relative, and
// cleaned (`.`, `..`, `//`). It reports false when the path cannot be known
// without running something: an unknown user, an unknown home or cwd, or an
// empty path. It never touches the file system, so symlinks are not resolved.
func Canonical(raw string, env Env) (string, bool) {
	return absolute(raw, env, true)
}

// Absolute is Canonical without the cleaning: `~`, `~user`, `$HOME` and
// `${HOME}` are expanded and a relative path is joined to env.Cwd, but `..`
// stays where it was written. The kernel resolves a symbolic link before the
// `..` that follows it, so "link/../x" is only found by resolving this form,
// never the cleaned one.
func Absolute(raw string, env Env) (string, bool) {
	return absolute(raw, env, false)
}

func absolute(raw string, env Env, clean bool) (string, bool) {
	if raw == "" {
		return "", false
	}
	p := raw
	switch {
	case p[0] == '~':
		name, rest, _ := strings.Cut(p[1:], "/")
		var home string
		if name == "" {
			home = env.Home
		} else {
			home = env.UserHomes[name]
		}
		if home == "" || home[0] != '/' {
			return "", false
		}
		p = joinAbs(home, rest, clean)
	case strings.HasPrefix(p, "$HOME"):
		rest, ok := afterVar(p, len("$HOME"))
		if !ok || env.Home == "" || env.Home[0] != '/' {
			return "", false
		}
		p = joinAbs(env.Home, rest, clean)
	case strings.HasPrefix(p, "${HOME}"):
		rest, ok := afterVar(p, len("${HOME}"))
		if !ok || env.Home == "" || env.Home[0] != '/' {
			return "", false
		}
		p = joinAbs(env.Home, rest, clean)
	case p[0] != '/':
		if env.Cwd == "" || env.Cwd[0] != '/' {
			return "", false
		}
		p = joinAbs(env.Cwd, p, clean)
	default:
		if clean && !isClean(p) {
			p = path.Clean(p)
		}
	}
	return p, true
}

// afterVar returns what follows a variable reference that ends at i, which
// must be the end of the string or a slash ("$HOMEX" is another variable).
func afterVar(p string, i int) (string, bool) {
	if i == len(p) {
		return "", true
	}
	if p[i] != '/' {
		return "", false
	}
	return p[i+1:], true
}

func joinAbs(base, rest string, clean bool) string {
	if rest != "" {
		base = base + "/" + rest
	}
	if clean && !isClean(base) {
		return path.Clean(base)
	}
	return base
}

// isClean reports whether an absolute path is already in path.Clean form,
// so the common case costs no allocation and no second pass
// (TestIsCleanIsPathClean).
func isClean(p string) bool {
	if p == "/" {
		return true
	}
	if p[len(p)-1] == '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		if i+1 < len(p) && p[i+1] == '/' {
			return false
		}
		if i+1 < len(p) && p[i+1] == '.' {
			j := i + 2
			if j == len(p) || p[j] == '/' {
				return false
			}
			if p[j] == '.' && (j+1 == len(p) || p[j+1] == '/') {
				return false
			}
		}
	}
	return true
}

// Within reports whether p is dir or lies beneath it, comparing whole path
// components: /home/u/proj_backup is not within /home/u/proj. Both must be
// clean absolute paths.
func Within(p, dir string) bool {
	if dir == "" || p == "" {
		return false
	}
	if dir == "/" {
		return p[0] == '/'
	}
	return p == dir || (len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir)
}

// withinFold is Within with ASCII case folded, for locations whose meaning
// does not depend on case (macOS and Windows file systems ignore it).
func withinFold(p, dir string) bool {
	if dir == "" || p == "" {
		return false
	}
	if dir == "/" {
		return p[0] == '/'
	}
	// Most often the two are written alike: a comparison, not a fold.
	if strings.HasPrefix(p, dir) && (len(p) == len(dir) || p[len(dir)] == '/') {
		return true
	}
	return strings.EqualFold(p, dir) ||
		(len(p) > len(dir) && p[len(dir)] == '/' && strings.EqualFold(p[:len(dir)], dir))
}
