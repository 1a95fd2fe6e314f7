package netrisk

import (
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Cloud instance metadata services hand out the machine's credentials to
// whoever asks from inside it. Their addresses, in every cloud we know of:
var (
	// linkLocal4 holds AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean,
	// Hetzner, IBM, Huawei (169.254.169.254), AWS ECS (169.254.170.2),
	// EKS Pod Identity (169.254.170.23) and Tencent (169.254.0.23).
	linkLocal4 = netip.MustParsePrefix("169.254.0.0/16")
	// linkLocal6 is fe80::/10, where nothing but the local link answers.
	linkLocal6     = netip.MustParsePrefix("fe80::/10")
	metadataAddrs4 = [...]netip.Addr{
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud (Classic)
		netip.MustParseAddr("168.63.129.16"),   // Azure WireServer (the guest agent's certificates and extension settings)
	}
	metadataAddrs6 = [...]netip.Addr{
		netip.MustParseAddr("fd00:ec2::254"), // AWS IMDS over IPv6
		netip.MustParseAddr("fd00:ec2::23"),  // AWS EKS Pod Identity over IPv6
		netip.MustParseAddr("fd20:ce::254"),  // GCP metadata over IPv6
	}
	// IPv6 prefixes whose last four bytes are an IPv4 address the packet
	// reaches: NAT64 (RFC 6052, RFC 8215) and IPv4-compatible addresses.
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	compat4    = netip.MustParsePrefix("::/96")
)

// metadataNames are the host names of metadata services (lower case, no
// trailing dot). "metadata" and "instance-data" are the short names a
// resolver's search domain completes (GCP's metadata.google.internal, AWS's
// instance-data.ec2.internal).
var metadataNames = map[string]bool{
	"metadata":                     true,
	"metadata.google.internal":     true,
	"instance-data":                true,
	"instance-data.ec2.internal":   true,
	"metadata.azure.internal":      true,
	"metadata.tencentyun.com":      true, // Tencent Cloud
	"metadata.packet.net":          true, // Equinix Metal (Packet)
	"metadata.platformequinix.com": true, // Equinix Metal
	"rancher-metadata":             true, // Rancher
}

// Embedded4 returns the IPv4 address an IPv6 address carries to its
// destination (IPv4-mapped, NAT64, IPv4-compatible), or a itself.
func Embedded4(a netip.Addr) netip.Addr {
	a = a.WithZone("").Unmap()
	if a.Is6() && (nat64.Contains(a) || nat64Local.Contains(a) || compat4.Contains(a) && a.As16()[12] != 0) {
		b := a.As16()
		return netip.AddrFrom4([4]byte(b[12:]))
	}
	return a
}

// IsMetadata reports whether a serves cloud instance metadata, or is a
// link-local address such a service may live at, in any IPv6 spelling
// that reaches it.
func IsMetadata(a netip.Addr) bool {
	a = Embedded4(a)
	if a.Is4() {
		if linkLocal4.Contains(a) {
			return true
		}
		for _, m := range metadataAddrs4 {
			if a == m {
				return true
			}
		}
		return false
	}
	if linkLocal6.Contains(a) {
		return true
	}
	for _, m := range metadataAddrs6 {
		if a == m {
			return true
		}
	}
	return false
}

// MetadataHost reports whether a host name or address reaches a cloud
// metadata service: by address in any spelling, by a metadata service's
// name, or by a name that wildcard DNS resolves to such an address
// (169.254.169.254.nip.io, 169-254-169-254.sslip.io, a9fea9fe.nip.io,
// make-1.2.3.4-rebind-169.254.169.254-rr.1u.ms). Such names are judged
// whatever their domain: the services that answer them are many, and
// anyone can run one. The host may be in any case, with a trailing dot, in
// Unicode (it is mapped as the HTTP client maps it, so a fullwidth
// "ｍｅｔａｄａｔａ.google.internal" is caught) or in brackets.
func MetadataHost(host string) bool {
	for _, h := range hostForms(host) {
		if metadataNames[h] {
			return true
		}
		if a, ok := HostAddr(h); ok {
			if IsMetadata(a) {
				return true
			}
			continue
		}
		for _, a := range EmbeddedAddrs(h) {
			if IsMetadata(a) {
				return true
			}
		}
	}
	return false
}

// hostForms returns host lower-cased without brackets or a trailing dot,
// and, when it is not ASCII, the forms an IDNA mapping gives it: the strict
// one HTTP clients use, and a lenient one that also maps what strict
// rejects (circled digits), for resolvers that are less strict.
func hostForms(host string) []string {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
	forms := []string{h}
	if !isASCII(h) {
		for _, p := range [...]*idna.Profile{idna.Lookup, lenientIDNA} {
			if a, err := p.ToASCII(h); err == nil || a != "" {
				forms = append(forms, strings.TrimSuffix(strings.ToLower(a), "."))
			}
		}
	}
	return forms
}

var lenientIDNA = idna.New(idna.MapForLookup(), idna.StrictDomainName(false), idna.Transitional(true))

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// wildcardDomains are public DNS services that answer a name with the
// address written in it (nip.io, sslip.io, xip.io, traefik.me), or
// alternate between two (rbndr.us, 1u.ms: DNS rebinding). The names under
// localhostDomains always resolve to 127.0.0.1.
var (
	wildcardDomains  = [...]string{"nip.io", "sslip.io", "xip.io", "traefik.me", "rbndr.us", "1u.ms", "nip.direct", "xip.name"}
	localhostDomains = [...]string{"localtest.me", "lvh.me", "vcap.me", "lacolhost.com", "fuf.me"}
	loopback4        = netip.MustParseAddr("127.0.0.1")
)

// WildcardAddrs returns the addresses a name under a known wildcard or
// rebinding DNS service resolves to, judged from the name alone, or nil
// for any other name. It lets a name like 10.0.0.1.nip.io be judged as a
// private address.
func WildcardAddrs(host string) []netip.Addr {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	for _, d := range localhostDomains {
		if h == d || strings.HasSuffix(h, "."+d) {
			return []netip.Addr{loopback4}
		}
	}
	for _, d := range wildcardDomains {
		if strings.HasSuffix(h, "."+d) {
			return EmbeddedAddrs(strings.TrimSuffix(h, "."+d))
		}
	}
	return nil
}

// EmbeddedAddrs returns the IP addresses written inside a host name the
// ways wildcard DNS services read them: four decimal numbers joined by dots
// or dashes anywhere in the name ("app.10.0.0.1", "ip-10-0-0-1",
// "make-169.254.169.254-rebind"), a label or dash-separated part of eight
// hex digits ("a9fea9fe", "app-0a000001"), and an IPv6 address with dashes
// for colons ("fd00-ec2--254", "--1").
func EmbeddedAddrs(host string) []netip.Addr {
	var out []netip.Addr
	for i := 0; i < len(host); i++ {
		if isDigit(host[i]) && (i == 0 || !isDigit(host[i-1])) {
			if a, ok := dotted4(host[i:]); ok {
				out = append(out, a)
			}
		}
	}
	for _, label := range strings.Split(host, ".") {
		for _, part := range strings.Split(label, "-") {
			if len(part) == 8 {
				if n, err := strconv.ParseUint(part, 16, 32); err == nil {
					out = append(out, netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}))
				}
			}
		}
		if strings.Contains(label, "--") || strings.Count(label, "-") == 7 {
			if a, err := netip.ParseAddr(strings.ReplaceAll(label, "-", ":")); err == nil {
				out = append(out, a)
			}
		}
	}
	return out
}

// dotted4 parses four decimal numbers of up to three digits, each at most
// 255, joined by '.' or '-', at the start of s and not followed by a digit.
func dotted4(s string) (netip.Addr, bool) {
	var b [4]byte
	i := 0
	for k := 0; k < 4; k++ {
		if k > 0 {
			if i >= len(s) || s[i] != '.' && s[i] != '-' {
				return netip.Addr{}, false
			}
			i++
		}
		j := i
		for j < len(s) && j-i < 4 && isDigit(s[j]) {
			j++
		}
		if j == i || j-i > 3 {
			return netip.Addr{}, false
		}
		n, _ := strconv.Atoi(s[i:j])
		if n > 255 {
			return netip.Addr{}, false
		}
		b[k] = byte(n)
		i = j
	}
	if i < len(s) && isDigit(s[i]) {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(b), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
