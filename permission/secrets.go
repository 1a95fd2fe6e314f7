package permission

import "strings"

// secretMarkers are fixed strings that only appear in secret material.
var secretMarkers = [...]struct{ marker, what string }{
	{"PRIVATE KEY-----", "a private key"},
	{"PRIVATE KEY BLOCK-----", "a private key"},
	{"aws_secret_access_key", "an AWS secret key"},
	{"aws_session_token", "an AWS session token"},
	{"ghp_", "a GitHub token"},
	{"gho_", "a GitHub token"},
	{"ghs_", "a GitHub token"},
	{"github_pat_", "a GitHub token"},
	{"glpat-", "a GitLab token"},
	{"xoxb-", "a Slack token"},
	{"xoxp-", "a Slack token"},
	{"sk_live_", "a Stripe key"},
	{"sk-ant-", "an Anthropic API key"},
	{"sk-proj-", "an OpenAI API key"},
	{"AIza", "a Google API key"},
	{"npm_", "an npm token"},
}

// findSecret returns the span and kind of the first secret-looking string
// in s: key material, or a token with a vendor's prefix followed by enough
// token characters to be one. It errs on the side of finding: a false find
// only means the user is asked or must allow the call by rule.
func findSecret(s string) (start, end int, what string, ok bool) {
	best := -1
	for _, m := range secretMarkers {
		from := 0
		for {
			i := strings.Index(s[from:], m.marker)
			if i < 0 {
				break
			}
			i += from
			n := tokenLen(s[i+len(m.marker):])
			isKey := strings.HasSuffix(m.marker, "-----") || strings.HasPrefix(m.marker, "aws_")
			if (isKey || n >= 16) && (best < 0 || i < best) {
				best, start, end, what = i, i, i+len(m.marker)+n, m.what
				break
			}
			from = i + len(m.marker)
		}
	}
	if i := awsKeyID(s); i >= 0 && (best < 0 || i < best) {
		best, start, end, what = i, i, i+20, "an AWS access key id"
	}
	return start, end, what, best >= 0
}

// awsKeyID returns the index of an AWS access key id (AKIA or ASIA and 16
// upper-case letters or digits), or -1.
func awsKeyID(s string) int {
	for _, p := range [...]string{"AKIA", "ASIA"} {
		from := 0
		for {
			i := strings.Index(s[from:], p)
			if i < 0 {
				break
			}
			i += from
			j := i + 4
			for j < len(s) && j < i+20 && (s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if j == i+20 {
				return i
			}
			from = i + 4
		}
	}
	return -1
}

func tokenLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			n++
			continue
		}
		break
	}
	return n
}
