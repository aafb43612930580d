//go:build !linux

package ktls_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"kquic.dev/ktls"
)

// TestNotSupportedOffLinux: off Linux Client, Server and Dial fail with an
// error matching ErrNotSupported and ErrNoKernelTLS, and Client and Server
// close the connection they were given, as on Linux.
func TestNotSupportedOffLinux(t *testing.T) {
	ctx := context.Background()
	cfg := &ktls.Config{TLS: &tls.Config{ServerName: "example.net"}, Fallback: true}
	check := func(name string, c *ktls.Conn, err error) {
		t.Helper()
		if c != nil || !errors.Is(err, ktls.ErrNotSupported) || !errors.Is(err, ktls.ErrNoKernelTLS) {
			t.Errorf("%s = %v, %v; want nil and an error matching ErrNotSupported and ErrNoKernelTLS", name, c, err)
		}
	}
	for name, f := range map[string]func(context.Context, net.Conn, *ktls.Config) (*ktls.Conn, error){"Client": ktls.Client, "Server": ktls.Server} {
		a, b := net.Pipe()
		c, err := f(ctx, a, cfg)
		check(name, c, err)
		if err := a.SetDeadline(time.Time{}); !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("%s did not close the connection", name)
		}
		b.Close()
	}
	c, err := ktls.Dial(ctx, "tcp", "127.0.0.1:1", cfg)
	check("Dial", c, err)
}
