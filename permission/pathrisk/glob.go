package pathrisk

import (
	"path"
	"strings"
)

// sensitiveNames are file and directory names a glob must not be aimed at:
// one example of each credential name and extension Classify knows.
var sensitiveNames = [...]string{
	".env", ".env.local", ".env.production", ".ssh", ".aws", ".gnupg", ".azure", ".kube",
	".netrc", ".pypirc", ".git-credentials", ".pgpass", ".password-store", ".vault-token",
	"id_rsa", "id_ed25519", "id_ecdsa", "credentials", "credentials.json",
	"cookies", "cookies.sqlite", "login data", "logins.json", "key4.db",
	"server.pem", "server.key", "store.p12", "store.pfx", "store.jks", "db.kdbx", "terraform.tfstate",
}

// GlobTargetsCredential reports whether a file-name glob (doublestar or
// shell syntax, slash-separated) is aimed at credential files: some
// component that is not a bare wildcard matches a credential name, as
// ".env*", "**/id_*" and "*.pem" do. It returns the name matched. A bare
// "*" or "**" matches everything and says nothing about intent, so it is
// not counted; the directories it walks are judged as paths instead.
func GlobTargetsCredential(glob string) (string, bool) {
	for _, comp := range strings.Split(strings.ToLower(glob), "/") {
		if strings.Trim(comp, "*") == "" {
			continue
		}
		// Braces are doublestar syntax path.Match lacks: try each choice.
		for _, alt := range braceChoices(comp) {
			for _, name := range sensitiveNames {
				if ok, err := path.Match(alt, name); ok || err != nil && strings.Contains(alt, strings.TrimPrefix(name, ".")) {
					return name, true
				}
			}
		}
	}
	return "", false
}

// braceChoices expands the first {a,b} group of s, one level deep; enough
// for the globs models write.
func braceChoices(s string) []string {
	i := strings.IndexByte(s, '{')
	j := strings.IndexByte(s, '}')
	if i < 0 || j < i {
		return []string{s}
	}
	var out []string
	for _, c := range strings.Split(s[i+1:j], ",") {
		out = append(out, s[:i]+c+s[j+1:])
	}
	return out
}

// GlobRoot returns the leading directories of glob that hold no wildcard,
// so a caller can judge where the glob starts ("../../.ssh/*" starts at
// "../../.ssh"). It returns "" when the first component is a wildcard.
func GlobRoot(glob string) string {
	comps := strings.Split(glob, "/")
	n := 0
	for n < len(comps)-1 && !strings.ContainsAny(comps[n], "*?[{") {
		n++
	}
	if n == len(comps)-1 && !strings.ContainsAny(comps[n], "*?[{") {
		n++
	}
	return strings.Join(comps[:n], "/")
}
