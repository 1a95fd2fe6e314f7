package permission

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// judgeURL judges the URL argument of a network tool. It returns the parsed
// URL, or nil when it cannot be parsed (the call is then opaque).
func (j *judge) judgeURL(arg, raw string) *url.URL {
	sp := risk.Span{End: len(raw)}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" && u.Scheme != "file" {
		j.opaque = true
		j.find(risk.Network, arg, sp, raw, "cannot be parsed as a URL, so where it goes cannot be known")
		return nil
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "http", "https":
	case "file":
		j.addPath(arg, sp, u.Path, false)
		return u
	default:
		j.find(risk.Credential, arg, sp, raw, "uses the "+quoteText(scheme)+" scheme; only http and https are expected, and others can reach internal services")
	}
	if u.User != nil {
		j.find(risk.Credential, arg, sp, raw, "carries a user name or password")
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	switch addr, ok := hostAddr(host); {
	case host == "metadata.google.internal" || host == "metadata" || host == "instance-data" ||
		ok && isMetadata(addr):
		j.find(risk.Credential, arg, sp, raw, "reaches a cloud metadata service ("+quoteText(host)+"), which hands out the machine's credentials")
	case ok && (addr.IsLoopback() || addr.IsUnspecified()) || host == "localhost" || strings.HasSuffix(host, ".localhost"):
		j.find(risk.Network, arg, sp, raw, "reaches this machine ("+quoteText(host)+"), whose local services may trust it")
	case ok && (addr.IsPrivate() || addr.IsLinkLocalUnicast()):
		j.find(risk.Network, arg, sp, raw, "reaches a private network address ("+quoteText(host)+")")
	}
	for k := range u.Query() {
		if secretName(k) {
			j.find(risk.Credential, arg, sp, raw, "carries a secret in its "+quoteText(k)+" parameter")
			break
		}
	}
	return u
}

// headers judges request headers: sending a credential is credential.
func (j *judge) headers(arg string, v any) {
	h, ok := v.(map[string]any)
	if !ok {
		return
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sortStrings(names)
	for _, k := range names {
		if secretName(k) {
			j.find(risk.Credential, arg, risk.Span{}, k, "is a header that sends a credential")
			return
		}
	}
}

// secretName reports whether a header or parameter name carries a secret.
func secretName(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "sig", "signature", "code", "key", "pass":
		return true
	}
	for _, w := range [...]string{"token", "secret", "password", "passwd", "api-key", "api_key", "apikey", "auth", "session", "credential", "access_key", "access-key"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// hostAddr parses host as an IP address, including the forms inet_aton
// accepts (2852039166, 0xA9FEA9FE, 0251.0376.0251.0376, 169.254.43518),
// because HTTP clients pass them to it and they all reach the same address.
func hostAddr(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), true
	}
	parts := strings.Split(host, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
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
	last := len(nums) - 1
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

var (
	linkLocal4 = netip.MustParsePrefix("169.254.0.0/16")
	alibabaMD  = netip.MustParseAddr("100.100.100.200")
	awsMD6     = netip.MustParseAddr("fd00:ec2::254")
)

// isMetadata reports whether addr serves cloud instance metadata: AWS, GCP,
// Azure, OpenStack and ECS use 169.254.0.0/16, Alibaba 100.100.100.200.
func isMetadata(a netip.Addr) bool {
	return linkLocal4.Contains(a) || a == alibabaMD || a == awsMD6
}
