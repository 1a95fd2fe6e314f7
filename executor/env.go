package executor

import (
	"strings"

	"github.com/custom-agent/custom-agent/secrets"
)

// secretEnvSuffixes and secretEnvWords decide which environment variables a
// tool's process must not inherit: a model that can run `env` would read
// them, and a command could send them away.
var (
	secretEnvPrefixes = []string{"AWS_", "AZURE_", "GOOGLE_APPLICATION_CREDENTIALS", "GCLOUD_", "CLOUDSDK_AUTH", "OPENAI_", "ANTHROPIC_", "CUSTOM_AGENT_"}
	secretEnvWords    = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "PAT", "AUTH", "COOKIE", "SESSION", "PWD", "PASS", "JWT", "DSN", "WEBHOOK"}
	// Variables whose names contain such a word but hold nothing secret.
	safeEnv = map[string]bool{"SSH_AUTH_SOCK": false, "XDG_SESSION_TYPE": true, "XDG_SESSION_ID": true, "XDG_SESSION_CLASS": true, "XDG_SESSION_DESKTOP": true, "DESKTOP_SESSION": true, "KEYTIMEOUT": true, "PWD": true, "OLDPWD": true}
)

// SecretEnvName reports whether an environment variable's name marks it as
// secret: a known credential prefix, or a word of its name (split on "_")
// such as KEY, TOKEN, SECRET or PASSWORD.
func SecretEnvName(name string) bool {
	upper := strings.ToUpper(name)
	if safe, ok := safeEnv[upper]; ok {
		return !safe
	}
	for _, p := range secretEnvPrefixes {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	for _, w := range strings.Split(upper, "_") {
		for _, s := range secretEnvWords {
			if w == s || strings.HasSuffix(w, "APIKEY") || strings.HasSuffix(w, "TOKEN") || strings.HasSuffix(w, "PASSWORD") {
				return true
			}
		}
	}
	return false
}

// ScrubEnv returns env without the variables SecretEnvName marks, or whose
// value is a URL with a password in it (DATABASE_URL=postgres://u:pw@…) or
// holds what looks like a secret whatever its name (STRIPE_SK=sk_live_…,
// GIT_CONFIG_PARAMETERS carrying an Authorization header), and the names
// it removed.
func ScrubEnv(env []string) (kept []string, removed []string) {
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if SecretEnvName(name) || urlWithPassword(value) || len(secrets.Find(value)) > 0 {
			removed = append(removed, name)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, removed
}

// urlWithPassword reports whether v holds a URL whose user information has
// a password: scheme://user:password@host.
func urlWithPassword(v string) bool {
	_, rest, ok := strings.Cut(v, "://")
	if !ok {
		return false
	}
	auth, _, ok := strings.Cut(rest, "@")
	if !ok || strings.ContainsAny(auth, "/?#") {
		return false
	}
	_, pw, ok := strings.Cut(auth, ":")
	return ok && pw != ""
}
