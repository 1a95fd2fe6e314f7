// Package netrisk holds the judgements about network destinations and data
// sent away that both the engine (http_get, http_post) and the shell
// analyser (curl, wget) make: cloud metadata addresses in all their
// spellings, and secrets with a vendor's prefix in URLs, headers and
// bodies. One table, so a curl command is judged as the http_get tool
// would judge the same URL. It is pure.
package netrisk

import (
	"net/netip"
	"strconv"
	"strings"
)

// HostAddr parses host as an IP address, including the forms inet_aton
// accepts (2852039166, 0xA9FEA9FE, 0251.0376.0251.0376, 169.254.43518),
// because HTTP clients pass them to it and they all reach the same address.
// Square brackets around an IPv6 address are removed.
func HostAddr(host string) (netip.Addr, bool) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if last := host[strings.LastIndexByte(host, '.')+1:]; strings.IndexByte(host, ':') < 0 && (last == "" || last[0] < '0' || last[0] > '9') {
		// A name: every part of an address, in each of its spellings,
		// starts with a digit. Said early, without the failed parses
		// and their errors.
		return netip.Addr{}, false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), true
	}
	parts := strings.Split(host, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums [4]uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			// ParseUint with base 0 wants 0o for octal; inet_aton takes 0.
			if len(p) > 1 && p[0] == '0' && p[1] != 'x' && p[1] != 'X' {
				n, err = strconv.ParseUint(p[1:], 8, 32)
			}
			if err != nil {
				return netip.Addr{}, false
			}
		}
		nums[i] = n
	}
	var v uint64
	last := len(parts) - 1
	for i := 0; i < last; i++ {
		if nums[i] > 255 {
			return netip.Addr{}, false
		}
		v |= nums[i] << (24 - 8*uint(i))
	}
	if nums[last] >= 1<<(8*uint(4-last)) {
		return netip.Addr{}, false
	}
	v |= nums[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// secretMarkers are fixed strings that only appear in secret material.
var secretMarkers = [...]struct{ marker, what string }{
	{"PRIVATE KEY-----", "a private key"},
	{"PRIVATE KEY BLOCK-----", "a private key"},
	{"aws_secret_access_key", "an AWS secret key"},
	{"aws_session_token", "an AWS session token"},
	{"ghp_", "a GitHub token"},
	{"gho_", "a GitHub token"},
	{"ghs_", "a GitHub token"},
	{"ghu_", "a GitHub token"},
	{"ghr_", "a GitHub token"},
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

// FindSecret returns the span and kind of the first secret-looking string
// in s: key material, or a token with a vendor's prefix followed by enough
// token characters to be one, or an AWS access key id. It errs on the side
// of finding: a false find only means the user is asked or must allow the
// call by rule.
func FindSecret(s string) (start, end int, what string, ok bool) {
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
