//go:build linux

package transport

import (
	"context"
	"io"
	"net/netip"
	"time"

	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

func init() { register(kernelQUIC{}) }

type kernelQUIC struct{}

func (kernelQUIC) Name() string     { return "kquic" }
func (kernelQUIC) Available() error { return kmod.Probe(kmod.FeatureQUIC) }

func (kernelQUIC) Support(o Options) (bool, string) {
	what := "kernel QUIC (lxin/quic) through kquic"
	if !o.Crypto {
		what = "kernel QUIC with disable_1rtt_encryption on both ends"
	}
	if !o.GSO {
		// The module sends one datagram per packet either way: only the
		// devices' flags differ, so the row is a control of what they
		// cost by themselves.
		what += "; it uses no UDP GSO, so only the devices' offloads are off (a control)"
	}
	switch o.CC {
	case "", "reno", "cubic":
		if o.CC != "" {
			what += "; congestion control " + o.CC + " (the module's config)"
		}
	default:
		return false, "n/a: the QUIC module has reno and cubic, not " + o.CC
	}
	if o.UDPRcvBuf > 0 {
		what += "; --udp-rcvbuf does not apply (the module sizes its socket's buffer from max_data, net.quic.rmem)"
	}
	return true, what
}

// kquicCC maps a --cc name to the module's algorithm ("" is its default,
// Reno).
var kquicCC = map[string]kquic.CongestionControl{"": kquic.Reno, "reno": kquic.Reno, "cubic": kquic.Cubic}

func kquicConfig(o Options, server bool) (*kquic.Config, error) {
	stls, ctls, err := tlsConfigs(alpnBench, o)
	if err != nil {
		return nil, err
	}
	c := &kquic.Config{
		TLS:               ctls,
		CongestionControl: kquicCC[o.CC],
		// Under loss the module's handshake needs longer than kquic's
		// default 10s now and then: at 30% loss each way 3 of 10 dials
		// failed within 10s (the successes took 0.1-5.3s; quic-go's ten
		// all within 1.1s), and one in about ten under lossy-5.
		HandshakeTimeout: 30 * time.Second,
		Transport: kquic.TransportParameters{
			MaxIdleTimeout:        60 * time.Second,
			MaxStreamsBidi:        1024,
			Disable1RTTEncryption: !o.Crypto,
		},
		StreamDataNoDelay: o.NoDelay,
	}
	if w := uint64(o.Window); w > 0 {
		c.Transport.MaxStreamDataBidiLocal, c.Transport.MaxStreamDataBidiRemote, c.Transport.MaxStreamDataUni = w, w, w
		c.Transport.MaxData = w
	}
	if server {
		c.TLS = stls
	}
	return c, nil
}

type kquicListener struct {
	ln  *kquic.Listener
	hub *hub
}

func (kernelQUIC) Listen(ctx context.Context, addr netip.AddrPort, o Options) (Listener, error) {
	cfg, err := kquicConfig(o, true)
	if err != nil {
		return nil, err
	}
	ln, err := kquic.Listen("udp", addr.String(), cfg)
	if err != nil {
		return nil, err
	}
	l := &kquicListener{ln: ln}
	l.hub = newHub(func(ctx context.Context) (func(context.Context) (io.ReadWriteCloser, error), io.Closer, error) {
		c, err := ln.Accept(ctx)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context) (io.ReadWriteCloser, error) { return c.AcceptStream(ctx) }, c, nil
	})
	return l, nil
}

// Accept returns the next stream of any accepted connection.
func (l *kquicListener) Accept(ctx context.Context) (io.ReadWriteCloser, error) {
	return l.hub.accept(ctx)
}

func (l *kquicListener) Addr() netip.AddrPort { return l.ln.AddrPort() }
func (l *kquicListener) Close() error         { return l.hub.close(l.ln.Close) }

type kquicDialer struct{ conn *kquic.Conn }

func (kernelQUIC) Dial(ctx context.Context, addr netip.AddrPort, o Options) (Dialer, error) {
	cfg, err := kquicConfig(o, false)
	if err != nil {
		return nil, err
	}
	c, err := kquic.DialAddr(ctx, addr, cfg)
	if err != nil {
		return nil, err
	}
	return &kquicDialer{c}, nil
}

func (d *kquicDialer) Open(ctx context.Context) (io.ReadWriteCloser, error) {
	return d.conn.OpenStreamSync(ctx)
}

func (d *kquicDialer) Close() error { return d.conn.Close() }
