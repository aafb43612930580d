package web

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Client is the client side of one transport: fresh connections to one
// server, each a RoundTripper. Fill one by hand to run the workloads over
// any RoundTripper (this project's HTTP/3 over quicnet, say).
type Client struct {
	// Name names the transport in results ("h2/crypto/tls", ...).
	Name string
	// URL is the server's base URL ("https://host:port").
	URL string
	// New returns a RoundTripper holding no connection yet: its first
	// request opens one, resuming a TLS session from cache when cache is
	// not nil and holds one. All its requests go over that one connection.
	New func(cache tls.ClientSessionCache) (http.RoundTripper, error)
	// Settings are the client end's, Server the server end's (the caller
	// copies them from Server.Settings).
	Settings, Server Settings
	// EarlyMethod is the request method that sends a GET in 0-RTT
	// (quic-go's http3.MethodGet0RTT); "" when the transport has none, and
	// NoEarlyData says why.
	EarlyMethod string
	NoEarlyData string
	// NoResumption, when not "", says why sessions are not resumed.
	NoResumption string
}

func (c *Client) check() error {
	if c == nil || c.New == nil || c.URL == "" {
		return errors.New("web: the Client needs New and URL")
	}
	if !strings.HasPrefix(c.URL, "https://") && !strings.HasPrefix(c.URL, "http://") {
		return fmt.Errorf("web: client URL %q: want https://host:port", c.URL)
	}
	return nil
}

// Used0RTT is implemented by RoundTrippers that can tell whether their
// connection's handshake carried 0-RTT data the server accepted.
type Used0RTT interface {
	Used0RTT() bool
}

// UDPRcvBuf is implemented by RoundTrippers over UDP: the SO_RCVBUF of
// their socket, as the kernel reports it (0 before the first request).
type UDPRcvBuf interface {
	UDPRcvBufGranted() int
}

// closeRT releases a RoundTripper's connections.
func closeRT(rt http.RoundTripper) error {
	if c, ok := rt.(io.Closer); ok {
		return c.Close()
	}
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	return nil
}
