package shellrisk

import (
	"path"
	"strings"
)

// homeSecrets are credential locations relative to the home directory.
var homeSecrets = [...]string{
	".ssh", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json", ".netrc", ".npmrc",
	".pypirc", ".git-credentials", ".gnupg", ".config/gh", ".password-store", ".vault-token",
	".terraform.d/credentials.tfrc.json", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
	".config/hub", ".pgpass", ".my.cnf", ".mozilla", ".config/google-chrome", ".config/chromium",
	"Library/Keychains", "Library/Cookies", "Library/Application Support/Google/Chrome", ".local/share/keyrings",
}

// BuiltinCredential is the minimal credential classifier used when
// Env.IsCredential is nil: /etc, secret files under home, .env files
// anywhere, and process environments. p must be absolute and clean.
func BuiltinCredential(p, home string) bool {
	if p == "/etc" || strings.HasPrefix(p, "/etc/") || strings.HasPrefix(p, "/var/run/secrets") || strings.HasPrefix(p, "/run/secrets") {
		return true
	}
	if strings.HasPrefix(p, "/proc/") && (strings.HasSuffix(p, "/environ") || strings.HasSuffix(p, "/mem")) {
		return true
	}
	base := path.Base(p)
	if base == ".env" || strings.HasPrefix(base, ".env.") || base == ".envrc" {
		return true
	}
	if home == "" || home == "/" {
		return false
	}
	rel, ok := strings.CutPrefix(p, home+"/")
	if !ok {
		return false
	}
	for _, s := range homeSecrets {
		if rel == s || strings.HasPrefix(rel, s+"/") {
			return true
		}
	}
	return false
}

// globMayMatchCredential reports whether a glob pattern may match a
// credential location or a directory holding one. Like the shell, a
// component pattern not starting with a dot does not match dot files.
func globMayMatchCredential(pat, home string) bool {
	if BuiltinCredential(pat, home) {
		return true
	}
	pc := strings.Split(strings.TrimPrefix(pat, "/"), "/")
	if last := pc[len(pc)-1]; matchComp(last, ".env") || matchComp(last, ".env.local") {
		return true
	}
	var roots []string
	roots = append(roots, "/etc", "/proc/1/environ")
	if home != "" && home != "/" {
		for _, s := range homeSecrets {
			roots = append(roots, home+"/"+s)
		}
	}
	for _, r := range roots {
		rc := strings.Split(strings.TrimPrefix(r, "/"), "/")
		n := min(len(rc), len(pc))
		ok := true
		for i := 0; i < n && ok; i++ {
			ok = matchComp(pc[i], rc[i])
		}
		if ok {
			return true
		}
	}
	return false
}

func matchComp(pattern, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
		return false
	}
	ok, err := path.Match(pattern, name)
	return ok || err != nil
}
