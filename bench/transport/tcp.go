//go:build linux

package transport

import (
	"context"
	"io"
	"net"
	"net/netip"
)

func init() { register(tcpTransport{}) }

type tcpTransport struct{}

func (tcpTransport) Name() string     { return "tcp" }
func (tcpTransport) Available() error { return nil }

func (tcpTransport) Support(o Options) (bool, string) {
	if o.Crypto {
		return false, "n/a: plain TCP has no encryption; it is the crypto-off baseline of ktls"
	}
	return true, "plain TCP" + tcpSupport(o)
}

// tcpListener serves TCP streams, one connection each.
type tcpListener struct{ ln *net.TCPListener }

func (tcpTransport) Listen(_ context.Context, addr netip.AddrPort, o Options) (Listener, error) {
	ln, err := listenTCP(addr.String(), o)
	if err != nil {
		return nil, err
	}
	return &tcpListener{ln}, nil
}

func (l *tcpListener) Accept(ctx context.Context) (io.ReadWriteCloser, error) {
	stop := context.AfterFunc(ctx, func() { l.ln.Close() })
	defer stop()
	return l.ln.AcceptTCP()
}

func (l *tcpListener) Addr() netip.AddrPort { return l.ln.Addr().(*net.TCPAddr).AddrPort() }
func (l *tcpListener) Close() error         { return l.ln.Close() }

type tcpDialer struct {
	addr netip.AddrPort
	nd   *net.Dialer
}

func (tcpTransport) Dial(_ context.Context, addr netip.AddrPort, o Options) (Dialer, error) {
	return &tcpDialer{addr, tcpNetDialer(o)}, nil
}

func (d *tcpDialer) Open(ctx context.Context) (io.ReadWriteCloser, error) {
	return d.nd.DialContext(ctx, "tcp", d.addr.String())
}

func (d *tcpDialer) Close() error { return nil }
