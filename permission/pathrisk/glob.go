package pathrisk

import (
	"path"
	"slices"
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
	".npmrc", "_netrc", ".dockercfg", ".my.cnf", ".envrc", ".htpasswd", ".yarnrc.yml", "kubeconfig",
	"prod.kubeconfig", "application_default_credentials.json", "prod-service-account.json",
	"ci-sa-key.json", "terraform.tfstate.backup", "id_deploy", "authkey.p8", "secrets.yml", "db.env",
	"key.json", "secring.gpg",
}

// ordinaryNames are everyday file names. A glob component that matches one
// of them ("*.json" matches package.json) is aimed at a kind of file, not
// at credentials, even when it also matches a credential name
// (credentials.json); the files it reaches are judged one by one instead
// (the walkers of search_text skip credential files, and a shell glob's
// matches are judged when the caller expands it).
var ordinaryNames = [...]string{
	"main.go", "package.json", "readme.md", "index.ts", "index.js", "app.py", "config.yaml",
	"config.yml", "settings.toml", "cargo.toml", "notes.txt", "data.csv", "index.html", "style.css",
	"pom.xml", "lib.rs", "main.c", "main.h", "schema.sql", "run.sh", "app.rb", "main.java",
	"makefile", "dockerfile", "license",
}

// aimedAtCredential reports whether one glob component (no slash, no
// braces) matches a credential name and no ordinary one.
func aimedAtCredential(comp string, match func(pattern, name string) bool) (string, bool) {
	if !strings.ContainsAny(comp, "*?[\\") {
		// No wildcard: the component matches only itself.
		if slices.Contains(sensitiveNames[:], comp) {
			return comp, true
		}
		return "", false
	}
	hit := ""
	for _, name := range sensitiveNames {
		if match(comp, name) {
			hit = name
			break
		}
	}
	if hit == "" {
		return "", false
	}
	for _, name := range ordinaryNames {
		if ok, err := path.Match(comp, name); ok && err == nil {
			return "", false
		}
	}
	return hit, true
}

// GlobTargetsCredential reports whether a file-name glob (doublestar or
// shell syntax, slash-separated) is aimed at credential files: some
// component that is not a bare wildcard matches a credential name, as
// ".env*", "**/id_*" and "*.pem" do. It returns the name matched. A bare
// "*" or "**" matches everything and says nothing about intent, so it is
// not counted; the directories it walks are judged as paths instead.
func GlobTargetsCredential(glob string) (string, bool) {
	for rest := strings.ToLower(glob); rest != ""; {
		comp := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			comp, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if strings.Trim(comp, "*") == "" {
			continue
		}
		if strings.IndexByte(comp, '{') < 0 {
			if name, ok := matchSensitive(comp); ok {
				return name, true
			}
			continue
		}
		// Braces are doublestar syntax path.Match lacks: try each choice.
		for _, alt := range braceChoices(comp) {
			if name, ok := matchSensitive(alt); ok {
				return name, true
			}
		}
	}
	return "", false
}

// matchSensitive matches one brace-free glob component against the
// sensitive names. A malformed pattern counts when it spells the name.
func matchSensitive(comp string) (string, bool) {
	return aimedAtCredential(comp, func(pattern, name string) bool {
		ok, err := path.Match(pattern, name)
		return ok || err != nil && strings.Contains(pattern, strings.TrimPrefix(name, "."))
	})
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

// GlobMayMatchCredential reports whether a shell glob over absolute paths
// (what `cat ~/.ss*/id_*` expands) may match a credential location or a
// directory that holds one, by the same tables Classify uses. Like the
// shell, a pattern component that does not start with a dot does not match
// a dot file. Components are compared without regard to ASCII case.
func GlobMayMatchCredential(pattern string, env Env) bool {
	if IsCredential(pattern, env) {
		return true
	}
	var buf [maxComps]string
	pc := split(strings.ToLower(pattern), buf[:0])
	if len(pc) == 0 {
		return false
	}
	last := pc[len(pc)-1]
	if strings.Trim(last, "*") != "" {
		if _, ok := aimedAtCredential(last, matchComp); ok {
			return true
		}
	}
	for _, l := range credLocations(rootLocations) {
		if prefixMatch(pc, nil, l.comps) {
			return true
		}
	}
	var homes [][]string
	add := func(h string) {
		if h != "" && h[0] == '/' && h != "/" {
			homes = append(homes, splitAll(strings.ToLower(h)))
		}
	}
	add(env.Home)
	for _, h := range env.UserHomes {
		add(h)
	}
	homes = append(homes, []string{"root"}, []string{"home", "*"}, []string{"users", "*"})
	for _, h := range homes {
		for _, l := range credLocations(homeLocations) {
			if prefixMatch(pc, h, l.comps) {
				return true
			}
		}
	}
	for i := range pc {
		for _, l := range credLocations(anyLocations) {
			if prefixMatch(pc[i:], nil, l.comps) {
				return true
			}
		}
	}
	return false
}

// credLocations lists the locations of a table that are credential to read.
func credLocations(ix indexed) []location {
	var out []location
	for _, g := range ix.byFirst {
		for _, l := range g.locs {
			if l.level >= cred && !l.writeOnly {
				out = append(out, l)
			}
		}
	}
	for _, l := range ix.wildcard {
		if l.level >= cred && !l.writeOnly {
			out = append(out, l)
		}
	}
	return out
}

// prefixMatch reports whether the pattern components pc and the location
// head+tail agree on their common length: the pattern then names the
// location, something inside it, or a directory on the way to it.
func prefixMatch(pc, head, tail []string) bool {
	n := min(len(pc), len(head)+len(tail))
	for i := 0; i < n; i++ {
		name := ""
		if i < len(head) {
			name = head[i]
		} else {
			name = tail[i-len(head)]
		}
		if name != "*" && !matchComp(pc[i], name) {
			return false
		}
	}
	return true
}

// matchComp matches one glob component against one name, shell-style: a
// pattern not starting with a dot does not match a dot file. A malformed
// pattern counts as matching.
func matchComp(pattern, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
		return false
	}
	ok, err := path.Match(pattern, name)
	return ok || err != nil
}
