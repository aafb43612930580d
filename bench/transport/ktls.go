//go:build linux

package transport

import (
	"context"
	"io"
	"net"
	"net/netip"

	"kquic.dev/kmod"
	"kquic.dev/ktls"
)

func init() { register(kernelTLS{}) }

// kernelTLS is TLS over TCP with the records encrypted by the kernel.
type kernelTLS struct{}

func (kernelTLS) Name() string     { return "ktls" }
func (kernelTLS) Available() error { return kmod.Probe(kmod.FeatureTLS) }

func (kernelTLS) Support(o Options) (bool, string) {
	if !o.Crypto {
		return false, "n/a: ktls without encryption is plain TCP (see tcp)"
	}
	if !o.GSO {
		return true, "kernel TLS over TCP built without super-packets (packets of at most the MTU, one segment each)" + tcpSupport(o)
	}
	return true, "kernel TLS (TLS 1.3 AES-128-GCM) over TCP" + tcpSupport(o)
}

type ktlsListener struct {
	ln  *net.TCPListener
	cfg *ktls.Config
}

func (kernelTLS) Listen(_ context.Context, addr netip.AddrPort, o Options) (Listener, error) {
	stls, _, err := tlsConfigs(alpnBench, o)
	if err != nil {
		return nil, err
	}
	ln, err := listenTCP(addr.String(), o)
	if err != nil {
		return nil, err
	}
	return &ktlsListener{ln: ln, cfg: &ktls.Config{TLS: stls, ExpectNoPad: true}}, nil
}

func (l *ktlsListener) Accept(ctx context.Context) (io.ReadWriteCloser, error) {
	stop := context.AfterFunc(ctx, func() { l.ln.Close() })
	defer stop()
	c, err := l.ln.AcceptTCP()
	if err != nil {
		return nil, err
	}
	kc, err := ktls.Server(ctx, c, l.cfg)
	if err != nil {
		c.Close()
		return nil, err
	}
	return kc, nil
}

func (l *ktlsListener) Addr() netip.AddrPort { return l.ln.Addr().(*net.TCPAddr).AddrPort() }
func (l *ktlsListener) Close() error         { return l.ln.Close() }

type ktlsDialer struct {
	addr netip.AddrPort
	cfg  *ktls.Config
	nd   *net.Dialer
}

func (kernelTLS) Dial(_ context.Context, addr netip.AddrPort, o Options) (Dialer, error) {
	_, ctls, err := tlsConfigs(alpnBench, o)
	if err != nil {
		return nil, err
	}
	return &ktlsDialer{addr: addr, cfg: &ktls.Config{TLS: ctls, ExpectNoPad: true}, nd: tcpNetDialer(o)}, nil
}

func (d *ktlsDialer) Open(ctx context.Context) (io.ReadWriteCloser, error) {
	nc, err := d.nd.DialContext(ctx, "tcp", d.addr.String())
	if err != nil {
		return nil, err
	}
	return ktls.Client(ctx, nc, d.cfg)
}

func (d *ktlsDialer) Close() error { return nil }
