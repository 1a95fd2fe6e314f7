package web

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Addresses the dialer refuses: cloud metadata services, which hand out
// credentials to whoever asks from inside the machine, and the link-local
// ranges they live in.
var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, …
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task credentials
		netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	}
	linkLocal = []netip.Prefix{
		netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("fe80::/10"),
	}
	// nat64 embeds an IPv4 address in its last four bytes (RFC 6052).
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
)

// RefusedError is returned when a connection would reach a metadata or
// link-local address.
type RefusedError struct{ IP netip.Addr }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: cloud metadata / link-local address", e.IP)
}

// refused reports whether ip must not be connected to.
func refused(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	for _, a := range metadataAddrs {
		if ip == a {
			return true
		}
	}
	for _, p := range linkLocal {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// guard is the dialer's ControlContext: it runs after name resolution and
// before connect, with the address about to be connected to.
func guard(_ context.Context, _, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("refused to connect to %q: not an IP address and port", address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("refused to connect to %q: not an IP address", host)
	}
	if refused(ip) {
		return &RefusedError{IP: ip.Unmap().WithZone("")}
	}
	return nil
}
