package netrisk

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
)

// URLError says why a URL has no single normal form. Best, when not nil,
// is the URL normalised as far as it goes (scheme, host and port normal,
// dot segments resolved): enough to judge where it goes and to match deny
// rules, never enough to allow it.
type URLError struct {
	URL    string
	Reason string
	Best   *url.URL
}

func (e *URLError) Error() string { return fmt.Sprintf("%q %s", e.URL, e.Reason) }

// NormalizeURL returns the normal form of an http or https URL: the one
// form the PermissionEngine judges and matches rules against, and the one
// the http tools send, so that what is judged is what is sent. It
//
//   - lower-cases the scheme and the host, maps a Unicode host to ASCII with
//     the IDNA profile Go's HTTP client uses, drops a trailing dot, and
//     writes an IP address in its canonical form (0xA9FEA9FE and
//     [::ffff:169.254.169.254] become 169.254.169.254);
//   - drops the default port (80, 443) and leading zeros of a port;
//   - decodes percent-escapes of unreserved characters (%2e, %41, %7E) and
//     upper-cases the hex digits of the others, in the path and the query;
//   - removes dot segments as RFC 3986 §5.2.4 does, after that decoding, so
//     /a/%2e%2E/b is /b;
//   - drops the fragment, which is never sent.
//
// A URL whose path a server may still read as going up or sideways is
// refused with a *URLError: a segment that is dots once a server decodes
// escapes again (%252e%252e, %%32%65), treats a backslash as a slash (..\,
// ..%5c), cuts path parameters (..;/, Tomcat) or a NUL, folds Unicode
// (%ef%bc%8e is a fullwidth dot) or reads overlong UTF-8 (%c0%ae); and a
// segment of only dots that RFC 3986 keeps ("...", ". "), which Windows
// servers shorten. Such a URL has no single meaning, so no allow rule
// covers it and the tools do not send it.
//
// NormalizeURL(n.String()) gives n back for every n it returns.
func NormalizeURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &URLError{URL: raw, Reason: "cannot be parsed as a URL: " + unwrapURLErr(err)}
	}
	fail := func(reason string, best *url.URL) error { return &URLError{URL: raw, Reason: reason, Best: best} }
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fail("is not an http or https URL", nil)
	case u.Opaque != "":
		return nil, fail("has no // before its host", nil)
	case u.Host == "":
		return nil, fail("names no host", nil)
	}
	host, err := NormalHost(u.Hostname())
	if err != nil {
		return nil, fail(err.Error(), nil)
	}
	port, err := normalPort(u.Scheme, u.Port())
	if err != nil {
		return nil, fail(err.Error(), nil)
	}
	hp := host
	if strings.IndexByte(host, ':') >= 0 {
		hp = "[" + host + "]" // url.URL keeps the zone decoded
	}
	if port != "" {
		hp += ":" + port
	}
	u.Host = hp
	u.Fragment, u.RawFragment = "", ""

	p := removeDotSegments(NormalEscapes(u.EscapedPath()))
	if p == "" {
		p = "/"
	}
	if err := setPath(u, p); err != nil {
		return nil, fail(err.Error(), nil)
	}
	if u.RawQuery != "" {
		u.RawQuery = NormalEscapes(u.RawQuery)
	}
	if reason := ambiguousPath(p); reason != "" {
		return nil, fail(reason, u)
	}
	return u, nil
}

// NormalHost returns a host name or address in normal form: lower case,
// ASCII (IDNA, as Go's HTTP client maps it), no trailing dot; an address
// in canonical form, the inet_aton spellings included; an IPv6 address
// without brackets.
func NormalHost(h string) (string, error) {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "" {
		return "", fmt.Errorf("names no host")
	}
	if strings.IndexByte(h, ':') >= 0 {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return "", fmt.Errorf("has a host %q that is not an IPv6 address", h)
		}
		return a.Unmap().String(), nil
	}
	if !isASCII(h) {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("has a host %q that IDNA cannot map to ASCII: %v", h, err)
		}
		h = a
	}
	h = strings.ToLower(h)
	if strings.HasSuffix(h, ".") && !strings.HasSuffix(h, "..") {
		h = h[:len(h)-1]
	}
	if h == "" || strings.HasPrefix(h, ".") || strings.Contains(h, "..") {
		return "", fmt.Errorf("has a host %q with an empty label", h)
	}
	if a, ok := HostAddr(h); ok {
		return a.String(), nil
	}
	return h, nil
}

func normalPort(scheme, port string) (string, error) {
	if port == "" {
		return "", nil
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", fmt.Errorf("has a port %q that is not a number from 0 to 65535", port)
	}
	if scheme == "http" && n == 80 || scheme == "https" && n == 443 {
		return "", nil
	}
	return strconv.FormatUint(n, 10), nil
}

// DefaultPort returns the port a URL of the scheme connects to when it
// names none.
func DefaultPort(scheme string) string {
	if strings.EqualFold(scheme, "https") {
		return "443"
	}
	return "80"
}

// setPath makes p (escaped) the path u sends, and checks that it does.
func setPath(u *url.URL, p string) error {
	d, err := url.PathUnescape(p)
	if err != nil {
		return fmt.Errorf("has a path that cannot be decoded: %v", err)
	}
	u.Path, u.RawPath = d, p
	if u.EscapedPath() != p {
		u.RawPath = ""
		if u.EscapedPath() != p {
			return fmt.Errorf("has a path %q that cannot be sent as it is", p)
		}
	}
	return nil
}

func unwrapURLErr(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// NormalEscapes decodes the percent-escapes of unreserved characters
// (RFC 3986 §2.3) and upper-cases the hex digits of the others. A '%' not
// followed by two hex digits is left as it is.
func NormalEscapes(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			c := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(c) {
				b.WriteByte(c)
			} else {
				b.WriteByte('%')
				b.WriteByte(upper(s[i+1]))
				b.WriteByte(upper(s[i+2]))
			}
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeDotSegments is RFC 3986 §5.2.4 over an escaped path whose
// unreserved escapes are decoded (so "%2E" is already ".").
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	abs := strings.HasPrefix(p, "/")
	segs := strings.Split(p, "/")
	if abs {
		segs = segs[1:]
	}
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if abs {
		r = "/" + r
	}
	return r
}

// ambiguousPath returns why a normal path (dot segments removed) may still
// be read by some server as holding dot segments, or "". Level n is the
// path decoded n times: a server decodes it once, and some (a proxy in
// front of an application, CVE-2021-42013) twice or more.
func ambiguousPath(p string) string {
	v := p
	for level := 0; level < 5; level++ {
		if r := dotLike(v); r != "" {
			switch level {
			case 0:
				return "has a path segment " + r
			case 1:
				return "has a path segment that, once a server decodes it, is " + r
			case 2:
				return "has a path segment that, once a server decodes it twice, is " + r
			}
			return "has a path segment that, once a server decodes it " + strconv.Itoa(level) + " times, is " + r
		}
		d := decodeAll(v)
		if d == v {
			return ""
		}
		v = d
	}
	return "has a path encoded more than four times over"
}

// dotLike checks a path as lenient servers read it: a backslash is a
// slash, Unicode is folded (NFKC: "．" and "‥" are dots), a segment ends at
// ';' (path parameters) or NUL, blanks around it are trimmed, and overlong
// UTF-8 is an old way to spell '.' and '/'. It reports a segment that is
// then only dots.
func dotLike(v string) string {
	if overlongUTF8(v) {
		return "overlong UTF-8, which some servers decode to . or /"
	}
	s := v
	if !isASCII(s) && utf8.ValidString(s) {
		s = norm.NFKC.String(s)
	}
	s = strings.ReplaceAll(s, `\`, "/")
	for _, seg := range strings.Split(s, "/") {
		raw := seg
		if i := strings.IndexAny(seg, ";\x00"); i >= 0 {
			seg = seg[:i]
		}
		seg = strings.Trim(seg, " \t")
		if seg != "" && strings.Trim(seg, ".") == "" {
			if raw == seg {
				return fmt.Sprintf("%q, which servers read as a dot segment", seg)
			}
			return fmt.Sprintf("%q, which servers may read as %q", raw, seg)
		}
	}
	return ""
}

// overlongUTF8 reports a byte sequence that overlong UTF-8 uses: C0 or C1
// as a lead byte, E0 followed by less than A0, F0 followed by less than 90.
func overlongUTF8(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 0xC0 || c == 0xC1:
			return true
		case c == 0xE0 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] < 0xA0:
			return true
		case c == 0xF0 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] < 0x90:
			return true
		}
	}
	return false
}

// decodeAll decodes every valid percent-escape; others stay as they are.
func decodeAll(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}
