package permission

import (
	"errors"
	"net/url"
	"strings"

	"github.com/custom-agent/custom-agent/permission/netrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// judgeURL judges the URL argument of a network tool. It returns the URL
// that rules are matched against: for http and https its normal form
// (netrisk.NormalizeURL), which is also the form the http tools send, so
// what is judged is what is sent. It returns nil when the URL cannot be
// parsed (the call is then opaque). A URL without a single normal form
// (a path that some server reads as holding dot segments) is opaque too:
// the best normal form it has is returned, so that deny and ask rules
// still match its host, but no allow rule covers it.
func (j *judge) judgeURL(arg, raw string) *url.URL {
	sp := risk.Span{End: len(raw)}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" && u.Scheme != "file" {
		j.opaque = true
		j.find(risk.Network, arg, sp, raw, "cannot be parsed as a URL, so where it goes cannot be known")
		return nil
	}
	j.urlSecrets(arg, raw)
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "http", "https":
		n, err := netrisk.NormalizeURL(raw)
		var ue *netrisk.URLError
		switch {
		case err == nil:
			u = n
		case errors.As(err, &ue):
			j.opaque = true
			j.find(risk.Network, arg, sp, raw, ue.Reason+", so it has no single meaning: no allow rule covers it, and the http tools refuse to send it")
			if ue.Best != nil {
				u = ue.Best
			}
		}
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
	addr, ok := netrisk.HostAddr(host)
	wild := netrisk.WildcardAddrs(host)
	switch {
	case netrisk.MetadataHost(host):
		j.find(risk.Credential, arg, sp, raw, "reaches a cloud metadata service ("+quoteText(host)+"), which hands out the machine's credentials")
	case ok && (addr.IsLoopback() || addr.IsUnspecified()) || host == "localhost" || strings.HasSuffix(host, ".localhost"):
		j.find(risk.Network, arg, sp, raw, "reaches this machine ("+quoteText(host)+"), whose local services may trust it")
	case ok && (addr.IsPrivate() || addr.IsLinkLocalUnicast()):
		j.find(risk.Network, arg, sp, raw, "reaches a private network address ("+quoteText(host)+")")
	case len(wild) > 0:
		for _, a := range wild {
			if a.IsLoopback() || a.IsUnspecified() || a.IsPrivate() || a.IsLinkLocalUnicast() {
				j.find(risk.Network, arg, sp, raw, quoteText(host)+" is a wildcard DNS name that resolves to "+a.String()+", a local or private address")
				break
			}
		}
	}
	for k := range u.Query() {
		if secretName(k) {
			j.find(risk.Credential, arg, sp, raw, "carries a secret in its "+quoteText(k)+" parameter")
			break
		}
	}
	return u
}

// urlSecrets finds a secret written in a URL, as is or percent-decoded:
// it leaves the machine with the request, and unlike a body it also ends
// up in logs, proxies, Referer headers and redirects. An allow rule
// loosens it only when its URL matcher names a path on the host
// (judge.urlSecret; see namesCall).
func (j *judge) urlSecrets(arg, raw string) {
	s := raw
	if strings.IndexByte(raw, '%') >= 0 {
		if d, err := url.QueryUnescape(strings.ReplaceAll(raw, "+", "%2B")); err == nil {
			s = d
		}
	}
	if _, _, what, found := findSecret(s); found {
		j.urlSecret = true
		j.find(risk.Credential, arg, risk.Span{End: len(raw)}, raw, "carries "+what+", which would leave the machine")
	}
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
	for _, k := range names {
		v, _ := h[k].(string)
		if _, _, what, found := findSecret(v); found {
			j.find(risk.Credential, arg, risk.Span{}, k, "is a header whose value carries "+what+", which would leave the machine")
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
