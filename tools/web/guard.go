package web

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/custom-agent/custom-agent/permission/netrisk"
)

// RefusedError is returned when a connection would reach a metadata or
// link-local address.
type RefusedError struct{ IP netip.Addr }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: cloud metadata / link-local address", e.IP)
}

// refused reports whether ip must not be connected to: a cloud metadata
// service of any cloud, or a link-local address, in any spelling that
// reaches one (IPv4-mapped, NAT64). It is the table the PermissionEngine
// judges URLs with (netrisk.IsMetadata), applied to the address a name
// resolved to.
func refused(ip netip.Addr) bool {
	return netrisk.IsMetadata(ip)
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
