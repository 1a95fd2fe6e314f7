package web

import (
	"context"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Connection limits of HTTPServer and LimitListener. A page holds a few
// event streams; MaxConns leaves room for many tabs while an idle or slow
// client cannot pile up connections without bound.
const (
	MaxConns          = 128
	ReadHeaderTimeout = 10 * time.Second
	IdleTimeout       = 60 * time.Second
)

// HTTPServer is the http.Server for the handler: headers must come within
// ReadHeaderTimeout, an idle keep-alive connection is closed after
// IdleTimeout, and Go's own answer to "OPTIONS *" is off, so that request
// too goes through the guard.
func HTTPServer(ctx context.Context, h http.Handler) *http.Server {
	return &http.Server{
		Handler:                      h,
		ReadHeaderTimeout:            ReadHeaderTimeout,
		IdleTimeout:                  IdleTimeout,
		DisableGeneralOptionsHandler: true,
		BaseContext:                  func(net.Listener) context.Context { return ctx },
	}
}

// LimitListener accepts at most MaxConns connections at once.
func LimitListener(ln net.Listener) net.Listener { return netutil.LimitListener(ln, MaxConns) }
